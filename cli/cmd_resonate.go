package cli

import (
	"fmt"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func resonateCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:      "resonate",
		Usage:     "standing-wave resonance from QUERY over a snapshot, or a harmonic sweep",
		ArgsUsage: "QUERY...",
		Description: "Pulses from the QUERY nodes interfere; nodes are ranked by resultant amplitude.\n" +
			"With --sweep, prints the resonant frequencies and their antinodes (SPEC.md §8.3).",
		Flags: append(engineFlags(),
			topFlag(20),
			&cli.Float64Flag{Name: "frequency", Value: engines.DefaultFrequency, Usage: "pulse frequency `F` (> 0; phase step 2π·F/4 per hop)"},
			&cli.IntFlag{Name: "budget", Value: engines.DefaultPulseBudget, Usage: "send at most `N` pulses per run"},
			relFlag(),
			&cli.BoolFlag{Name: "sweep", Usage: "sweep frequencies 0.1..2.0 in 20 steps and report the resonant ones"},
		),
		Action: engineAction(env, 1, -1, "at least one QUERY", runResonate),
	}
}

// harmonicJSON is one resonant frequency as --json --sweep prints it.
func runResonate(k *engineCall) error {
	res, err := ops.Resonate(k.eng, ops.ResonateRequest{
		Queries: k.args, Top: k.ctx.Int("top"), Frequency: ptr(k.ctx.Float64("frequency")),
		Budget: ptr(k.ctx.Int("budget")), Relations: k.ctx.StringSlice("rel"), Sweep: k.ctx.Bool("sweep"),
	})
	if err != nil {
		return err
	}
	if !k.ctx.Bool("sweep") {
		return k.scored(res.Results)
	}
	for _, h := range res.Resonant {
		if k.out.json {
			if err := k.out.record(h); err != nil {
				return err
			}
			continue
		}
		if err := k.out.textf("frequency %s\tenergy %s\n", textScore(h.Frequency), textScore(h.Energy)); err != nil {
			return err
		}
		tw := k.out.table()
		for _, r := range h.Antinodes {
			fmt.Fprintf(tw, "  %s\t%s\n", textScore(r.Score), textCell(r.Key))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
