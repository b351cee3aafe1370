package cli

import (
	"encoding/json"
	"fmt"

	"github.com/memctl/memctl/engines"
	"github.com/urfave/cli/v2"
)

func resonateCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:      "resonate",
		Usage:     "standing-wave resonance from QUERY over a snapshot, or a harmonic sweep",
		ArgsUsage: "QUERY...",
		Description: "Pulses from the QUERY nodes interfere; nodes are ranked by resultant amplitude.\n" +
			"With --sweep, prints the resonant frequencies and their antinodes (SPEC.md §8.3).",
		Flags: []cli.Flag{
			snapshotFlag(),
			topFlag(20),
			&cli.Float64Flag{Name: "frequency", Value: engines.DefaultFrequency, Usage: "pulse frequency `F` (> 0; phase step 2π·F/4 per hop)"},
			&cli.IntFlag{Name: "budget", Value: engines.DefaultPulseBudget, Usage: "send at most `N` pulses per run"},
			relFlag(),
			&cli.BoolFlag{Name: "sweep", Usage: "sweep frequencies 0.1..2.0 in 20 steps and report the resonant ones"},
		},
		Action: engineAction(env, 1, -1, "at least one QUERY", runResonate),
	}
}

// harmonicJSON is one resonant frequency as --json --sweep prints it.
type harmonicJSON struct {
	Frequency json.Number  `json:"frequency"`
	Energy    json.Number  `json:"energy"`
	Antinodes []scoredJSON `json:"antinodes"`
}

func runResonate(k *engineCall) error {
	p := engines.DefaultResonanceParams()
	p.TopK = k.ctx.Int("top")
	p.Frequency = k.ctx.Float64("frequency")
	p.Budget = k.ctx.Int("budget")
	var err error
	if p.Relations, err = k.relations(); err != nil {
		return err
	}
	seeds, err := k.seeds()
	if err != nil {
		return err
	}
	if !k.ctx.Bool("sweep") {
		w, err := k.eng.Resonate(seeds, p)
		if err != nil {
			return err
		}
		return k.scored(w.Nodes)
	}
	sp := engines.DefaultSweepParams()
	sp.Base = p
	sw, err := k.eng.Sweep(seeds, sp)
	if err != nil {
		return err
	}
	for _, h := range sw.Resonant {
		recs, err := k.scoredRecords(h.Antinodes)
		if err != nil {
			return err
		}
		if k.out.json {
			if err := k.out.record(harmonicJSON{Frequency: formatScore(h.Frequency), Energy: formatScore(h.Energy), Antinodes: recs}); err != nil {
				return err
			}
			continue
		}
		if err := k.out.textf("frequency %s\tenergy %s\n", textScore(h.Frequency), textScore(h.Energy)); err != nil {
			return err
		}
		tw := k.out.table()
		for i, r := range recs {
			fmt.Fprintf(tw, "  %s\t%s\n", textScore(h.Antinodes[i].Score), textCell(r.Key))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
