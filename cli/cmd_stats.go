package cli

import (
	"fmt"

	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func statsCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "stats",
		Usage: "summarise the store: revision, counts, adjacency, sizes, warnings",
		Run:   runStats,
	})
}

func runStats(k *call) error {
	s, err := k.open(true)
	if err != nil {
		return err
	}
	rec, err := ops.Stats(s)
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(rec)
	}
	tw := k.out.table()
	for _, row := range []struct {
		name string
		v    any
	}{
		{"revision", rec.Revision},
		{"horizon", rec.Horizon},
		{"nodes", rec.Nodes},
		{"edges", rec.Edges},
		{"kv entries", rec.KVs},
		{"relations", rec.Relations},
		{"adjacency chunks", rec.AdjacencyChunks},
		{"adjacency entries", rec.AdjacencyEntries},
		{"tombstones", rec.Tombstones},
		{"superseded", rec.Superseded},
		{"missing nodes", rec.MissingNodes},
		{"map size", rec.MapSize},
		{"file size", rec.FileSize},
	} {
		fmt.Fprintf(tw, "%s\t%v\n", row.name, row.v)
	}
	for _, ks := range rec.Keyspaces {
		fmt.Fprintf(tw, "space %s\t%d bytes, %d entries, %d pages\n", ks.Name, ks.Bytes, ks.Entries, ks.Pages)
	}
	for _, w := range rec.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", textCell(w))
	}
	return tw.Flush()
}
