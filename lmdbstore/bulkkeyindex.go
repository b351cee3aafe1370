package lmdbstore

import (
	"hash/maphash"
	"math/bits"
)

// keyTableIndex finds a bulk load's key index by the key as given: an
// open-addressing table (linear probing, at most three quarters full) of
// 8-byte slots, each the top 32 bits of the key's hash above its index + 1
// (0: empty). A key's first slot is the top bits of those 32, as many as
// the table's size needs, so growing the table moves every index without
// reading a key (the keys may be in a spill file: keyArena). It holds no
// pointer and no copy of a key: the keys are compared where the load keeps
// them (keyAt), when the 32 bits match. A map[string]uint32 of the same
// keys took 68 bytes a key and was scanned by every collection (81 MB of
// std×10's 1.19M keys); this takes 10.7 to 21.3 (the table doubles when
// three quarters full). Half full at most, std×40's 4.75M keys took a
// table of 2^24 slots, 134 MB (2026-11-28); a search that fails probes
// about 8.5 slots instead of 2.5, two cache lines, and compares a key only
// when 32 bits of hash match.
type keyTableIndex struct {
	seed   maphash.Seed
	seeded bool
	slots  []uint64
	shift  uint // 32 - log2(len(slots)): a hash's first slot is h32 >> shift
	n      int  // keys held
}

// keyTableIndexMin is the smallest table, in slots.
const keyTableIndexMin = 1 << 10

// keyHash is the top 32 bits of raw's hash under t's seed.
func (t *keyTableIndex) keyHash(raw string) uint32 { return uint32(maphash.String(t.seed, raw) >> 32) }

// find is raw's index, if held; keyAt(i) is the key held as index i.
func (t *keyTableIndex) find(raw string, keyAt func(uint32) string) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	h := t.keyHash(raw)
	mask := uint64(len(t.slots) - 1)
	for s := uint64(h >> t.shift); ; s = (s + 1) & mask {
		v := t.slots[s]
		if v == 0 {
			return 0, false
		}
		if uint32(v>>32) == h && keyAt(uint32(v)-1) == raw {
			return uint32(v) - 1, true
		}
	}
}

// insert holds index i for raw, which it does not hold yet.
func (t *keyTableIndex) insert(raw string, i uint32) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.resize(max(keyTableIndexMin, 2*len(t.slots)))
	}
	t.place(t.keyHash(raw), i)
	t.n++
}

// place puts index i with hash h in the first free slot from h's first.
func (t *keyTableIndex) place(h uint32, i uint32) {
	mask := uint64(len(t.slots) - 1)
	s := uint64(h >> t.shift)
	for t.slots[s] != 0 {
		s = (s + 1) & mask
	}
	t.slots[s] = uint64(h)<<32 | uint64(i+1)
}

// grow makes room for n keys in all without resizing.
func (t *keyTableIndex) grow(n int) {
	size := max(keyTableIndexMin, len(t.slots))
	for 3*size < 4*n {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size)
	}
}

// resize moves every index into a table of size slots (a power of two, at
// most 2^32), from the hash bits its slot holds.
func (t *keyTableIndex) resize(size int) {
	t.seedOnce()
	old := t.slots
	t.slots = make([]uint64, size)
	t.shift = 32 - uint(bits.Len(uint(size))-1)
	for _, v := range old {
		if v != 0 {
			t.place(uint32(v>>32), uint32(v)-1)
		}
	}
}

// seedOnce gives t its hash seed, once.
func (t *keyTableIndex) seedOnce() {
	if !t.seeded {
		t.seed, t.seeded = maphash.MakeSeed(), true
	}
}

// clone is a copy of t that t's inserts do not change.
func (t *keyTableIndex) clone() keyTableIndex {
	c := *t
	c.slots = append([]uint64(nil), t.slots...)
	return c
}
