package cli

import (
	"errors"
	"strings"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
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
		Flags: append(engineFlags(),
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
			feedbackFlag(),
		),
		Action: engineAction(env, 1, -1, "at least one QUERY", runActivate),
	}
}

func runActivate(k *engineCall) error {
	req := ops.RelatedRequest{
		Queries: k.args, Top: k.ctx.Int("top"), Profile: k.ctx.String("profile"),
		Relations: k.ctx.StringSlice("rel"), Files: k.ctx.Bool("files"), Kind: k.ctx.String("kind"),
		Spell: flagSpelling,
	}
	if k.ctx.IsSet("depth") {
		req.Depth = ptr(k.ctx.Int("depth"))
	}
	if k.ctx.IsSet("per-container") {
		req.PerContainer = ptr(k.ctx.Int("per-container"))
	}
	if k.ctx.IsSet("temporal") {
		req.Temporal = ptr(k.ctx.Float64("temporal"))
	}
	if k.ctx.IsSet("lexical") {
		req.Lexical = ptr(k.ctx.Bool("lexical"))
	}
	if k.ctx.IsSet("strategy") || req.Profile == "classic" {
		req.Strategy = k.ctx.String("strategy")
	}
	var err error
	if req.Feedback, err = k.feedbackOverlay(); err != nil {
		return err
	}
	res, err := ops.Related(k.eng, req)
	if errors.Is(err, ops.ErrInvalid) {
		return usageErr("activate: %v", err)
	}
	if err != nil {
		return err
	}
	if err := k.cover(records.KeysOfRanked(res.Seeds, res.Results)); err != nil {
		return err
	}
	return k.scored(res.Results)
}

func ptr[T any](v T) *T { return &v }

// flagSpelling spells an operation's option as a flag: per_container is
// --per-container.
func flagSpelling(option string) string { return "--" + strings.ReplaceAll(option, "_", "-") }
