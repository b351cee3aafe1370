package cli

// The eval commands measure answer quality on a code tree (SPEC §11). They
// never touch the --db store: everything is built in a temporary one.

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/memctl/memctl/eval"
	"github.com/urfave/cli/v2"
)

func evalCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "measure how well memory answers on real code and its history (eval impact DIR, eval cochange DIR)",
		Subcommands: []*cli.Command{
			verbCommand(env, verbSpec{
				Name:  "impact",
				Usage: "score impact on the Go tree DIR: share of its top k that are direct usage dependents",
				Description: "Ingests DIR into a temporary store, exports it, and for every symbol with at\n" +
					"least --min-dependents direct usage dependents (k of them) reports the share of\n" +
					"impact's top k that are direct dependents (SPEC.md §11).",
				Args: []string{"DIR"},
				Flags: append(walkFlags(),
					&cli.IntFlag{Name: "min-dependents", Value: eval.DefaultMinDependents, Usage: "score symbols with at least `N` direct usage dependents"}),
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
	// scored itself: the figure measures the ranking, not the graph).
	Truth string `json:"truth"`
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
	res, err := eval.Impact(dir, eval.ImpactOptions{
		Walk: walkOptions(k), MinDependents: k.ctx.Int("min-dependents"), Progress: bar.update,
	})
	bar.done()
	if errors.Is(err, eval.ErrNothingToScore) {
		return withCode(ExitNotFound, fmt.Errorf("eval impact %s: %w", dir, err))
	}
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(evalImpactJSON{Eval: "impact", Dir: dir, Symbols: res.Symbols, MinDependents: res.MinDependents,
			Precision: res.Mean, Min: res.Min, Perfect: res.Perfect, Worst: res.Worst, Activate: res.ActivateMean, Nodes: res.Nodes, Edges: res.Edges, Seconds: res.Seconds, Truth: "graph"})
	}
	return k.out.textf("%s\n", res.Text())
}
