package lmdbstore

import (
	"math/rand/v2"
	"testing"
)

// TestChunkedMatchesSlice: a chunked list reads back as a plain slice given
// the same appends, writes and truncations does, across chunk boundaries,
// and an element's pointer stays valid while the list grows.
func TestChunkedMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var c chunked[uint64]
	var want []uint64
	first := (*uint64)(nil)
	check := func(at string) {
		t.Helper()
		if c.len() != len(want) {
			t.Fatalf("%s: len %d, want %d", at, c.len(), len(want))
		}
		for i, w := range want {
			if got := *c.at(i); got != w {
				t.Fatalf("%s: element %d is %d, want %d", at, i, got, w)
			}
		}
	}
	for round := range 6 {
		for range rng.IntN(3 * chunkLen) {
			v := rng.Uint64()
			if i := c.add(v); i != len(want) {
				t.Fatalf("add returned %d, want %d", i, len(want))
			}
			want = append(want, v)
			if first == nil {
				first = c.at(0)
			}
		}
		for range 100 {
			i := rng.IntN(len(want))
			v := rng.Uint64()
			*c.at(i), want[i] = v, v
		}
		if first != c.at(0) {
			t.Fatal("element 0 moved as the list grew")
		}
		check("after appends")
		n := 0
		switch round % 3 {
		case 0:
			n = rng.IntN(len(want) + 1)
		case 1:
			n = len(want) &^ (chunkLen - 1) // on a chunk boundary
		}
		c.truncate(n)
		want = want[:n]
		if len(c.chunks) != (n+chunkLen-1)/chunkLen {
			t.Fatalf("truncated to %d: %d chunks kept", n, len(c.chunks))
		}
		check("after truncate")
		if n == 0 {
			first = nil
		}
	}
}
