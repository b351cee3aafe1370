package gen

import (
	"slices"
	"testing"
)

// TestWorkloadShape checks the generated workload against what the peer
// benchmark's tables claim of it (bench/README.md, the table):
// about 8 out-edges per node, a power-law in-degree (a few hubs with
// thousands of in-edges, a median of a handful), the relations used,
// payloads on every node, and determinism in the seed.
// (The other nine relations carry the load; derived_from is the Extra edges'.)
func TestWorkloadShape(t *testing.T) {
	sizes := []int{10000, 100000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		g, err := Generate(Config{Nodes: n, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		perNode := float64(len(g.Edges)) / float64(n)
		if perNode < 7 || perNode > 9 {
			t.Errorf("n=%d: %.2f edges per node, want about 8", n, perNode)
		}
		out, in := g.Degrees()
		so, si := slices.Clone(out), slices.Clone(in)
		slices.Sort(so)
		slices.Sort(si)
		q := func(s []uint32, p float64) uint32 { return s[int(p*float64(len(s)-1))] }
		if med, top := q(si, .5), si[len(si)-1]; med > 16 || top < 100*max(med, 1) {
			t.Errorf("n=%d: in-degree median %d, max %d: not a power law (want max ≥ 100× median)", n, med, top)
		}
		if med := q(so, .5); med < 4 || med > 12 {
			t.Errorf("n=%d: out-degree median %d, want about 8", n, med)
		}
		var rc [11]int
		for _, e := range g.Edges {
			rc[e.Rel]++
		}
		// Relation 9 (derived_from) is kept for the Extra edges (Config).
		for rel := 1; rel <= 10; rel++ {
			if (rc[rel] == 0) != (rel == 9) {
				t.Errorf("n=%d: relation %d used by %d edges", n, rel, rc[rel])
			}
		}
		for i := range g.Nodes {
			if len(g.Payload(uint32(i), nil)) == 0 {
				t.Fatalf("n=%d: node %d has no payload", n, i)
			}
		}
		t.Logf("n=%d edges=%d (%.2f/node) out p50=%d max=%d in p50=%d p99=%d max=%d rels=%v",
			n, len(g.Edges), perNode, q(so, .5), so[len(so)-1], q(si, .5), q(si, .99), si[len(si)-1], rc)
	}
	a, _ := Generate(Config{Nodes: 1000, Seed: 7})
	b, _ := Generate(Config{Nodes: 1000, Seed: 7})
	if !slices.Equal(a.Edges, b.Edges) {
		t.Errorf("Generate is not deterministic in its seed")
	}
}
