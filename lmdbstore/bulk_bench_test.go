package lmdbstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkBulkInSideOrder: the in side's order of a load of 100,000 keys
// and 800,000 edges over five relations, sorted as the out side is
// (sortSide) and counted from the out side's order (inFromOut, what
// Commit uses).
func BenchmarkBulkInSideOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newStore(b, Options{NoSync: true})
	bk := s.NewBulk(WriteMeta{})
	rels := []string{"calls", "imports", "defines", "tests", "constrains"}
	keys := make([]string, 100000)
	for i := range keys {
		keys[i] = fmt.Sprint("sym:k", i)
	}
	refs, _ := bk.Keys(keys)
	for i := range 100000 {
		for range 8 {
			if err := bk.PutEdgeRef(refs[i], rels[rng.IntN(5)], refs[rng.IntN(100000)], 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	p, _ := bk.plan()
	out := bk.sortSide(p, true)
	b.Run("sortSide", func(b *testing.B) {
		for b.Loop() {
			bk.sortSide(p, false)
		}
	})
	b.Run("inFromOut", func(b *testing.B) {
		for b.Loop() {
			bk.inFromOut(p, out, maxInBuckets(len(out)))
		}
	})
}
