package lmdbstore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoad writes 50,000 entities and 500,000 edges (a 25th of that under
// the race detector, which makes it ten times slower), then checks the
// store and compares sampled adjacency lists with the written model.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	nodes, edges := 50_000, 500_000
	if raceEnabled {
		nodes, edges = 2_000, 20_000
	}
	s := newStore(t, Options{MapSize: 256 << 20})
	r := rand.New(rand.NewPCG(7, 7))
	key := func(i int) string { return fmt.Sprintf("sym:pkg%d.F%d", i%97, i) }
	// Skewed endpoints: a few hubs, a long tail.
	pickNode := func() int {
		if r.IntN(10) == 0 {
			return r.IntN(20)
		}
		return r.IntN(nodes)
	}
	rels := []string{"calls", "references", "imports", "defines"}
	type ek struct {
		src, dst int
		rel      string
	}
	model := map[ek]bool{}
	entries := 0 // the same edge twice in one transaction is one entry
	const batch = 10_000
	for start := 0; start < nodes; start += batch {
		mustUpdate(t, s, WriteMeta{RunID: "load"}, func(tx *WriteTxn) error {
			for i := start; i < min(start+batch, nodes); i++ {
				if err := tx.PutNode(NodePut{Key: key(i), Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for start := 0; start < edges; start += batch {
		inBatch := map[ek]bool{}
		mustUpdate(t, s, WriteMeta{RunID: "load"}, func(tx *WriteTxn) error {
			for range batch {
				k := ek{pickNode(), pickNode(), rels[r.IntN(len(rels))]}
				if !model[k] { // a put of an edge that exists unchanged writes nothing
					inBatch[k] = true
				}
				model[k] = true
				if err := tx.PutEdge(EdgePut{Src: key(k.src), Rel: k.rel, Dst: key(k.dst)}); err != nil {
					return err
				}
			}
			return nil
		})
		entries += len(inBatch)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Nodes != nodes || st.Edges != len(model) || st.AdjacencyEntries != 2*entries { // out and in
		t.Fatalf("stats %+v; want %d nodes, %d edges, %d entries", st, nodes, len(model), 2*entries)
	}
	out := map[int][]string{}
	for k := range model {
		out[k.src] = append(out[k.src], k.rel+">"+key(k.dst))
	}
	err = s.View(func(rt *ReadTxn) error {
		for _, src := range []int{0, 1, 5, 19, 20, 1000, nodes - 1} {
			es, err := rt.GetOut(key(src), "", At{})
			if err != nil {
				return err
			}
			var got []string
			for _, e := range es {
				rel, _ := rt.RelationByID(e.Rel)
				dst, _ := rt.KeyOf(e.Dst)
				got = append(got, rel.Name+">"+dst)
			}
			sort.Strings(got)
			want := out[src]
			sort.Strings(want)
			if diff := cmp.Diff(want, got, cmpOpts...); diff != "" {
				t.Errorf("out of node %d (-want +got):\n%s", src, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("load: %d nodes, %d edges, %d chunks, file %d MiB", st.Nodes, st.Edges, st.AdjacencyChunks, st.FileSize>>20)
}
