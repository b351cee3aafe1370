package cli

import (
	"github.com/memctl/memctl/engines"
	"github.com/urfave/cli/v2"
)

func activateCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:      "activate",
		Usage:     "rank the nodes related to QUERY by spreading activation over a snapshot",
		ArgsUsage: "QUERY...",
		Description: "Each QUERY resolves to nodes by exact key, else key prefix, else substring, else\n" +
			"fuzzy trigram match; activation spreads from them (SPEC.md §8.1, §8.2).",
		Flags: []cli.Flag{
			snapshotFlag(),
			topFlag(20),
			&cli.IntFlag{Name: "depth", Value: engines.DefaultMaxDepth, Usage: "propagate at most `D` hops (0..20)"},
			relFlag(),
			&cli.StringFlag{Name: "strategy", Value: "auto", Usage: "`S`: wavefront, heap or auto (same scores, different cost)"},
			&cli.BoolFlag{Name: "files", Usage: "return files only (keys starting with file:)"},
		},
		Action: engineAction(env, 1, -1, "at least one QUERY", runActivate),
	}
}

func runActivate(k *engineCall) error {
	p := engines.DefaultActivationParams()
	p.TopK = k.ctx.Int("top")
	p.MaxDepth = k.ctx.Int("depth")
	strategy, err := engines.ParseStrategy(k.ctx.String("strategy"))
	if err != nil {
		return err
	}
	p.Strategy = strategy
	if k.ctx.Bool("files") {
		p.KeyPrefix = "file:"
	}
	if p.Relations, err = k.relations(); err != nil {
		return err
	}
	seeds, err := k.seeds()
	if err != nil {
		return err
	}
	rs, err := k.eng.Activate(seeds, p)
	if err != nil {
		return err
	}
	return k.scored(rs)
}
