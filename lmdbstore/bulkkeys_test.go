package lmdbstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// TestBulkKeysCopied: a load copies each new key into its arena, out of the
// caller's string (which may be a view of a larger buffer it must not
// keep alive); an edge endpoint and a node of the same key share one entry.
func TestBulkKeysCopied(t *testing.T) {
	s := newStore(t, Options{})
	b := s.NewBulk(WriteMeta{})
	buf := strings.Repeat("x", 64) + "sym:a.F" + strings.Repeat("y", 64)
	key := buf[64 : 64+len("sym:a.F")]
	ref, err := b.Key(key)
	if err != nil {
		t.Fatal(err)
	}
	kept := b.keys.at(uint32(ref))
	if kept != key {
		t.Fatalf("kept %q", kept)
	}
	if p := uintptr(unsafe.Pointer(unsafe.StringData(kept))); p >= uintptr(unsafe.Pointer(unsafe.StringData(buf))) && p < uintptr(unsafe.Pointer(unsafe.StringData(buf)))+uintptr(len(buf)) {
		t.Fatal("the load kept the caller's bytes")
	}
	if err := b.PutNode(NodePut{Key: "sym:a.F"}); err != nil {
		t.Fatal(err)
	}
	if b.keys.len() != 1 {
		t.Fatalf("%d keys for one", b.keys.len())
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestKeyArena: keys of every length up to maxNodeKeyLen, many blocks'
// worth, read back as added, from the arena and from a view taken part
// way (which later adds leave as it was).
func TestKeyArena(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spill    bool
		resident int
		block    int
	}{
		{name: "memory"},
		{name: "spilled", spill: true, resident: 0, block: 2 * maxNodeKeyLen},
		{name: "spilled past 2 blocks", spill: true, resident: 2, block: 4 * maxNodeKeyLen},
		{name: "spilled, 1 MiB blocks", spill: true, resident: 1},
	} {
		t.Run(tc.name, func(t *testing.T) { testKeyArena(t, tc.spill, tc.resident, tc.block) })
	}
}

// testKeyArena: keys of every length up to past maxNodeKeyLen, and empty
// ones, read back from the arena and from a view taken partway, as the
// arena grows; spilled, with the pages evicted every few keys.
func testKeyArena(t *testing.T, spill bool, resident, block int) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a keyArena
	a.blockBytes = block
	if spill {
		a.spillTo(t.TempDir(), resident)
		a.spill.refs.resident = resident // the references too: mapped past as many chunks
	}
	var want []string
	var v keyArena
	var vn int
	var total int64
	check := func(i int) {
		if got := a.at(uint32(i)); got != want[i] {
			t.Fatalf("key %d: %q…, want %q…", i, got[:min(len(got), 20)], want[i][:min(len(want[i]), 20)])
		}
	}
	for i := 0; total < 3*keyBlockBytes; i++ {
		n := rng.IntN(maxNodeKeyLen + 1)
		if i%7 == 0 {
			n = rng.IntN(40)
		}
		k := fmt.Sprintf("%d:", i) + strings.Repeat(string(rune('a'+i%26)), n)
		if i%50 == 3 {
			k = ""
		}
		if got := a.add(k); int(got) != i {
			t.Fatalf("key %d got index %d", i, got)
		}
		want = append(want, k)
		total += int64(len(k))
		if i == 500 {
			v, vn = a.view(), a.len()
		}
		if spill && i%5 == 0 {
			a.evict()
			check(rng.IntN(i + 1)) // an earlier key, its pages evicted
		}
	}
	if a.len() != len(want) || a.size != total || len(a.blocks) < 3 {
		t.Fatalf("%d keys, %d bytes, %d blocks; want %d keys, %d bytes, 3 blocks or more", a.len(), a.size, len(a.blocks), len(want), total)
	}
	if a.spills() != spill || a.refs.spills() != (spill && resident == 0) {
		t.Fatalf("spills %v (references %v), want %v", a.spills(), a.refs.spills(), spill)
	}
	if spill {
		for i, m := range a.spill.s.maps {
			if mapped := m != nil; mapped != (i >= resident) {
				t.Fatalf("block %d mapped %v, resident blocks %d", i, mapped, resident)
			}
		}
	}
	var buf []byte
	for i := range want {
		check(i)
		if got := a.read(uint32(i), &buf); string(got) != want[i] {
			t.Fatalf("key %d read: %q…, want %q…", i, got[:min(len(got), 20)], want[i][:min(len(want[i]), 20)])
		}
	}
	if spill && len(buf) == 0 {
		t.Fatal("no key read from the spill file")
	}
	if v.len() != vn {
		t.Fatalf("view holds %d keys, want %d", v.len(), vn)
	}
	a.evict()
	for i := range vn {
		if got := v.at(uint32(i)); got != want[i] {
			t.Fatalf("view key %d: %q…", i, got[:min(len(got), 20)])
		}
	}
}
