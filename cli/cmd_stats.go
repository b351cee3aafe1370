package cli

import (
	"fmt"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func statsCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "stats",
		Usage: "summarise the store: revision, counts, adjacency, sizes, warnings",
		Run:   runStats,
	})
}

type statsJSON struct {
	Revision         uint64         `json:"revision"`
	Horizon          uint64         `json:"horizon"`
	Nodes            int            `json:"nodes"`
	Edges            int            `json:"edges"`
	KVs              int            `json:"kvs"`
	Relations        int            `json:"relations"`
	AdjacencyChunks  int            `json:"adjacency_chunks"`
	AdjacencyEntries int            `json:"adjacency_entries"`
	Tombstones       int            `json:"tombstones"`
	Superseded       int            `json:"superseded"`
	MissingNodes     int            `json:"missing_nodes"`
	MapSize          int64          `json:"map_size"`
	FileSize         int64          `json:"file_size"`
	Warnings         []string       `json:"warnings"`
	Keyspaces        []keyspaceJSON `json:"keyspaces"`
}

// keyspaceJSON is one keyspace's space (SPEC §6.3, stats).
type keyspaceJSON struct {
	Name    string `json:"name"`
	Entries uint64 `json:"entries"`
	Pages   uint64 `json:"pages"`
	Bytes   uint64 `json:"bytes"`
}

func keyspacesJSON(ks []lmdbstore.KeyspaceSpace) []keyspaceJSON {
	out := make([]keyspaceJSON, len(ks))
	for i, k := range ks {
		out[i] = keyspaceJSON{Name: k.Name, Entries: k.Entries, Pages: k.Pages(), Bytes: k.Bytes}
	}
	return out
}

func runStats(k *call) error {
	s, err := k.open(true)
	if err != nil {
		return err
	}
	st, err := s.Stats()
	if err != nil {
		return err
	}
	rec := statsJSON{
		Revision: uint64(st.Revision), Horizon: uint64(st.Horizon),
		Nodes: st.Nodes, Edges: st.Edges, KVs: st.KVs, Relations: st.Relations,
		AdjacencyChunks: st.AdjacencyChunks, AdjacencyEntries: st.AdjacencyEntries,
		Tombstones: st.Tombstones, Superseded: st.Superseded, MissingNodes: st.MissingNodes,
		MapSize: st.MapSize, FileSize: st.FileSize, Warnings: st.Warnings,
		Keyspaces: keyspacesJSON(st.Keyspaces),
	}
	if rec.Warnings == nil {
		rec.Warnings = []string{}
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
