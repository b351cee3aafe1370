package ops

// The log-operation format (SPEC.md §6.3 "diff-since", §6.4 batch input):
// one JSON object per logged operation, {"rev","ts","op", then exactly
// that op's fields in the order of opTable}. diff-since and history write
// it, batch reads it back (rev and ts accepted and ignored), so a history
// read through one surface replays through either.

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// opSpec is one row of the format: an op's name, its fields after rev, ts
// and op (in output order), and those batch input must carry.
type opSpec struct {
	name     string
	fields   []string
	required []string
}

// opTable is the format, one row per op. A new op is a row here, a case
// in LogOpOf and in Checked.Apply.
var opTable = []opSpec{
	{"put_node", []string{"key", "type", "payload", "valid_from", "valid_until", "scope", "run_id", "task_id"}, []string{"key"}},
	{"del_node", []string{"key", "scope", "run_id", "task_id"}, []string{"key"}},
	{"put_edge", []string{"src", "rel", "dst", "weight", "payload", "scope", "run_id", "task_id"}, []string{"src", "rel", "dst"}},
	{"del_edge", []string{"src", "rel", "dst", "scope", "run_id", "task_id"}, []string{"src", "rel", "dst"}},
	{"put_kv", []string{"scope", "namespace", "key", "payload", "valid_from", "valid_until", "run_id", "task_id"}, []string{"scope", "namespace", "key", "payload"}},
	{"del_kv", []string{"scope", "namespace", "key", "run_id", "task_id"}, []string{"scope", "namespace", "key"}},
	{"add_rel", []string{"rel", "weight", "bidirectional", "inhibitory", "role", "scope", "run_id", "task_id"}, []string{"rel"}},
}

// specOf is the row of op name.
func specOf(name string) (opSpec, bool) {
	for _, s := range opTable {
		if s.name == name {
			return s, true
		}
	}
	return opSpec{}, false
}

// OpNames are the op names, sorted.
func OpNames() []string {
	names := make([]string, len(opTable))
	for i, s := range opTable {
		names[i] = s.name
	}
	slices.Sort(names)
	return names
}

// LogOp is one logged operation. The struct lists the union of every op's
// fields (for the MCP schema); MarshalJSON writes exactly the fields of
// its op, in the order of opTable.
type LogOp struct {
	Rev           uint64          `json:"rev"`
	TS            string          `json:"ts"`
	Op            string          `json:"op" jsonschema:"put_node, del_node, put_edge, del_edge, put_kv, del_kv or add_rel"`
	Key           string          `json:"key,omitempty"`
	Type          string          `json:"type,omitempty"`
	Src           string          `json:"src,omitempty"`
	Rel           string          `json:"rel,omitempty"`
	Dst           string          `json:"dst,omitempty"`
	Weight        records.Weight  `json:"weight,omitempty"`
	Bidirectional bool            `json:"bidirectional,omitempty"`
	Inhibitory    bool            `json:"inhibitory,omitempty"`
	Role          string          `json:"role,omitempty" jsonschema:"add_rel: structure, usage, history or memory"`
	Namespace     string          `json:"namespace,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	ValidFrom     string          `json:"valid_from,omitempty" jsonschema:"put_node, put_kv: start of the valid time (only when set)"`
	ValidUntil    string          `json:"valid_until,omitempty" jsonschema:"put_node, put_kv: end of the valid time (only when set)"`
	Scope         string          `json:"scope,omitempty"`
	RunID         string          `json:"run_id,omitempty"`
	TaskID        string          `json:"task_id,omitempty"`
}

// LogOpOf is the record of logged op op; rel is the relation an add_rel op
// registered (its flags are not in the log and never change).
func LogOpOf(op lmdbstore.Op, rel lmdbstore.Relation) LogOp {
	rec := LogOp{
		Rev: uint64(op.Rev), TS: records.Time(op.TS), Op: op.Kind.String(),
		Src: op.Src, Rel: op.Rel, Dst: op.Dst, Weight: records.Weight(op.Weight),
		Namespace: op.Namespace, Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID,
		Bidirectional: rel.Bidirectional, Inhibitory: rel.Inhibitory,
		ValidFrom: records.Time(op.Valid.From), ValidUntil: records.Time(op.Valid.Until),
	}
	if op.Kind == lmdbstore.OpAddRel {
		rec.Role = rel.Role.String()
	}
	switch op.Kind {
	case lmdbstore.OpPutNode, lmdbstore.OpDelNode:
		rec.Key, rec.Type = op.NodeKey, op.NodeType
	default:
		rec.Key = op.Key
	}
	switch op.Kind {
	case lmdbstore.OpPutEdge:
		rec.Payload = records.OptionalPayload(op.Payload)
	case lmdbstore.OpPutNode, lmdbstore.OpPutKV:
		rec.Payload = records.JSONValue(op.Payload)
	}
	return rec
}

// field is the value of field name and whether to write it (open valid
// bounds and an edge without payload are left out).
func (o LogOp) field(name string) (any, bool) {
	switch name {
	case "key":
		return o.Key, true
	case "type":
		return o.Type, true
	case "src":
		return o.Src, true
	case "rel":
		return o.Rel, true
	case "dst":
		return o.Dst, true
	case "weight":
		return o.Weight, true
	case "bidirectional":
		return o.Bidirectional, true
	case "inhibitory":
		return o.Inhibitory, true
	case "role":
		return o.Role, true
	case "valid_from":
		return o.ValidFrom, o.ValidFrom != ""
	case "valid_until":
		return o.ValidUntil, o.ValidUntil != ""
	case "namespace":
		return o.Namespace, true
	case "payload":
		return o.Payload, o.Payload != nil
	case "scope":
		return o.Scope, true
	case "run_id":
		return o.RunID, true
	case "task_id":
		return o.TaskID, true
	}
	return nil, false
}

// MarshalJSON writes rev, ts, op, then exactly op's fields.
func (o LogOp) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(name string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		x, err := records.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(x)
		return nil
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"rev", o.Rev}, {"ts", o.TS}, {"op", o.Op}} {
		if err := write(f.name, f.v); err != nil {
			return nil, err
		}
	}
	spec, _ := specOf(o.Op)
	for _, name := range spec.fields {
		if v, ok := o.field(name); ok {
			if err := write(name, v); err != nil {
				return nil, err
			}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ErrStopScan, returned by a ScanLog callback, ends the scan without error.
var ErrStopScan = errors.New("stop scan")

// ScanLog calls fn for every operation committed after since that f
// selects, in commit order, with the relation an add_rel op registered
// (read now: the log records only its name and weight, and its flags never
// change). fn may return ErrStopScan to end the scan early.
func ScanLog(r *lmdbstore.ReadTxn, since lmdbstore.At, f lmdbstore.DiffFilter, fn func(lmdbstore.Op, lmdbstore.Relation) error) error {
	err := r.DiffSince(since, f, func(op lmdbstore.Op) error {
		var rel lmdbstore.Relation
		if op.Kind == lmdbstore.OpAddRel {
			var err error
			if rel, err = r.RelationByName(op.Rel); err != nil {
				return err
			}
		}
		return fn(op, rel)
	})
	if errors.Is(err, ErrStopScan) {
		return nil
	}
	return err
}

// CheckWeight is an optional weight as a float32: absent (nil) is 0 (the
// relation's default), otherwise finite, > 0 and within float32 range.
// what names the field in the message.
func CheckWeight(what string, w *float64) (float32, error) {
	if w == nil {
		return 0, nil
	}
	if math.IsNaN(*w) || math.IsInf(*w, 0) || *w <= 0 || *w > math.MaxFloat32 || float32(*w) == 0 {
		return 0, invalidf("%s must be a finite number > 0, got %v", what, *w)
	}
	return float32(*w), nil
}

// ParseTime reads an RFC 3339 time (nanoseconds allowed).
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, invalidf("%q is not an RFC 3339 time (e.g. 2006-01-02T15:04:05Z)", s)
	}
	return t, nil
}
