package lmdbstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/unix"
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

// A spilling bulkKeyIndex finds what a map finds, across many flushes of
// its keys in memory into the file, through grow and a clone; the runs it
// replaced are freed.
func TestBulkKeyIndexSpills(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var keys []string
	want := map[string]uint32{}
	var idx bulkKeyIndex
	idx.spillTo(t.TempDir())
	idx.memKeys = 400
	keyAt := func(i uint32) string { return keys[i] }
	var snap bulkKeyIndex
	snapN, flushes := 0, 0
	for round := range 30_000 {
		k := fmt.Sprintf("sym:%d.%x", rng.IntN(20_000), rng.IntN(4))
		i, ok := idx.find(k, keyAt)
		wi, wok := want[k]
		if ok != wok || i != wi {
			t.Fatalf("round %d: find(%q) = %d, %v; want %d, %v", round, k, i, ok, wi, wok)
		}
		if !ok {
			want[k] = uint32(len(keys))
			keys = append(keys, k)
			run := idx.run
			idx.insert(k, uint32(len(keys)-1))
			if idx.run != run {
				flushes++
			}
		}
		if round == 10_000 {
			snap, snapN = idx.clone(), len(keys)
			idx.grow(len(keys) + 10_000)
		}
	}
	if idx.len() != len(want) || idx.mem.n >= idx.memKeys || idx.run.n < len(want)-idx.memKeys || flushes < len(want)/idx.memKeys {
		t.Fatalf("%d keys held (%d in memory, %d in the file, %d flushes), want %d", idx.len(), idx.mem.n, idx.run.n, flushes, len(want))
	}
	// Every key is found where it was put, from memory or the file.
	for i, k := range keys {
		if j, ok := idx.find(k, keyAt); !ok || j != uint32(i) {
			t.Fatalf("find(%q) = %d, %v; want %d", k, j, ok, i)
		}
	}
	// The clone finds none added after it, and no key wrongly (the run it
	// held was freed: its keys in the file read as not found).
	for i, k := range keys {
		if j, ok := snap.find(k, keyAt); ok && (i >= snapN || j != uint32(i)) {
			t.Fatalf("clone: find(%q) = %d; key %d, clone of %d keys", k, j, i, snapN)
		}
	}
	// Replaced runs are freed: the file holds about one run.
	var st unix.Stat_t
	if err := unix.Fstat(int(idx.f.f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if held, run := st.Blocks*512, 8*idx.run.alloc; held > run+1<<16 || idx.run.alloc > idx.run.slots+runIOSlots {
		t.Errorf("the file holds %d bytes for a run of %d", held, run)
	}
	if _, ok := idx.find("sym:none", keyAt); ok {
		t.Error("found a key never inserted")
	}
	idx.release()
	if _, ok := snap.find(keys[0], keyAt); ok {
		t.Error("a clone found a key in a released index's file")
	}
}

// A run holds keys whose 32 hash bits are equal, or crowd one home slot,
// in order: each is found, and a key not held is not, however long the
// stretch of full slots (sorted linear probing, past the last home slot
// into the tail).
func TestBulkKeyRunCrowdedHashes(t *testing.T) {
	var idx bulkKeyIndex
	idx.spillTo(t.TempDir())
	idx.memKeys = 1 << 30 // flushed by hand
	var keys []string
	var hs []uint32
	add := func(h uint32) {
		i := uint32(len(keys))
		keys = append(keys, fmt.Sprintf("k%d", i))
		hs = append(hs, h)
		idx.mem.grow(len(keys))
		idx.mem.place(h, i)
		idx.mem.n++
	}
	for i := range 1500 {
		switch i % 3 {
		case 0:
			add(0xFFFFFFFF - uint32(i%7)) // the last home slot and past it
		case 1:
			add(0x80000000 + uint32(i%5)) // one home slot, five hashes
		default:
			add(uint32(i) * 2654435761)
		}
		if i%500 == 499 {
			idx.flush()
		}
	}
	keyAt := func(i uint32) string { return keys[i] }
	if idx.run.n != len(keys) || idx.run.slots <= int64(1)<<(32-idx.run.shift) {
		t.Fatalf("run of %d keys in %d slots (%d home): want %d keys and a tail", idx.run.n, idx.run.slots, int64(1)<<(32-idx.run.shift), len(keys))
	}
	for i, k := range keys {
		if j, ok := idx.run.find(idx.f, hs[i], k, keyAt); !ok || j != uint32(i) {
			t.Fatalf("key %d (hash %#x): found %d, %v", i, hs[i], j, ok)
		}
		if _, ok := idx.run.find(idx.f, hs[i], k+"x", keyAt); ok {
			t.Fatalf("found %q, never held", k+"x")
		}
	}
	for _, h := range []uint32{0x7FFFFFFF, 0x80000005, 0xFFFFFFF0, 0} {
		if _, ok := idx.run.find(idx.f, h, "none", keyAt); ok {
			t.Fatalf("found a key for hash %#x", h)
		}
	}
}
