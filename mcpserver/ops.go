package mcpserver

// Operations of the append log, as diff_since and history return them and
// as batch accepts them: the CLI's `diff-since --json` lines and `batch`
// input (SPEC.md §6.3, §6.4), so a history read through one interface can
// be replayed through the other.

import (
	"bytes"
	"encoding/json"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// opFields lists, per op, the fields after rev, ts and op, in order.
var opFields = map[string][]string{
	"put_node": {"key", "type", "payload", "valid_from", "valid_until", "scope", "run_id", "task_id"},
	"del_node": {"key", "scope", "run_id", "task_id"},
	"put_edge": {"src", "rel", "dst", "weight", "payload", "scope", "run_id", "task_id"},
	"del_edge": {"src", "rel", "dst", "scope", "run_id", "task_id"},
	"put_kv":   {"scope", "namespace", "key", "payload", "valid_from", "valid_until", "run_id", "task_id"},
	"del_kv":   {"scope", "namespace", "key", "run_id", "task_id"},
	"add_rel":  {"rel", "weight", "bidirectional", "inhibitory", "role", "scope", "run_id", "task_id"},
}

// OpRecord is one logged operation. The struct lists the union of every
// op's fields (for the schema); MarshalJSON writes exactly the fields of
// its op, in the order of opFields.
type OpRecord struct {
	Rev           uint64          `json:"rev"`
	TS            string          `json:"ts"`
	Op            string          `json:"op" jsonschema:"put_node, del_node, put_edge, del_edge, put_kv, del_kv or add_rel"`
	Key           string          `json:"key,omitempty"`
	Type          string          `json:"type,omitempty"`
	Src           string          `json:"src,omitempty"`
	Rel           string          `json:"rel,omitempty"`
	Dst           string          `json:"dst,omitempty"`
	Weight        Weight          `json:"weight,omitempty"`
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

// opRecord converts a logged op; rel is the relation an add_rel op
// registered (its flags are not in the log and never change).
func opRecord(op lmdbstore.Op, ts string, rel lmdbstore.Relation) OpRecord {
	rec := OpRecord{
		Rev: uint64(op.Rev), TS: ts, Op: op.Kind.String(),
		Src: op.Src, Rel: op.Rel, Dst: op.Dst, Weight: Weight(op.Weight),
		Namespace: op.Namespace, Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID,
		Bidirectional: rel.Bidirectional, Inhibitory: rel.Inhibitory,
	}
	rec.ValidFrom, rec.ValidUntil = records.Time(op.Valid.From), records.Time(op.Valid.Until)
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

// MarshalJSON writes rev, ts, op, then exactly op's fields.
func (o OpRecord) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	field := func(name string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		x, err := marshal(v)
		if err != nil {
			return err
		}
		b.Write(x)
		return nil
	}
	if err := field("rev", o.Rev); err != nil {
		return nil, err
	}
	if err := field("ts", o.TS); err != nil {
		return nil, err
	}
	if err := field("op", o.Op); err != nil {
		return nil, err
	}
	for _, name := range opFields[o.Op] {
		var v any
		switch name {
		case "key":
			v = o.Key
		case "type":
			v = o.Type
		case "src":
			v = o.Src
		case "rel":
			v = o.Rel
		case "dst":
			v = o.Dst
		case "weight":
			v = o.Weight
		case "bidirectional":
			v = o.Bidirectional
		case "inhibitory":
			v = o.Inhibitory
		case "role":
			v = o.Role
		case "valid_from", "valid_until":
			v = o.ValidFrom
			if name == "valid_until" {
				v = o.ValidUntil
			}
			if v == "" {
				continue // open: not written
			}
		case "namespace":
			v = o.Namespace
		case "payload":
			if o.Payload == nil {
				continue // an edge without payload
			}
			v = o.Payload
		case "scope":
			v = o.Scope
		case "run_id":
			v = o.RunID
		case "task_id":
			v = o.TaskID
		}
		if err := field(name, v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
