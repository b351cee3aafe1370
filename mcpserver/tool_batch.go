package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/suggest"
)

// maxBatchOps bounds one batch call (a bigger load belongs in `memctl batch`).
const maxBatchOps = 100000

// BatchOp is one operation of a batch: "op" and that op's fields, exactly
// as diff_since returns them (rev and ts are accepted and ignored).
type BatchOp struct {
	Op            string          `json:"op" jsonschema:"put_node, del_node, put_edge, del_edge, put_kv, del_kv or add_rel"`
	Key           string          `json:"key,omitempty" jsonschema:"put_node, del_node: the node key; put_kv, del_kv: the entry key"`
	Type          string          `json:"type,omitempty" jsonschema:"put_node: the node type"`
	Payload       json.RawMessage `json:"payload,omitempty" jsonschema:"put_node, put_edge, put_kv: the JSON payload (required for put_kv)"`
	Src           string          `json:"src,omitempty" jsonschema:"put_edge, del_edge: source key"`
	Rel           string          `json:"rel,omitempty" jsonschema:"put_edge, del_edge: relation; add_rel: the new relation's name"`
	Dst           string          `json:"dst,omitempty" jsonschema:"put_edge, del_edge: destination key"`
	Weight        *float64        `json:"weight,omitempty" jsonschema:"put_edge: edge weight; add_rel: default weight"`
	Namespace     string          `json:"namespace,omitempty" jsonschema:"put_kv, del_kv: namespace"`
	Bidirectional bool            `json:"bidirectional,omitempty" jsonschema:"add_rel: engines also follow the relation backwards"`
	Inhibitory    bool            `json:"inhibitory,omitempty" jsonschema:"add_rel: engines subtract along the relation"`
	Role          string          `json:"role,omitempty" jsonschema:"add_rel: structure, usage, history or memory (default memory)"`
	ValidFrom     string          `json:"valid_from,omitempty" jsonschema:"put_node, put_kv: the fact holds from this RFC 3339 time on"`
	ValidUntil    string          `json:"valid_until,omitempty" jsonschema:"put_node, put_kv: the fact holds until this RFC 3339 time (exclusive)"`
	Scope         string          `json:"scope,omitempty" jsonschema:"provenance scope; put_kv, del_kv: the entry's scope (default: the batch's)"`
	RunID         string          `json:"run_id,omitempty"`
	TaskID        string          `json:"task_id,omitempty"`
	Rev           uint64          `json:"rev,omitempty" jsonschema:"ignored (diff_since output replays as is)"`
	TS            string          `json:"ts,omitempty" jsonschema:"ignored"`

	present map[string]bool // the fields the client sent
}

func (o *BatchOp) UnmarshalJSON(b []byte) error {
	type plain BatchOp
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*o = BatchOp(p)
	o.present = make(map[string]bool, len(m))
	for k := range m {
		o.present[k] = true
	}
	return nil
}

// batchRequired lists the fields each op must carry.
var batchRequired = map[string][]string{
	"put_node": {"key"},
	"del_node": {"key"},
	"put_edge": {"src", "rel", "dst"},
	"del_edge": {"src", "rel", "dst"},
	"put_kv":   {"scope", "namespace", "key", "payload"},
	"del_kv":   {"scope", "namespace", "key"},
	"add_rel":  {"rel"},
}

// BatchArgs: batch.
type BatchArgs struct {
	Ops []BatchOp `json:"ops" jsonschema:"the operations, applied in order as one revision"`
	ProvenanceArgs
}

// BatchResult is the answer of batch.
type BatchResult struct {
	Rev      uint64 `json:"rev" jsonschema:"the revision committed; 0 when nothing changed"`
	TS       string `json:"ts,omitempty"`
	Ops      int    `json:"ops" jsonschema:"number of operations applied"`
	Redacted int    `json:"redacted,omitempty" jsonschema:"secrets replaced by [REDACTED:kind] before storing (absent when none)"`
}

func (s *Server) batch(_ context.Context, a *BatchArgs) (BatchResult, error) {
	if len(a.Ops) > maxBatchOps {
		return BatchResult{}, invalidArg("%d operations: at most %d per batch", len(a.Ops), maxBatchOps)
	}
	weights := make([]float32, len(a.Ops))
	for i := range a.Ops {
		w, err := checkBatchOp(&a.Ops[i])
		if err != nil {
			return BatchResult{}, invalidArg("op %d: %v", i+1, err)
		}
		weights[i] = w
	}
	s.log.Debug("batch: applying", "ops", len(a.Ops))
	c, err := s.write(a.ProvenanceArgs, func(tx *lmdbstore.WriteTxn) error {
		for i, op := range a.Ops {
			if err := applyBatchOp(tx, op, weights[i]); err != nil {
				return fmt.Errorf("op %d (%s): %w", i+1, op.Op, err)
			}
		}
		return nil
	})
	if err != nil {
		return BatchResult{}, err
	}
	return BatchResult{Rev: c.Rev, TS: c.TS, Ops: len(a.Ops), Redacted: c.Redacted}, nil
}

// checkBatchOp validates one op before anything is written and returns its
// weight (0: absent).
func checkBatchOp(op *BatchOp) (float32, error) {
	fields, ok := opFields[op.Op]
	if !ok {
		names := make([]string, 0, len(opFields))
		for n := range opFields {
			names = append(names, n)
		}
		sort.Strings(names)
		if s := suggest.Nearest(op.Op, names); s != "" {
			return 0, fmt.Errorf("unknown op %q (did you mean %q?)", op.Op, s)
		}
		return 0, fmt.Errorf("unknown op %q (one of %v)", op.Op, names)
	}
	allowed := append([]string{"op", "rev", "ts"}, fields...)
	keys := make([]string, 0, len(op.present))
	for k := range op.present {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return 0, fmt.Errorf("field %q is not allowed in %s", k, op.Op)
		}
	}
	for _, k := range batchRequired[op.Op] {
		if !op.present[k] {
			return 0, fmt.Errorf("%s needs field %q", op.Op, k)
		}
	}
	if _, err := (ValidityArgs{op.ValidFrom, op.ValidUntil}).validity(); err != nil {
		return 0, err
	}
	if op.Op == "add_rel" && op.Role != "" {
		if _, err := roles.Parse(op.Role); err != nil {
			return 0, fmt.Errorf("role: %w", err)
		}
	}
	if op.Op != "put_kv" && string(op.Payload) == "null" {
		op.Payload = nil
	}
	return checkWeight(op.Weight)
}

func applyBatchOp(tx *lmdbstore.WriteTxn, op BatchOp, weight float32) error {
	switch op.Op {
	case "put_node":
		valid, _ := (ValidityArgs{op.ValidFrom, op.ValidUntil}).validity() // checked by checkBatchOp
		return tx.PutNode(lmdbstore.NodePut{Key: op.Key, Type: op.Type, Payload: op.Payload, Valid: valid, Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID})
	case "del_node":
		return tx.DeleteNode(op.Key)
	case "put_edge":
		return tx.PutEdge(lmdbstore.EdgePut{Src: op.Src, Rel: op.Rel, Dst: op.Dst, Weight: weight, Payload: op.Payload, Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID})
	case "del_edge":
		return tx.DeleteEdge(op.Src, op.Rel, op.Dst)
	case "put_kv":
		valid, _ := (ValidityArgs{op.ValidFrom, op.ValidUntil}).validity() // checked by checkBatchOp
		return tx.PutKV(lmdbstore.KVPut{Scope: op.Scope, Namespace: op.Namespace, Key: op.Key, Payload: op.Payload, Valid: valid, RunID: op.RunID, TaskID: op.TaskID})
	case "del_kv":
		return tx.DeleteKV(op.Scope, op.Namespace, op.Key)
	case "add_rel":
		if weight == 0 {
			weight = 1
		}
		role := roles.Memory
		if op.Role != "" {
			role, _ = roles.Parse(op.Role) // checked by checkBatchOp
		}
		_, err := tx.AddRelation(lmdbstore.Relation{Name: op.Rel, DefaultWeight: weight, Bidirectional: op.Bidirectional, Inhibitory: op.Inhibitory, Role: role})
		return err
	}
	return fmt.Errorf("unknown op %q", op.Op)
}
