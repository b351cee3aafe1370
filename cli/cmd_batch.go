package cli

import (
	"errors"
	"fmt"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
	"github.com/urfave/cli/v2"
)

func batchCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "batch",
		Usage: "apply JSON Lines of operations from stdin as one transaction: all or nothing",
		Description: "One JSON object per line, with \"op\" one of put_node, del_node, put_edge,\n" +
			"del_edge, put_kv, del_kv, add_rel and that op's fields, exactly as diff-since\n" +
			"--json prints them (\"rev\" and \"ts\" are accepted and ignored), e.g.\n" +
			"  {\"op\":\"put_edge\",\"src\":\"file:a.go\",\"rel\":\"defines\",\"dst\":\"sym:a.F\",\"weight\":1}\n" +
			"Blank lines are skipped. Any bad line fails the whole batch, naming the line.\n" +
			"--scope/--run/--task apply to every operation that does not set its own.\n" +
			"--bulk, for large loads of put_node and put_edge only (other ops are refused):\n" +
			"into a store that has never held a node or an edge, every keyspace is built in\n" +
			"memory and appended in key order (much faster, full pages); otherwise the\n" +
			"operations run as an ordinary transaction. The result is the same either way.",
		Flags: append(writeFlags(true), &cli.BoolFlag{Name: "bulk", Usage: "bulk load (put_node and put_edge only)"}),
		Run:   runBatch,
	})
}

type batchJSON struct {
	Rev      uint64 `json:"rev"`
	TS       string `json:"ts,omitempty"`
	Ops      int    `json:"ops,omitempty"`      // omitted with rev 0: nothing committed (SPEC §6.3)
	Redacted int    `json:"redacted,omitempty"` // secrets replaced (SPEC §2)
}

func runBatch(k *call) error {
	if k.ctx.Bool("bulk") {
		return runBulkBatch(k)
	}
	batch, lines, err := ops.ParseBatch(k.stdin())
	if err != nil {
		return err
	}
	s, err := k.open(false)
	if err != nil {
		return err
	}
	c, err := ops.Batch(s, k.meta(), batch)
	return k.batchDone(c, len(batch), lines, err)
}

// runBulkBatch is batch --bulk: the store is opened first and the lines
// streamed into the load (ops.BulkBatch).
func runBulkBatch(k *call) error {
	s, err := k.open(false)
	if err != nil {
		return err
	}
	c, lines, err := ops.BulkBatch(s, k.meta(), k.stdin())
	var nb *ops.NotBulkableError
	if errors.As(err, &nb) {
		return usageErr("batch line %d: --bulk takes only put_node and put_edge, not %s", lines[nb.Index], nb.Op)
	}
	return k.batchDone(c, len(lines), lines, err)
}

// batchDone prints the commit of n ops, or the error naming its line.
func (k *call) batchDone(c lmdbstore.Commit, n int, lines []int, err error) error {
	var be *ops.BatchError
	if errors.As(err, &be) {
		return fmt.Errorf("batch line %d (%s): %w", lines[be.Index], be.Op, be.Err)
	}
	if err != nil {
		return err
	}
	if k.out.json {
		rec := batchJSON{Rev: uint64(c.Rev), Redacted: c.Redacted}
		if c.Rev != 0 {
			rec.TS, rec.Ops = records.Time(c.Time), n
		}
		return k.out.record(rec)
	}
	if c.Rev == 0 {
		return k.out.textf("rev 0 (no change)%s\n", redactedNote(c.Redacted))
	}
	return k.out.textf("rev %d (%d operations)%s\n", c.Rev, n, redactedNote(c.Redacted))
}
