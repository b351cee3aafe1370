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
			"fuzzy trigram match; activation spreads from them (SPEC.md §8.1, §8.2). The related\n" +
			"profile (default) splits each node's activation among its edges by role, sums what\n" +
			"arrives, and favours recently changed files; the classic profile is §8.2's\n" +
			"strongest-path activation.",
		Flags: []cli.Flag{
			snapshotFlag(),
			topFlag(20),
			&cli.StringFlag{Name: "profile", Value: "related", Usage: "`P`: related (ranked relatedness) or classic (strongest path)"},
			&cli.IntFlag{Name: "depth", Usage: "propagate at most `D` hops (1..20; 0..20 classic; default 3 related, 5 classic)"},
			relFlag(),
			&cli.BoolFlag{Name: "files", Usage: "list files only (same as --kind file)"},
			&cli.StringFlag{Name: "kind", Usage: "list only nodes of type `T` (file, symbol, package, ...)"},
			&cli.IntFlag{Name: "per-container", Value: engines.DefaultPerContainer, Usage: "related: list at most `N` leaves (symbols) per container (file); 0: no cap"},
			&cli.Float64Flag{Name: "temporal", Value: engines.DefaultRelatedTemporal, Usage: "related: weight `T` of the recency term (0: off)"},
			&cli.BoolFlag{Name: "lexical", Value: true, Usage: "related, with --files: fuse the ranking with the files' lexical similarity (their stored terms); --lexical=false: the graph's ranking alone"},
			&cli.StringFlag{Name: "strategy", Value: "auto", Usage: "classic: `S`: wavefront, heap or auto (same scores, different cost)"},
		},
		Action: engineAction(env, 1, -1, "at least one QUERY", runActivate),
	}
}

func runActivate(k *engineCall) error {
	kind := k.ctx.String("kind")
	if k.ctx.Bool("files") {
		if kind != "" && kind != "file" {
			return usageErr("activate: --files and --kind %s contradict each other", kind)
		}
		kind = "file"
	}
	relations, err := k.relations()
	if err != nil {
		return err
	}
	switch k.ctx.String("profile") {
	case "related":
		for _, f := range []string{"strategy"} {
			if k.ctx.IsSet(f) {
				return usageErr("activate: --%s applies to --profile classic only", f)
			}
		}
		p := engines.DefaultRelatedParams()
		p.TopK = k.ctx.Int("top")
		if k.ctx.IsSet("depth") {
			p.Depth = k.ctx.Int("depth")
		}
		p.Relations = relations
		p.Kind = kind
		p.PerContainer = k.ctx.Int("per-container")
		p.Temporal = k.ctx.Float64("temporal")
		p.Lexical = k.ctx.Bool("lexical")
		seeds, err := k.seeds()
		if err != nil {
			return err
		}
		rs, err := k.eng.Related(seeds, p)
		if err != nil {
			return err
		}
		return k.scored(rs)
	case "classic":
		for _, f := range []string{"per-container", "temporal", "lexical"} {
			if k.ctx.IsSet(f) {
				return usageErr("activate: --%s applies to --profile related only", f)
			}
		}
		p := engines.DefaultActivationParams()
		p.TopK = k.ctx.Int("top")
		if k.ctx.IsSet("depth") {
			p.MaxDepth = k.ctx.Int("depth")
		}
		strategy, err := engines.ParseStrategy(k.ctx.String("strategy"))
		if err != nil {
			return err
		}
		p.Strategy = strategy
		p.Relations = relations
		if kind != "" {
			p.TopK = 0 // filter first, then cut
		}
		seeds, err := k.seeds()
		if err != nil {
			return err
		}
		rs, err := k.eng.Activate(seeds, p)
		if err != nil {
			return err
		}
		if kind != "" {
			if rs, err = k.ofKind(rs, kind, k.ctx.Int("top")); err != nil {
				return err
			}
		}
		return k.scored(rs)
	}
	return usageErr("activate: unknown profile %q (want related or classic)", k.ctx.String("profile"))
}

// ofKind keeps the nodes of type kind, at most top (0: all).
func (k *engineCall) ofKind(rs []engines.Scored, kind string, top int) ([]engines.Scored, error) {
	out := rs[:0]
	for _, r := range rs {
		if top > 0 && len(out) == top {
			break
		}
		typ, err := k.graph.Type(r.Node)
		if err != nil {
			return nil, err
		}
		if typ == kind {
			out = append(out, r)
		}
	}
	return out, nil
}
