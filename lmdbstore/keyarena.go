package lmdbstore

import (
	"slices"
	"unsafe"
)

// keyArena holds a bulk load's keys end to end in blocks of 1 MiB, with
// one 8-byte reference a key: where its bytes are. A key is its bytes
// and those 8, where a string took its bytes rounded up to an allocation
// size class, a 16-byte header, and an object for the collector to find
// (std×20's 2.4M keys: 190 MB as strings). Nothing in it holds a pointer.
//
// A reference is the block (24 bits), the offset in it (20) and the
// length (20). A key never straddles two blocks (a key that does not fit in
// what is left of a block starts the next), and is shorter than a block
// (node keys are at most maxNodeKeyLen bytes).
//
// Blocks are made whole and never resliced, and bytes are never written
// twice: a view (view) reads the keys it holds while the arena grows.
type keyArena struct {
	blocks [][]byte // each keyBlockBytes long
	used   int      // bytes used in the last block
	refs   []uint64 // by key: block<<40 | offset<<20 | length
	size   int64    // bytes of every key
}

// keyBlockBits sets a block's size: 1 MiB.
const keyBlockBits = 20

const keyBlockBytes = 1 << keyBlockBits

// len is the number of keys.
func (a *keyArena) len() int { return len(a.refs) }

// at is key i, a view of the arena's bytes (valid while the arena is
// reachable; never changed).
func (a *keyArena) at(i uint32) string {
	r := a.refs[i]
	n := int(r & (1<<20 - 1))
	if n == 0 {
		return ""
	}
	off := int(r >> 20 & (1<<20 - 1))
	return unsafe.String(&a.blocks[r>>40][off], n)
}

// add appends key (shorter than a block) and returns its index.
func (a *keyArena) add(key string) uint32 {
	if len(a.blocks) == 0 || a.used+len(key) > keyBlockBytes {
		a.blocks = append(a.blocks, make([]byte, keyBlockBytes))
		a.used = 0
	}
	b := len(a.blocks) - 1
	copy(a.blocks[b][a.used:], key)
	a.refs = append(a.refs, uint64(b)<<40|uint64(a.used)<<20|uint64(len(key)))
	a.used += len(key)
	a.size += int64(len(key))
	return uint32(len(a.refs) - 1)
}

// grow makes room for n more references.
func (a *keyArena) grow(n int) { a.refs = slices.Grow(a.refs, n) }

// view is the arena as it is: the keys held now, readable while a
// goes on adding (it writes neither their bytes nor the slices' elements
// the view holds).
func (a *keyArena) view() keyArena {
	return keyArena{blocks: a.blocks[:len(a.blocks):len(a.blocks)], refs: a.refs[:len(a.refs):len(a.refs)], size: a.size}
}
