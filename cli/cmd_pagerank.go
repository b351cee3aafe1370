package cli

import (
	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func pagerankCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:  "pagerank",
		Usage: "rank every node of a snapshot by PageRank",
		Description: "Uses the PageRank section stored at export when present (unweighted defaults);\n" +
			"computes it otherwise, or always with --weighted (SPEC.md §8.4).",
		Flags: append(engineFlags(),
			topFlag(20),
			&cli.BoolFlag{Name: "weighted", Usage: "split rank over out-edges by edge weight"},
		),
		Action: engineAction(env, 0, 0, "no arguments", runPagerank),
	}
}

func runPagerank(k *engineCall) error {
	res, err := ops.PageRank(k.eng, ops.PageRankRequest{Top: k.ctx.Int("top"), Weighted: k.ctx.Bool("weighted")})
	if err != nil {
		return err
	}
	return k.scored(res.Results)
}
