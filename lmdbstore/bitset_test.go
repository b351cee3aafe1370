package lmdbstore

import (
	"math/rand/v2"
	"testing"
)

// TestBitSet: a set's members are the integers added, against a map, at
// word edges and across sizes.
func TestBitSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 63, 64, 65, 128, 1000} {
		s, want := newBitSet(n), map[uint32]bool{}
		for range n / 2 {
			i := uint32(rng.IntN(n))
			s.set(i)
			want[i] = true
		}
		s.set(uint32(n - 1))
		want[uint32(n-1)] = true
		for i := range uint32(n) {
			if s.has(i) != want[i] {
				t.Fatalf("n=%d: has(%d) = %v, want %v", n, i, s.has(i), want[i])
			}
		}
	}
}
