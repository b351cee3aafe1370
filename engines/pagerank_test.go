package engines

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memctl/memctl/snapshot"
)

// prGraph: a→b, a→c, b→c; c is dangling.
var prGraph = testGraph{keys: []string{"a", "b", "c"}, edges: []testEdge{{0, 1, 1, 0.25}, {0, 2, 1, 0.75}, {1, 2, 1, 1}}}

// TestPageRankHandComputed solves the fixed point by hand. With d = .85,
// N = 3 and c dangling, every node receives base = .05 + .85·rc/3, so
//
//	ra = base
//	rb = base + .85·ra/2              = 1.425·base
//	rc = base + .85·ra/2 + .85·rb     = 2.63625·base
//
// and ra + rb + rc = 1 gives base = 1/5.06125. Weighted (a splits .25/.75):
// rb = 1.2125·base, rc = (1 + .6375 + 1.030625)·base = 2.668125·base, base
// = 1/4.880625.
func TestPageRankHandComputed(t *testing.T) {
	e := buildEngine(t, prGraph)
	tight := PageRankParams{Damping: .85, Tolerance: 1e-15, MaxIterations: 500}
	for _, tc := range []struct {
		weighted bool
		want     []float64
	}{
		{false, []float64{1 / 5.06125, 1.425 / 5.06125, 2.63625 / 5.06125}},
		{true, []float64{1 / 4.880625, 1.2125 / 4.880625, 2.668125 / 4.880625}},
	} {
		p := tight
		p.Weighted = tc.weighted
		got, _, err := e.PageRank(p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, got, approx); d != "" {
			t.Errorf("weighted=%v (-want +got):\n%s", tc.weighted, d)
		}
		// The defaults stop at L1 change < 1e-6, within 1e-5 of the fixed
		// point here.
		p = DefaultPageRankParams()
		p.Weighted = tc.weighted
		got, st, err := e.PageRank(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Delta >= 1e-6 || st.Iterations > 50 {
			t.Errorf("defaults stopped at %+v", st)
		}
		if d := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-5)); d != "" {
			t.Errorf("defaults weighted=%v (-want +got):\n%s", tc.weighted, d)
		}
	}
}

// TestPageRankSumsToOne on random graphs with dangling nodes, both modes.
func TestPageRankSumsToOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for trial := range 40 {
		n := 1 + rng.IntN(200)
		e := buildEngine(t, randomGraph(rng, n, rng.IntN(3*n)))
		for _, weighted := range []bool{false, true} {
			p := DefaultPageRankParams()
			p.Weighted = weighted
			ranks, _, err := e.PageRank(p)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, r := range ranks {
				if !(r > 0) {
					t.Fatalf("trial %d: rank %v", trial, r)
				}
				sum += r
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("trial %d weighted=%v: sum = %.17g", trial, weighted, sum)
			}
		}
	}
}

func TestTopRanks(t *testing.T) {
	got := TopRanks([]float64{.2, .4, .2, .2}, 3)
	want := []Scored{{1, .4}, {0, .2}, {2, .2}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestStoredPageRank: the export hook's section is what PageRank computes,
// StoredOrComputedPageRank returns it, and a damaged section is a
// corruption error.
func TestStoredPageRank(t *testing.T) {
	b := snapshotBytes(t, prGraph, snapshot.WriterOptions{Extra: PageRankSection})
	e := mustEngine(t, b)
	want, _, err := e.PageRank(DefaultPageRankParams())
	if err != nil {
		t.Fatal(err)
	}
	got, err := StoredOrComputedPageRank(e, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stored (-computed +stored):\n%s", d)
	}
	off, _ := section(t, b, snapshot.KindPageRank)
	binary.LittleEndian.PutUint64(b[off:], math.Float64bits(math.NaN()))
	if _, err := StoredOrComputedPageRank(mustEngine(t, b), false); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Errorf("NaN rank: err = %v", err)
	}
	// Weighted is always computed.
	if _, err := StoredOrComputedPageRank(mustEngine(t, b), true); err != nil {
		t.Errorf("weighted: %v", err)
	}
}

// referencePageRank is the power iteration as SPEC.md §8.4 states it,
// reading each node's in-list from the graph at every iteration (as
// PageRank did before it looked them up once): the same operations in the
// same order, so it must give the same bits.
func referencePageRank(t *testing.T, e *Engine, p PageRankParams) ([]float64, int) {
	n := e.numNodes
	outW := make([]float64, n)
	for u := range n {
		ts, _, ws, err := e.g.Out(uint32(u))
		if err != nil {
			t.Fatal(err)
		}
		for i := range ts {
			if p.Weighted {
				outW[u] += edgeWeight(ws[i])
			} else {
				outW[u]++
			}
		}
	}
	rank := make([]float64, n)
	for i := range rank {
		rank[i] = 1 / float64(n)
	}
	iters := 0
	for iters < p.MaxIterations {
		share, dangling := make([]float64, n), 0.0
		for u := range n {
			if outW[u] > 0 {
				share[u] = rank[u] / outW[u]
			} else {
				dangling += rank[u]
			}
		}
		base := (1-p.Damping)/float64(n) + p.Damping*dangling/float64(n)
		next := make([]float64, n)
		for v := range n {
			ss, _, ws, err := e.g.In(uint32(v))
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for i, u := range ss {
				if p.Weighted {
					sum += share[u] * edgeWeight(ws[i])
				} else {
					sum += share[u]
				}
			}
			next[v] = base + p.Damping*sum
		}
		delta := 0.0
		for i := range rank {
			delta += math.Abs(next[i] - rank[i])
		}
		rank = next
		iters++
		if delta < p.Tolerance {
			break
		}
	}
	total := 0.0
	for _, r := range rank {
		total += r
	}
	for i := range rank {
		rank[i] /= total
	}
	return rank, iters
}

// TestPageRankSameBitsAsReference: on random graphs, both modes, the
// ranks are bit for bit the reference's (the PageRank section of an
// export must not change with how the iteration walks the graph).
func TestPageRankSameBitsAsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 40 {
		n := 1 + rng.IntN(300)
		e := buildEngine(t, randomGraph(rng, n, rng.IntN(4*n)))
		for _, weighted := range []bool{false, true} {
			p := DefaultPageRankParams()
			p.Weighted = weighted
			got, st, err := e.PageRank(p)
			if err != nil {
				t.Fatal(err)
			}
			want, iters := referencePageRank(t, e, p)
			if st.Iterations != iters {
				t.Fatalf("trial %d weighted=%v: %d iterations, reference %d", trial, weighted, st.Iterations, iters)
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("trial %d weighted=%v: rank[%d] = %v, reference %v", trial, weighted, i, got[i], want[i])
				}
			}
		}
	}
}
