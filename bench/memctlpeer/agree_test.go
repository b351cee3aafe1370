package memctlpeer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
)

// TestPeersAgreeWithMemctl loads one graph into memctl and every peer the
// same way (a node batch, four edge batches, then single durable writes)
// and requires every peer's get-out, get-in, get-out at an old revision
// and 3-hop to return exactly memctl's answer: the same relation names and
// the same canonical keys, each as often. The harness checks every system
// against the generator; this checks them against each other, key for key.
func TestPeersAgreeWithMemctl(t *testing.T) {
	g, err := gen.Generate(gen.Config{Nodes: 1500, Seed: 7, ExtraEdges: 30})
	if err != nil {
		t.Fatal(err)
	}
	var batches []peers.Batch
	var nodes peers.Batch
	for i := range g.Nodes {
		nodes.Nodes = append(nodes.Nodes, uint32(i))
	}
	batches = append(batches, nodes)
	for q := 0; q < 4; q++ {
		lo, hi := q*len(g.Edges)/4, (q+1)*len(g.Edges)/4
		batches = append(batches, peers.Batch{Edges: g.Edges[lo:hi]})
	}
	const oldRev = 3 // the nodes and half of the edges

	names := []string{"memctl", "sqlite", "bbolt", "lmdb-raw"}
	systems := make([]peers.System, len(names))
	for i, name := range names {
		sys, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := sys.Create(t.TempDir(), g); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { sys.Close() })
		for _, b := range batches {
			if err := sys.Load(b); err != nil {
				t.Fatalf("%s: load: %v", name, err)
			}
		}
		for _, e := range g.Extra {
			if err := sys.PutEdge(e); err != nil {
				t.Fatalf("%s: put-edge: %v", name, err)
			}
		}
		if err := sys.Settle(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		systems[i] = sys
	}

	// The sample: every 7th node, the highest out- and in-degree nodes and
	// a node of the extra writes.
	outDeg, inDeg := make([]int, len(g.Nodes)), make([]int, len(g.Nodes))
	for _, e := range append(slices.Clone(g.Edges), g.Extra...) {
		outDeg[e.Src]++
		inDeg[e.Dst]++
	}
	var sample []uint32
	for v := 0; v < len(g.Nodes); v += 7 {
		sample = append(sample, uint32(v))
	}
	sample = append(sample, argmaxInt(outDeg), argmaxInt(inDeg), g.Extra[0].Src, g.Extra[0].Dst)

	edges := func(read func(peers.EdgeFunc) error) ([]string, error) {
		var got []string
		err := read(func(rel, peer string) { got = append(got, rel+" "+peer) })
		slices.Sort(got)
		return got, err
	}
	hop := func(sys peers.System, v uint32) ([]string, error) {
		var got []string
		n, err := sys.ThreeHop(v, func(key string) { got = append(got, strings.Clone(key)) }) // valid only during the call
		if err == nil && n != len(got) {
			err = fmt.Errorf("ThreeHop said %d, handed %d keys", n, len(got))
		}
		slices.Sort(got)
		return got, err
	}
	reads := []struct {
		name string
		read func(sys peers.System, v uint32) ([]string, error)
	}{
		{"get-out", func(sys peers.System, v uint32) ([]string, error) {
			return edges(func(fn peers.EdgeFunc) error { return sys.GetOut(v, fn) })
		}},
		{"get-in", func(sys peers.System, v uint32) ([]string, error) {
			return edges(func(fn peers.EdgeFunc) error { return sys.GetIn(v, fn) })
		}},
		{"get-out@old", func(sys peers.System, v uint32) ([]string, error) {
			return edges(func(fn peers.EdgeFunc) error { return sys.GetOutAt(v, oldRev, fn) })
		}},
		{"3-hop", hop},
	}
	total := map[string]int{}
	for _, r := range reads {
		for _, v := range sample {
			want, err := r.read(systems[0], v)
			if err != nil {
				t.Fatalf("memctl %s of %q: %v", r.name, g.Nodes[v].Key, err)
			}
			total[r.name] += len(want)
			for i, sys := range systems[1:] {
				got, err := r.read(sys, v)
				if err != nil {
					t.Fatalf("%s %s of %q: %v", names[i+1], r.name, g.Nodes[v].Key, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s %s of %q differs from memctl's (-memctl +%s):\n%s", names[i+1], r.name, g.Nodes[v].Key, names[i+1], diff)
				}
			}
		}
	}
	// The answers compared are real ones: memctl's own match the generator.
	wantOut, wantIn := 0, 0
	for _, v := range sample {
		wantOut += outDeg[v]
		wantIn += inDeg[v]
	}
	if total["get-out"] != wantOut || total["get-in"] != wantIn {
		t.Errorf("memctl returned %d out- and %d in-edges over the sample, the generator has %d and %d",
			total["get-out"], total["get-in"], wantOut, wantIn)
	}
	if total["get-out@old"] == 0 || total["get-out@old"] >= total["get-out"] {
		t.Errorf("get-out at the old revision returned %d edges of %d: the revision filter is not exercised", total["get-out@old"], total["get-out"])
	}
	t.Logf("sample of %d nodes: %v edges or keys compared per system", len(sample), total)
}

func argmaxInt(s []int) uint32 {
	best := 0
	for i, v := range s {
		if v > s[best] {
			best = i
		}
	}
	return uint32(best)
}
