package cli

import (
	"fmt"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/roles"
	"github.com/urfave/cli/v2"
)

func relCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:            "rel",
		Usage:           "list or register relations",
		Action:          unknownCommand,
		HideHelpCommand: true,
		Subcommands: []*cli.Command{
			verbCommand(env, verbSpec{
				Name:  "list",
				Usage: "list the registered relations, by id",
				Run:   runRelList,
			}),
			verbCommand(env, verbSpec{
				Name:  "add",
				Usage: "register a new relation NAME",
				Args:  []string{"NAME"},
				Flags: append(writeFlags(true),
					&cli.Float64Flag{Name: "weight", Value: 1, Usage: "default weight `W` of its edges"},
					&cli.BoolFlag{Name: "bidirectional", Usage: "engines propagate along its in-edges too"},
					&cli.BoolFlag{Name: "inhibitory", Usage: "engines subtract along it instead of adding"},
					&cli.StringFlag{Name: "role", Value: "memory", Usage: "what it means to the engines `R`: structure, usage, history or memory (SPEC §1)"}),
				Run: runRelAdd,
			}),
		},
	}
}

// relationJSON is a relation as --json prints it (SPEC.md §6.3).
func runRelList(k *call) error {
	s, err := k.open(true)
	if err != nil {
		return err
	}
	var rels []lmdbstore.Relation
	if err := s.View(func(r *lmdbstore.ReadTxn) error {
		rels, err = r.Relations()
		return err
	}); err != nil {
		return err
	}
	if k.out.json {
		for _, rel := range rels {
			if err := k.out.record(records.RelationOf(rel)); err != nil {
				return err
			}
		}
		return nil
	}
	tw := k.out.table()
	fmt.Fprintln(tw, "ID\tNAME\tWEIGHT\tROLE\tFLAGS")
	for _, rel := range rels {
		var flags []string
		if rel.Bidirectional {
			flags = append(flags, "bidirectional")
		}
		if rel.Inhibitory {
			flags = append(flags, "inhibitory")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", rel.ID, rel.Name, formatWeight(rel.DefaultWeight), rel.Role, orDash(strings.Join(flags, ",")))
	}
	return tw.Flush()
}

type relAddJSON struct {
	Rev  uint64 `json:"rev"`
	TS   string `json:"ts,omitempty"`
	ID   uint32 `json:"id"`
	Name string `json:"name"`
}

func runRelAdd(k *call) error {
	w, err := checkWeight("--weight", k.ctx.Float64("weight"))
	if err != nil {
		return err
	}
	role, err := roles.Parse(k.ctx.String("role"))
	if err != nil {
		return usageErr("--role: %v", err)
	}
	rel := lmdbstore.Relation{
		Role:          role,
		Name:          k.args[0],
		DefaultWeight: w,
		Bidirectional: k.ctx.Bool("bidirectional"),
		Inhibitory:    k.ctx.Bool("inhibitory"),
	}
	var id lmdbstore.RelID
	c, err := k.update(func(tx *lmdbstore.WriteTxn) error {
		id, err = tx.AddRelation(rel)
		return err
	})
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(relAddJSON{Rev: uint64(c.Rev), TS: records.Time(c.Time), ID: uint32(id), Name: rel.Name})
	}
	return k.out.textf("rev %d (relation %q has id %d)\n", c.Rev, rel.Name, id)
}
