package mcpserver

import (
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// Valid time and supersession in tool arguments (SPEC.md §4, §10.2): the
// CLI's --valid-from/--valid-until on writes, --valid-at and
// --include-superseded/--include-expired on reads.

// ValidityArgs give a written node or kv entry its valid time.
type ValidityArgs struct {
	ValidFrom  string `json:"valid_from,omitempty" jsonschema:"the fact holds from this RFC 3339 time on (default: always)"`
	ValidUntil string `json:"valid_until,omitempty" jsonschema:"the fact holds until this RFC 3339 time, exclusive (default: forever)"`
}

func (v ValidityArgs) validity() (lmdbstore.Validity, error) {
	var out lmdbstore.Validity
	for _, b := range []struct {
		name, s string
		t       *time.Time
	}{{"valid_from", v.ValidFrom, &out.From}, {"valid_until", v.ValidUntil, &out.Until}} {
		if b.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, b.s)
		if err != nil {
			return out, invalidArg("%s %q is not an RFC 3339 time", b.name, b.s)
		}
		*b.t = t
	}
	return out, nil
}

// ValidAtArgs choose the valid time a read judges items at.
type ValidAtArgs struct {
	ValidAt string `json:"valid_at,omitempty" jsonschema:"judge validity (expired or not) at this RFC 3339 time (default: now)"`
}

func (v ValidAtArgs) validAt(now func() time.Time) (time.Time, error) {
	if v.ValidAt == "" {
		return now(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v.ValidAt)
	if err != nil {
		return time.Time{}, invalidArg("valid_at %q is not an RFC 3339 time", v.ValidAt)
	}
	return t, nil
}

// ListStatusArgs select which items a listing read shows: current ones
// unless included.
type ListStatusArgs struct {
	ValidAtArgs
	IncludeSuperseded bool `json:"include_superseded,omitempty" jsonschema:"also list items a newer item supersedes (history)"`
	IncludeExpired    bool `json:"include_expired,omitempty" jsonschema:"also list items not valid at valid_at"`
}

func (l ListStatusArgs) filter(now func() time.Time) (lmdbstore.StatusFilter, error) {
	t, err := l.validAt(now)
	if err != nil {
		return lmdbstore.StatusFilter{}, err
	}
	return lmdbstore.StatusFilter{ValidAt: t, IncludeSuperseded: l.IncludeSuperseded, IncludeExpired: l.IncludeExpired}, nil
}
