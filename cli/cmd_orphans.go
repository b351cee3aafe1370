package cli

import (
	"fmt"

	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

// orphansCommand is `orphans`: memory items whose targets are gone
// (SPEC.md §6.2, §9.8).
func orphansCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "orphans",
		Usage: "list memory items (edges, kv applies_to) whose target keys are no longer live",
		Description: "An orphan is a live memory-role edge (constrains, decided_for, derived_from,\n" +
			"supersedes, contradicts, …) or a kv entry's applies_to key whose target has no live\n" +
			"node: deleted by an ingest that saw no move, or never written. Each is listed with the\n" +
			"revision that deleted the target and the nearest live key enclosing it.",
		Flags: readFlags(),
		Run:   runOrphans,
	})
}

// orphansJSON is the --json record of `orphans`.
type orphansJSON struct {
	Orphans []freshness.Orphan `json:"orphans"`
}

func runOrphans(k *call) error {
	var list []freshness.Orphan
	err := k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) (err error) {
		list, err = freshness.Orphans(r, at)
		return err
	})
	if err != nil {
		return err
	}
	if list == nil {
		list = []freshness.Orphan{}
	}
	if k.out.json {
		return k.out.record(orphansJSON{Orphans: list})
	}
	tw := k.out.table()
	for _, o := range list {
		gone := "never existed"
		if o.DeletedRev != 0 {
			gone = fmt.Sprintf("deleted at rev %d", o.DeletedRev)
		}
		nearest := o.Nearest
		if nearest == "" {
			nearest = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tnearest %s\n", textCell(o.Item), o.Via, textCell(o.Target), gone, textCell(nearest))
	}
	if len(list) == 0 {
		fmt.Fprintln(tw, "no orphans")
	}
	return tw.Flush()
}
