package lmdbstore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestUvarintLen: uvarintLen is the length binary.PutUvarint writes, at
// every 7-bit boundary and on random values.
func TestUvarintLen(t *testing.T) {
	vals := []uint64{0, math.MaxUint64}
	for k := 1; k <= 9; k++ {
		vals = append(vals, 1<<(7*k)-1, 1<<(7*k))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		vals = append(vals, rng.Uint64()>>rng.IntN(64))
	}
	var buf [binary.MaxVarintLen64]byte
	for _, v := range vals {
		if got, want := uvarintLen(v), binary.PutUvarint(buf[:], v); got != want {
			t.Errorf("uvarintLen(%d) = %d, PutUvarint wrote %d", v, got, want)
		}
	}
}
