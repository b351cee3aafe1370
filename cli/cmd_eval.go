package cli

// The eval commands measure answer quality on a code tree (SPEC §11). They
// never touch the --db store: everything is built in a temporary one.

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/memctl/memctl/eval"
	"github.com/memctl/memctl/ingest"
	"github.com/urfave/cli/v2"
)

func evalCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "measure how well memory answers on real code and its history (eval impact DIR, eval cochange DIR)",
		Subcommands: []*cli.Command{
			verbCommand(env, verbSpec{
				Name:  "impact",
				Usage: "score impact on the tree DIR: share of its top k that are the symbol's direct dependents",
				Description: "Ingests DIR (as ingest code) into a temporary store, exports it, and for every\n" +
					"symbol with at least --min-dependents direct dependents (k of them) reports the\n" +
					"share of impact's top k that are direct dependents, with bootstrap 95 % intervals.\n" +
					"With --scip the dependents come from a SCIP index of DIR; without, from the graph\n" +
					"scored itself (self-referential). SPEC.md §11.",
				Args: []string{"DIR"},
				Flags: append(walkFlags(),
					&cli.IntFlag{Name: "min-dependents", Value: eval.DefaultMinDependents, Usage: "score symbols with at least `N` direct usage dependents"},
					&cli.StringFlag{Name: "scip", Usage: "take each symbol's dependents from the SCIP `INDEX` of DIR (scip-go, scip-python, scip-typescript, …)"},
					preciseFlags()[0], preciseFlags()[1]),
				Run: runEvalImpact,
			}),
			evalCochangeCommand(env),
			evalGraphCommand(env),
		},
	}
}

// evalImpactJSON is the --json line of `eval impact`.
type evalImpactJSON struct {
	Eval          string  `json:"eval"`
	Dir           string  `json:"dir"`
	Symbols       int     `json:"symbols"`
	MinDependents int     `json:"min_dependents"`
	Precision     float64 `json:"precision"`
	Min           float64 `json:"min"`
	Perfect       int     `json:"perfect"`
	Worst         string  `json:"worst"`
	Activate      float64 `json:"activate"`
	Nodes         int     `json:"nodes"`
	Edges         int     `json:"edges"`
	Seconds       float64 `json:"seconds"`
	// Truth says where the expected answers come from: "graph" (the graph
	// scored itself: the figure measures the ranking, not the graph) or
	// "scip" (the index --scip names).
	Truth string `json:"truth"`
	// Bootstrap 95 % intervals over the symbols scored.
	PrecisionInterval [2]float64 `json:"precision_interval"`
	ActivateInterval  [2]float64 `json:"activate_interval"`
	// With --scip.
	Index       string      `json:"index,omitempty"`
	Tool        string      `json:"tool,omitempty"`
	ToolVersion string      `json:"tool_version,omitempty"`
	Unmatched   *int        `json:"unmatched,omitempty"`
	Dependents  *int        `json:"dependents,omitempty"`
	InGraph     *[3]float64 `json:"in_graph,omitempty"`
	// Fallbacks are the Go packages read from syntax although
	// type-checking was asked for (as ingest go --json prints them).
	Fallbacks []ingest.Fallback `json:"fallbacks"`
}

func runEvalImpact(k *call) error {
	dir := k.args[0]
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageErr("eval impact: %s is not a directory", dir)
	}
	if n := k.ctx.Int("min-dependents"); n < 1 {
		return usageErr("eval impact: --min-dependents %d must be >= 1", n)
	}
	if k.env.Getenv == nil || k.env.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	bar := newProgressBar(k.env)
	index := k.ctx.String("scip")
	if k.ctx.IsSet("scip") && index == "" {
		return usageErr("eval impact: --scip needs an INDEX")
	}
	prec, err := preciseOptions(k)
	if err != nil {
		return err
	}
	res, err := eval.Impact(dir, eval.ImpactOptions{
		Walk: walkOptions(k), MinDependents: k.ctx.Int("min-dependents"), Progress: bar.update, Index: index, Precise: prec,
	})
	bar.done()
	if index != "" {
		if err := scipInputErr("eval impact", index, err); errors.Is(err, eval.ErrNothingToScore) {
			return withCode(ExitNotFound, fmt.Errorf("eval impact %s: %w", dir, err))
		} else if err != nil {
			return err
		}
	}
	if errors.Is(err, eval.ErrNothingToScore) {
		return withCode(ExitNotFound, fmt.Errorf("eval impact %s: %w", dir, err))
	}
	if err != nil {
		return err
	}
	if k.out.json {
		j := evalImpactJSON{Eval: "impact", Dir: dir, Symbols: res.Symbols, MinDependents: res.MinDependents,
			Precision: res.Mean, Min: res.Min, Perfect: res.Perfect, Worst: res.Worst, Activate: res.ActivateMean, Nodes: res.Nodes, Edges: res.Edges, Seconds: res.Seconds, Truth: res.Truth,
			PrecisionInterval: [2]float64{res.Precision.Lo, res.Precision.Hi}, ActivateInterval: [2]float64{res.Activate.Lo, res.Activate.Hi},
			Fallbacks: res.Fallbacks}
		if j.Fallbacks == nil {
			j.Fallbacks = []ingest.Fallback{} // [] in JSON, as ingest prints it
		}
		if index != "" {
			j.Index, j.Tool, j.ToolVersion = index, res.Tool, res.ToolVersion
			j.Unmatched, j.Dependents = &res.Unmatched, &res.Dependents
			j.InGraph = &[3]float64{res.InGraph.Mean, res.InGraph.Lo, res.InGraph.Hi}
		}
		return k.out.record(j)
	}
	if err := k.out.textf("%s\n", res.Text()); err != nil {
		return err
	}
	// Go read from syntax alone resolves fewer calls: say so (SPEC.md §9.6).
	for _, l := range fallbackLines(res.Fallbacks) {
		if err := k.out.textf("%s\n", l); err != nil {
			return err
		}
	}
	return nil
}
