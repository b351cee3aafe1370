package engines

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortNodes: sortNodes orders lists of every size (below and above the
// bitmap's threshold, spanning one word or the whole range, with a
// repeated node) as slices.Sort does, and leaves its bitmap clear for the
// next call.
func TestSortNodes(t *testing.T) {
	const n = 5000
	s := &scratch{n: n}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		size := rng.IntN(2 * n / 3)
		if trial%4 == 0 {
			size = 256 + rng.IntN(64) // around the threshold
		}
		list := make([]uint32, 0, size)
		switch trial % 3 {
		case 0: // distinct, anywhere
			for _, v := range rng.Perm(n)[:size] {
				list = append(list, uint32(v))
			}
		case 1: // distinct, a narrow range
			base := rng.IntN(n - size)
			for _, v := range rng.Perm(size) {
				list = append(list, uint32(base+v))
			}
		case 2: // one node twice
			for _, v := range rng.Perm(n)[:size] {
				list = append(list, uint32(v))
			}
			if size > 1 {
				list[rng.IntN(size)] = list[rng.IntN(size)]
			}
		}
		want := slices.Clone(list)
		slices.Sort(want)
		s.sortNodes(list)
		if !slices.Equal(list, want) {
			t.Fatalf("trial %d (%d nodes): sorted differently", trial, size)
		}
		for w, x := range s.bits {
			if x != 0 {
				t.Fatalf("trial %d: bitmap word %d left set", trial, w)
			}
		}
	}
}

// TestKthLargest: kthLargest answers what a descending sort puts at k, on
// random lists with many ties, sorted and reversed lists, for every k of
// short lists and random ks of long ones.
func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(3000)
		xs := make([]float64, n)
		for i := range xs {
			switch trial % 4 {
			case 0:
				xs[i] = rng.Float64()
			case 1:
				xs[i] = float64(rng.IntN(5)) // ties
			case 2:
				xs[i] = float64(i) // ascending
			case 3:
				xs[i] = float64(n - i) // descending
			}
		}
		desc := slices.Clone(xs)
		slices.Sort(desc)
		slices.Reverse(desc)
		ks := []int{1, n, 1 + rng.IntN(n)}
		if n < 40 {
			ks = ks[:0]
			for k := 1; k <= n; k++ {
				ks = append(ks, k)
			}
		}
		for _, k := range ks {
			if got := kthLargest(slices.Clone(xs), k); got != desc[k-1] {
				t.Fatalf("trial %d (n %d), k %d: %v, want %v", trial, n, k, got, desc[k-1])
			}
		}
	}
}

// TestSortByScore: sortByScore orders as slices.SortFunc with its
// comparison (score descending, then node), on short and long lists, with
// many tied scores, +Inf, and scores spanning many magnitudes.
func TestSortByScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tmp []Scored
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(4000)
		xs := make([]Scored, n)
		for i := range xs {
			xs[i].Node = uint32(rng.IntN(1 << 20))
			xs[i].Score = testScore(rng, trial%4) // 1: ties, the node decides
		}
		want := slices.Clone(xs)
		slices.SortFunc(want, func(a, b Scored) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.Node, b.Node)
		})
		tmp = sortByScore(xs, tmp)
		if !slices.Equal(xs, want) {
			t.Fatalf("trial %d (%d scores): ordered differently", trial, n)
		}
	}
}

// TestSortRankCands: sortRankCands orders related candidates as
// slices.SortFunc with ranking's comparison (score descending, then
// recency rank, PageRank descending, node), on short and long lists, with
// scores tied in runs (the later keys decide), +Inf, scores spanning many
// magnitudes, and a list holding a zero score (sorted without the radix).
func TestSortRankCands(t *testing.T) {
	order := func(a, b rankCand) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.recent, b.recent); c != 0 {
			return c
		}
		if c := cmp.Compare(b.pr, a.pr); c != 0 {
			return c
		}
		return cmp.Compare(a.Node, b.Node)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var tmp []rankCand
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(4000)
		xs := make([]rankCand, n)
		for i := range xs {
			xs[i].Node = uint32(rng.IntN(1 << 20))
			xs[i].recent = int32(rng.IntN(5))
			xs[i].pr = float64(rng.IntN(3)) / 7
			xs[i].Score = testScore(rng, trial%5) // 1: ties, the later keys decide
		}
		want := slices.Clone(xs)
		slices.SortFunc(want, order)
		tmp = sortRankCands(xs, tmp, order)
		if !slices.Equal(xs, want) {
			t.Fatalf("trial %d (%d candidates): ordered differently", trial, n)
		}
	}
}

// testScore is a score of one of the sorting tests' kinds: 0 uniform, 1
// few values (ties), 2 spanning many magnitudes, 3 uniform with some +Inf,
// 4 few values with zero among them.
func testScore(rng *rand.Rand, kind int) float64 {
	switch kind {
	case 1:
		return float64(1 + rng.IntN(3))
	case 2:
		return math.Ldexp(1+rng.Float64(), rng.IntN(2000)-1000)
	case 3:
		if rng.IntN(50) == 0 {
			return math.Inf(1)
		}
	case 4:
		return float64(rng.IntN(4))
	}
	return rng.Float64() + 1e-300
}
