package lmdbstore

import "hash/maphash"

// keyTableIndex finds a bulk load's key index by the key as given: an
// open-addressing table (linear probing, at most half full) of 8-byte
// slots, each the key's 32-bit hash above its index + 1 (0: empty). It
// holds no pointer and no copy of a key: the keys are compared where the
// load keeps them (keyAt). A map[string]uint32 of the same keys took 68
// bytes a key and was scanned by every collection (81 MB of std×10's
// 1.19M keys); this takes 16 to 32 (the table doubles when half full).
type keyTableIndex struct {
	seed  maphash.Seed
	slots []uint64
	n     int // keys held
}

// keyTableIndexMin is the smallest table, in slots.
const keyTableIndexMin = 1 << 10

// keyHash is raw's hash under t's seed.
func (t *keyTableIndex) keyHash(raw string) uint64 { return maphash.String(t.seed, raw) }

// find is raw's index, if held; keyAt(i) is the key held as index i.
func (t *keyTableIndex) find(raw string, keyAt func(uint32) string) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	h := t.keyHash(raw)
	mask := uint64(len(t.slots) - 1)
	for s := h & mask; ; s = (s + 1) & mask {
		v := t.slots[s]
		if v == 0 {
			return 0, false
		}
		if uint32(v>>32) == uint32(h>>32) && keyAt(uint32(v)-1) == raw {
			return uint32(v) - 1, true
		}
	}
}

// insert holds index i for raw, which it does not hold yet.
func (t *keyTableIndex) insert(raw string, i uint32, keyAt func(uint32) string) {
	if 2*(t.n+1) > len(t.slots) {
		t.resize(max(keyTableIndexMin, 2*len(t.slots)), keyAt)
	}
	t.place(t.keyHash(raw), i)
	t.n++
}

// place puts index i with hash h in the first free slot from h.
func (t *keyTableIndex) place(h uint64, i uint32) {
	mask := uint64(len(t.slots) - 1)
	s := h & mask
	for t.slots[s] != 0 {
		s = (s + 1) & mask
	}
	t.slots[s] = h>>32<<32 | uint64(i+1)
}

// grow makes room for n keys in all without resizing.
func (t *keyTableIndex) grow(n int, keyAt func(uint32) string) {
	size := max(keyTableIndexMin, len(t.slots))
	for size < 2*n {
		size *= 2
	}
	if size > len(t.slots) {
		t.resize(size, keyAt)
	}
}

// resize moves every index into a table of size slots (a power of two),
// hashing each key again (a slot keeps 32 bits of its hash, the probe
// position needs the low ones).
func (t *keyTableIndex) resize(size int, keyAt func(uint32) string) {
	if t.slots == nil {
		t.seed = maphash.MakeSeed() // the first table
	}
	old := t.slots
	t.slots = make([]uint64, size)
	for _, v := range old {
		if v != 0 {
			i := uint32(v) - 1
			t.place(t.keyHash(keyAt(i)), i)
		}
	}
}

// clone is a copy of t that t's inserts do not change.
func (t *keyTableIndex) clone() keyTableIndex {
	c := *t
	c.slots = append([]uint64(nil), t.slots...)
	return c
}
