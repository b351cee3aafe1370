package gen

import (
	"slices"
	"testing"
	"time"
)

func TestPrintStats(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for _, n := range []int{10000, 100000} {
		t0 := time.Now()
		g, _ := Generate(Config{Nodes: n, Seed: 1})
		out, in := g.Degrees()
		so, si := slices.Clone(out), slices.Clone(in)
		slices.Sort(so)
		slices.Sort(si)
		q := func(s []uint32, p float64) uint32 { return s[int(p*float64(len(s)-1))] }
		var rc [11]int
		for _, e := range g.Edges {
			rc[e.Rel]++
		}
		var pl int
		for i := range g.Nodes {
			pl += len(g.Payload(uint32(i), nil))
		}
		t.Logf("n=%d edges=%d (%.2f/node) gen %v out p50=%d p90=%d p99=%d max=%d in p50=%d p90=%d p99=%d max=%d rels=%v avgpayload=%d",
			n, len(g.Edges), float64(len(g.Edges))/float64(n), time.Since(t0),
			q(so, .5), q(so, .9), q(so, .99), so[len(so)-1], q(si, .5), q(si, .9), q(si, .99), si[len(si)-1], rc, pl/n)
	}
}
