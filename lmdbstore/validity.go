package lmdbstore

// Valid time (SPEC.md §2 record bodies, §4): besides the transaction time
// every version has (its revision and commit time), a node or kv entry may
// say when the fact it records holds in the world: [From, Until). Either
// bound may be open. Reads take a valid-at time; an item whose interval
// does not contain it is "expired" (or not yet valid) there.

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Validity is a valid-time interval [From, Until); a zero bound is open.
type Validity struct {
	From, Until time.Time
}

// IsZero reports whether both bounds are open (always valid).
func (v Validity) IsZero() bool { return v.From.IsZero() && v.Until.IsZero() }

// Contains reports whether t lies in [From, Until).
func (v Validity) Contains(t time.Time) bool {
	if !v.From.IsZero() && t.Before(v.From) {
		return false
	}
	return v.Until.IsZero() || t.Before(v.Until)
}

// NextChange is the first bound of v after t, where an item with this
// valid time turns valid or expired; zero when none lies after t.
func (v Validity) NextChange(t time.Time) time.Time {
	switch {
	case !v.From.IsZero() && t.Before(v.From):
		return v.From
	case !v.Until.IsZero() && t.Before(v.Until):
		return v.Until
	}
	return time.Time{}
}

// EarlierBound is the earlier of two bounds where zero means none (no
// end): zero only when both are.
func EarlierBound(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// Equal reports whether two intervals are the same (to the nanosecond).
func (v Validity) Equal(o Validity) bool {
	return v.From.Equal(o.From) && v.Until.Equal(o.Until) && v.From.IsZero() == o.From.IsZero() && v.Until.IsZero() == o.Until.IsZero()
}

// validity is the stored form: unix nanoseconds, presence flags.
type validity struct {
	from, until       int64
	hasFrom, hasUntil bool
}

// Valid times must be representable as int64 unix nanoseconds.
var (
	minValidTime = time.Unix(0, math.MinInt64+1).UTC()
	maxValidTime = time.Unix(0, math.MaxInt64).UTC()
)

// toValidity checks v and converts it to the stored form.
func toValidity(v Validity) (validity, error) {
	var out validity
	for _, b := range []struct {
		t    time.Time
		name string
		ns   *int64
		has  *bool
	}{{v.From, "valid_from", &out.from, &out.hasFrom}, {v.Until, "valid_until", &out.until, &out.hasUntil}} {
		if b.t.IsZero() {
			continue
		}
		if b.t.Before(minValidTime) || b.t.After(maxValidTime) {
			return validity{}, fmt.Errorf("%w: %s %s is outside the years 1678-2262", ErrInvalid, b.name, b.t.UTC().Format(time.RFC3339Nano))
		}
		*b.ns, *b.has = b.t.UnixNano(), true
	}
	if out.hasFrom && out.hasUntil && out.until <= out.from {
		return validity{}, fmt.Errorf("%w: valid_until %s is not after valid_from %s", ErrInvalid,
			v.Until.UTC().Format(time.RFC3339Nano), v.From.UTC().Format(time.RFC3339Nano))
	}
	return out, nil
}

func (v validity) api() Validity {
	var out Validity
	if v.hasFrom {
		out.From = time.Unix(0, v.from).UTC()
	}
	if v.hasUntil {
		out.Until = time.Unix(0, v.until).UTC()
	}
	return out
}

// flags are the record flag bits saying which bounds follow.
func (v validity) flags() byte {
	var f byte
	if v.hasFrom {
		f |= recValidFrom
	}
	if v.hasUntil {
		f |= recValidUntil
	}
	return f
}

// append writes the present bounds as zig-zag varints.
func (v validity) append(b []byte) []byte {
	if v.hasFrom {
		b = binary.AppendVarint(b, v.from)
	}
	if v.hasUntil {
		b = binary.AppendVarint(b, v.until)
	}
	return b
}

// decodeValidity reads the bounds the record flags announce.
func decodeValidity(d *decoder, flags byte) validity {
	var v validity
	if flags&recValidFrom != 0 {
		v.from, v.hasFrom = d.varint(), true
	}
	if flags&recValidUntil != 0 {
		v.until, v.hasUntil = d.varint(), true
	}
	if d.err == nil && v.hasFrom && v.hasUntil && v.until <= v.from {
		d.fail("valid_until not after valid_from")
	}
	return v
}

// logFlags are the validity flags of a log op (bit0 from, bit1 until).
func (v validity) logFlags() byte { return v.flags() >> 2 }

// appendLog writes a log op's validity: flags u8, then the present bounds.
func (v validity) appendLog(b []byte) []byte { return v.append(append(b, v.logFlags())) }

// decodeLogValidity reads what appendLog wrote.
func decodeLogValidity(d *decoder) validity {
	f := d.u8()
	if d.err == nil && (f == 0 || f&^3 != 0) {
		d.fail(fmt.Sprintf("bad validity flags %#x", f))
		return validity{}
	}
	return decodeValidity(d, f<<2)
}
