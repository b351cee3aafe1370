package cli

import (
	"fmt"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
	"github.com/urfave/cli/v2"
)

func impactCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:      "impact",
		Usage:     "list who is affected if the node QUERY matches changes",
		ArgsUsage: "QUERY",
		Description: "QUERY is a key, prefix, substring or fuzzy name (the best match is used).\n" +
			"Walks usage and memory relations backwards (who depends on it; --direction out:\n" +
			"what it depends on) from the node and what it contains, up to --depth hops, and\n" +
			"lifts every affected node to its owners (file, package); ranked by distance,\n" +
			"dependents before owners, then strength (SPEC.md §8.5).",
		Flags: append(engineFlags(),
			topFlag(0),
			&cli.IntFlag{Name: "depth", Value: engines.DefaultImpactDepth, Usage: "walk at most `D` hops (1..20)"},
			&cli.StringFlag{Name: "direction", Value: "in", Usage: "`DIR`: in (dependents), out (dependencies) or both"},
			relFlag(),
		),
		Action: engineAction(env, 1, 1, "exactly one QUERY", runImpact),
	}
}

// affectedJSON is one node of a blast radius as --json prints it.
func runImpact(k *engineCall) error {
	if k.args[0] == "" {
		return usageErr("empty QUERY")
	}
	res, err := ops.Impact(k.eng, ops.ImpactRequest{
		Query: k.args[0], Depth: ptr(k.ctx.Int("depth")), Direction: k.ctx.String("direction"),
		Relations: k.ctx.StringSlice("rel"), Top: k.ctx.Int("top"),
	})
	if err != nil {
		return err
	}
	if err := k.cover(records.KeysOfImpact(res)); err != nil {
		return err
	}
	if k.out.json {
		for _, a := range res.Affected {
			if err := k.out.record(a); err != nil {
				return err
			}
		}
		return nil
	}
	tw := k.out.table()
	for _, a := range res.Affected {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", a.Distance, textScore(a.Score), textCell(a.Key))
	}
	return tw.Flush()
}
