package lmdbstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// keyTableIndex finds what a map of the same keys finds, through growth,
// grow and clone.
func TestKeyTableIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	var keys []string
	want := map[string]uint32{}
	var idx keyTableIndex
	keyAt := func(i uint32) string { return keys[i] }
	var snap keyTableIndex
	snapN := 0
	for round := range 40_000 {
		k := fmt.Sprintf("sym:%d.%x", rng.IntN(30_000), rng.IntN(4)) // about half repeat
		i, ok := idx.find(k, keyAt)
		wi, wok := want[k]
		if ok != wok || i != wi {
			t.Fatalf("round %d: find(%q) = %d, %v; want %d, %v", round, k, i, ok, wi, wok)
		}
		if !ok {
			want[k] = uint32(len(keys))
			keys = append(keys, k)
			idx.insert(k, uint32(len(keys)-1))
		}
		if round == 5_000 {
			snap, snapN = idx.clone(), len(keys)
			idx.grow(len(keys) + 20_000)
		}
	}
	if idx.n != len(want) || 4*idx.n > 3*len(idx.slots) || 8*idx.n <= 3*len(idx.slots) {
		t.Errorf("%d keys in %d slots, want %d, from three eighths to three quarters full", idx.n, len(idx.slots), len(want))
	}
	// The clone holds the keys it had, and none added after.
	for i, k := range keys {
		j, ok := snap.find(k, keyAt)
		if held := i < snapN; ok != held || (held && j != uint32(i)) {
			t.Fatalf("clone: find(%q) = %d, %v; key %d, clone of %d keys", k, j, ok, i, snapN)
		}
	}
	if _, ok := idx.find("sym:none", keyAt); ok {
		t.Error("found a key never inserted")
	}
}
