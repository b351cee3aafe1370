package mcpserver

import (
	"context"

	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
)

// maxBatchOps bounds one batch call (a bigger load belongs in `memctl batch`).
const maxBatchOps = 100000

// BatchOp is one operation of a batch (ops.BatchOp: the format diff_since
// returns, rev and ts accepted and ignored).
type BatchOp = ops.BatchOp

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
	checked := make([]ops.CheckedOp, len(a.Ops))
	for i, op := range a.Ops {
		c, err := op.Check()
		if err != nil {
			return BatchResult{}, invalidArg("op %d: %v", i+1, err)
		}
		checked[i] = c
	}
	s.log.Debug("batch: applying", "ops", len(a.Ops))
	c, err := ops.Batch(s.store, s.meta(a.ProvenanceArgs), checked)
	if err != nil {
		return BatchResult{}, err
	}
	rec := records.CommitOf(c)
	return BatchResult{Rev: rec.Rev, TS: rec.TS, Ops: len(a.Ops), Redacted: rec.Redacted}, nil
}
