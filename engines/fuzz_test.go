package engines

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// graphFromBytes decodes a small graph and a query from fuzz input: byte 0
// is the node count (1..32), byte 1 the depth (0..7), then 4-byte edges
// (src, dst, relation 1..3, weight/255 — 255 maps to 1.5, above the clamp).
func graphFromBytes(data []byte) (testGraph, int, bool) {
	if len(data) < 2 {
		return testGraph{}, 0, false
	}
	n := 1 + int(data[0])%32
	depth := int(data[1]) % 8
	g := testGraph{}
	for i := range n {
		g.keys = append(g.keys, fmt.Sprintf("k%02d", i))
	}
	seen := map[[3]int]bool{}
	for p := 2; p+4 <= len(data); p += 4 {
		e := testEdge{src: int(data[p]) % n, dst: int(data[p+1]) % n, rel: uint32(1 + int(data[p+2])%3), w: float32(data[p+3]) / 255}
		if data[p+3] == 255 {
			e.w = 1.5
		}
		k := [3]int{e.src, e.dst, int(e.rel)}
		if seen[k] {
			continue
		}
		seen[k] = true
		g.edges = append(g.edges, e)
	}
	return g, depth, true
}

// FuzzActivateStrategiesAgree: on any graph, wavefront and heap return the
// same results, bit for bit.
func FuzzActivateStrategiesAgree(f *testing.F) {
	f.Add([]byte{5, 5, 0, 1, 0, 255, 1, 2, 1, 128, 2, 0, 2, 200, 0, 3, 2, 255})
	f.Add([]byte{3, 2, 0, 1, 1, 10, 1, 2, 1, 10})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, depth, ok := graphFromBytes(data)
		if !ok || len(g.edges) > 200 {
			return
		}
		e := buildEngine(t, g)
		seeds := []Seed{{0, 1}, {uint32(len(g.keys) - 1), 0.5}}
		p := DefaultActivationParams()
		p.TopK = 0
		p.MaxDepth = depth
		p.Strategy = StrategyWavefront
		wave, err := e.Activate(seeds, p)
		if err != nil {
			t.Fatal(err)
		}
		p.Strategy = StrategyHeap
		heap, err := e.Activate(seeds, p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wave, heap); d != "" {
			t.Fatalf("wavefront vs heap (-wave +heap):\n%s", d)
		}
	})
}
