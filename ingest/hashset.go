package ingest

import (
	"encoding/binary"
	"hash/maphash"
)

// hashSet is a set of keys, each with a tag, known by a 96-bit hash of
// the key: an open-addressing table (linear probing, at most three
// quarters full) of 16-byte slots, the hash's first 64 bits (0: empty),
// its next 32 and the tag. It holds no key. It keeps what an extraction
// must know of every key of the tree without keeping the keys: the nodes
// a Graph sent to a stream (markSent; the stream's bulk load holds the
// one copy of every key, in its arena) and the types declared in files
// extracted from syntax (extractor.syntaxTypes). A map[string]uint32 of
// the sent keys took 44 bytes a key and kept each key string alive
// (std×20's 2.4M keys: 106 MB of map and 153 MB of strings); this takes
// 21 to 43 bytes a key and nothing for the collector to follow.
//
// Two keys of one extraction with the same 96-bit hash would be taken for
// one (the second as a symbol declared again): for 10^8 keys the chance
// that any two do is below 10^-13, and the hash's seeds are drawn anew
// for every set.
type hashSet struct {
	seed1, seed2 maphash.Seed
	slots        []hashSlot
	n            int
}

type hashSlot struct {
	h1      uint64
	h2, tag uint32
}

// hashSetMin is the smallest table, in slots.
const hashSetMin = 1 << 10

// hash is key's hash: h1 never 0 (an empty slot).
func (s *hashSet) hash(key string) (h1 uint64, h2 uint32) {
	h1 = maphash.String(s.seed1, key)
	if h1 == 0 {
		h1 = 1
	}
	return h1, uint32(maphash.String(s.seed2, key))
}

// slot is the slot holding key's hash, or the empty slot where it would go.
func (s *hashSet) slot(h1 uint64, h2 uint32) int {
	mask := uint64(len(s.slots) - 1)
	for i := h1 & mask; ; i = (i + 1) & mask {
		if sl := &s.slots[i]; sl.h1 == 0 || sl.h1 == h1 && sl.h2 == h2 {
			return int(i)
		}
	}
}

// len is the number of keys held.
func (s *hashSet) len() int { return s.n }

// get is key's tag, if held.
func (s *hashSet) get(key string) (uint32, bool) {
	if s.n == 0 {
		return 0, false
	}
	sl := &s.slots[s.slot(s.hash(key))]
	return sl.tag, sl.h1 != 0
}

// has reports whether key is held.
func (s *hashSet) has(key string) bool {
	_, ok := s.get(key)
	return ok
}

// put holds key with tag (the later tag, when held already).
func (s *hashSet) put(key string, tag uint32) {
	if s.slots == nil {
		s.seed1, s.seed2 = maphash.MakeSeed(), maphash.MakeSeed()
		s.slots = make([]hashSlot, hashSetMin)
	}
	h1, h2 := s.hash(key)
	sl := &s.slots[s.slot(h1, h2)]
	if sl.h1 != 0 {
		sl.tag = tag
		return
	}
	*sl = hashSlot{h1: h1, h2: h2, tag: tag}
	s.n++
	if 4*s.n > 3*len(s.slots) {
		s.resize(2 * len(s.slots))
	}
}

// resize moves every slot into a table of size slots (a power of two).
func (s *hashSet) resize(size int) {
	old := s.slots
	s.slots = make([]hashSlot, size)
	for _, sl := range old {
		if sl.h1 != 0 {
			s.slots[s.slot(sl.h1, sl.h2)] = sl
		}
	}
}

// del drops key, if held: the slots after it that probed past it move
// back (no tombstones).
func (s *hashSet) del(key string) {
	if s.n == 0 {
		return
	}
	i := s.slot(s.hash(key))
	if s.slots[i].h1 == 0 {
		return
	}
	mask := len(s.slots) - 1
	for j := (i + 1) & mask; s.slots[j].h1 != 0; j = (j + 1) & mask {
		// Slot j moves to the hole at i unless its home lies cyclically in (i, j].
		home := int(s.slots[j].h1 & uint64(mask))
		if (j-home)&mask >= (j-i)&mask {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = hashSlot{}
	s.n--
}

// hashSlotSize is a slot's size in a parked set (hashSet.appendSlots):
// h1 (8 bytes), h2 and tag (4 each), little-endian.
const hashSlotSize = 16

// appendSlots appends the set's held slots to b, hashSlotSize bytes each.
func (s *hashSet) appendSlots(b []byte) []byte {
	for _, sl := range s.slots {
		if sl.h1 != 0 {
			b = binary.LittleEndian.AppendUint64(b, sl.h1)
			b = binary.LittleEndian.AppendUint32(b, sl.h2)
			b = binary.LittleEndian.AppendUint32(b, sl.tag)
		}
	}
	return b
}

// hashSetOf is the set of the slots appendSlots wrote of a set with those
// seeds (the hashes are of the seeds the set was made with).
func hashSetOf(seed1, seed2 maphash.Seed, b []byte) *hashSet {
	n := len(b) / hashSlotSize
	if n == 0 {
		return &hashSet{} // seeds drawn at the first put
	}
	size := 16
	for 4*n > 3*size {
		size *= 2
	}
	s := &hashSet{seed1: seed1, seed2: seed2, slots: make([]hashSlot, size), n: n}
	for ; len(b) >= hashSlotSize; b = b[hashSlotSize:] {
		sl := hashSlot{h1: binary.LittleEndian.Uint64(b), h2: binary.LittleEndian.Uint32(b[8:]), tag: binary.LittleEndian.Uint32(b[12:])}
		s.slots[s.slot(sl.h1, sl.h2)] = sl
	}
	return s
}
