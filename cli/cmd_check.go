package cli

import (
	"fmt"

	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func checkCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "check",
		Usage: "verify every keyspace: encodings and invariants (exit 3 on any problem)",
		Description: "Prints every problem (integrity violations: exit 3), every warning (e.g.\n" +
			"tombstone accumulation) and every missing node (referenced by a live edge,\n" +
			"allowed), then a summary line.",
		Run: runCheck,
	})
}

type checkFindingJSON struct {
	Kind string `json:"kind"` // problem, warning, missing_node
	Msg  string `json:"msg,omitempty"`
	Key  string `json:"key,omitempty"`
}

type checkSummaryJSON struct {
	Kind         string `json:"kind"` // summary
	OK           bool   `json:"ok"`
	Problems     int    `json:"problems"`
	Warnings     int    `json:"warnings"`
	MissingNodes int    `json:"missing_nodes"`
}

func runCheck(k *call) error {
	s, err := k.open(true)
	if err != nil {
		return err
	}
	rep, err := ops.Check(s, -1)
	if err != nil {
		return err
	}
	o := k.out
	emit := func(kind, text string, rec checkFindingJSON) error {
		if o.json {
			return o.record(rec)
		}
		return o.textf("%s: %s\n", kind, textCell(text))
	}
	for _, p := range rep.Problems {
		if err := emit("problem", p, checkFindingJSON{Kind: "problem", Msg: p}); err != nil {
			return err
		}
	}
	for _, w := range rep.Warnings {
		if err := emit("warning", w, checkFindingJSON{Kind: "warning", Msg: w}); err != nil {
			return err
		}
	}
	for _, m := range rep.MissingNodesListed {
		if err := emit("missing node", m, checkFindingJSON{Kind: "missing_node", Key: m}); err != nil {
			return err
		}
	}
	sum := checkSummaryJSON{Kind: "summary", OK: rep.OK, Problems: len(rep.Problems),
		Warnings: len(rep.Warnings), MissingNodes: rep.MissingNodes}
	if o.json {
		err = o.record(sum)
	} else if sum.OK {
		err = o.textf("ok: no problems, %d warnings, %d missing nodes\n", sum.Warnings, sum.MissingNodes)
	} else {
		err = o.textf("FAILED: %d problems, %d warnings, %d missing nodes\n", sum.Problems, sum.Warnings, sum.MissingNodes)
	}
	if err != nil {
		return err
	}
	if !sum.OK {
		// The findings are the point of check: print them, then fail.
		if err := o.flush(); err != nil {
			return err
		}
		return withCode(ExitCorrupt, fmt.Errorf("check: %d integrity problems in %s", sum.Problems, k.dbPath()))
	}
	return nil
}
