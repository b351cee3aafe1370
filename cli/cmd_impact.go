package cli

import (
	"encoding/json"
	"fmt"

	"github.com/memctl/memctl/engines"
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
		Flags: []cli.Flag{
			snapshotFlag(),
			topFlag(0),
			&cli.IntFlag{Name: "depth", Value: engines.DefaultImpactDepth, Usage: "walk at most `D` hops (1..20)"},
			&cli.StringFlag{Name: "direction", Value: "in", Usage: "`DIR`: in (dependents), out (dependencies) or both"},
			relFlag(),
		},
		Action: engineAction(env, 1, 1, "exactly one QUERY", runImpact),
	}
}

// affectedJSON is one node of a blast radius as --json prints it.
type affectedJSON struct {
	Key      string      `json:"key"`
	Distance int         `json:"distance"`
	Score    json.Number `json:"score"`
}

func runImpact(k *engineCall) error {
	p := engines.DefaultImpactParams()
	p.Depth = k.ctx.Int("depth")
	p.TopK = k.ctx.Int("top")
	dir, err := engines.ParseDirection(k.ctx.String("direction"))
	if err != nil {
		return err
	}
	p.Direction = dir
	if p.Relations, err = k.relations(); err != nil {
		return err
	}
	if k.args[0] == "" {
		return usageErr("empty QUERY")
	}
	origin, matches, err := k.eng.ResolveOrigin(k.args[0])
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return withCode(ExitNotFound, fmt.Errorf("no node matches %q", k.args[0]))
	}
	as, err := k.eng.Impact(origin, p)
	if err != nil {
		return err
	}
	tw := k.out.table()
	for _, a := range as {
		key, err := k.graph.Key(a.Node)
		if err != nil {
			return err
		}
		if k.out.json {
			if err := k.out.record(affectedJSON{Key: key, Distance: a.Distance, Score: formatScore(a.Score)}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", a.Distance, textScore(a.Score), textCell(key))
	}
	if k.out.json {
		return nil
	}
	return tw.Flush()
}
