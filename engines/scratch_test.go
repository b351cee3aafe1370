package engines

import (
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
