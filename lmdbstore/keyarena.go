package lmdbstore

import (
	"runtime"
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
//
// Spilling (spillTo; SPEC §2, "Bulk loads"): past its first resident
// blocks, an arena makes each new block a shared, writable mapping of an
// unnamed file beside the store, as chunked does its chunks, and evict
// takes the full blocks' pages out of the process's memory (they stay in
// the page cache; a read maps them back). A key read from a mapped block
// (at) is valid while the arena or a view of it is reachable: one that
// outlives the load (an error's) is a copy.
type keyArena struct {
	blocks [][]byte        // each keyBlockBytes long
	used   int             // bytes used in the last block
	refs   chunked[uint64] // by key: block<<40 | offset<<20 | length
	size   int64           // bytes of every key
	spill  *keySpill
	// blockBytes is keyBlockBytes unless a test sets it (0:
	// keyBlockBytes; a multiple of the page size, above maxNodeKeyLen).
	blockBytes int
}

// keySpill is an arena's spill file and the mappings of its blocks
// (chunkSpill: maps has an entry per block, nil in memory), and its
// references' (refs: chunked spills past refsResident chunks), shared with
// the arena's views; a cleanup releases both once neither holds them.
type keySpill struct{ s, refs *chunkSpill }

// keyBlockBits sets a block's size: 1 MiB.
const keyBlockBits = 20

const keyBlockBytes = 1 << keyBlockBits

// keysResident is how many blocks of keys an arena keeps in the
// process's memory before it spills (16 MiB: some 300,000 keys).
const keysResident = 16

// refsResident is how many chunks of references (65,536 keys each, 512
// KiB) an arena keeps in the process's memory before it spills them (4
// MiB: the same 300,000 keys or so).
const refsResident = 8

// len is the number of keys.
func (a *keyArena) len() int { return a.refs.len() }

// at is key i, a view of the arena's bytes (valid while the arena or a
// view of it is reachable; never changed).
func (a *keyArena) at(i uint32) string {
	r := *a.refs.at(int(i))
	n := int(r & (1<<20 - 1))
	if n == 0 {
		return ""
	}
	off := int(r >> 20 & (1<<20 - 1))
	return unsafe.String(&a.blocks[r>>40][off], n)
}

// add appends key (shorter than a block) and returns its index.
func (a *keyArena) add(key string) uint32 {
	size := a.blockSize()
	if len(a.blocks) == 0 || a.used+len(key) > size {
		a.blocks = append(a.blocks, a.newBlock(size))
		a.used = 0
	}
	b := len(a.blocks) - 1
	copy(a.blocks[b][a.used:], key)
	i := a.refs.add(uint64(b)<<40 | uint64(a.used)<<20 | uint64(len(key)))
	a.used += len(key)
	a.size += int64(len(key))
	return uint32(i)
}

// blockSize is a block's length in bytes.
func (a *keyArena) blockSize() int {
	if a.blockBytes != 0 {
		return a.blockBytes
	}
	return keyBlockBytes
}

// newBlock is an empty block of size bytes: a mapping of the spill file
// when the arena spills and holds its resident blocks already, else
// memory.
func (a *keyArena) newBlock(size int) []byte {
	if a.spill == nil {
		return make([]byte, size)
	}
	if m := a.spill.s.next(len(a.blocks), size); m != nil {
		return m
	}
	return make([]byte, size)
}

// read is key i as at has it, but read from the spill file into *buf
// (grown as needed, reused) when its block is spilled, rather than through
// the mapping: for passes that read keys at random (the ids keyspace, in
// id order), whose reads through the mapping would map a large folio of
// the file each (as payArena.read), so that the whole file soon was
// resident between evictions. The bytes are valid until the next read
// into *buf. For the arena itself, not a view (it reads the spill's
// mappings, which the arena appends to).
func (a *keyArena) read(i uint32, buf *[]byte) []byte {
	r := a.refs.load(int(i)) // its place read from the file too, where it spills
	n := int(r & (1<<20 - 1))
	blk := r >> 40
	if n == 0 || a.spill == nil || a.spill.s.maps[blk] == nil {
		return unsafe.Slice(unsafe.StringData(a.at(i)), n)
	}
	if b, ok := a.spill.s.readAt(a.spill.s.offs[blk]+int64(r>>20&(1<<20-1)), n, buf); ok {
		return b
	}
	return unsafe.Slice(unsafe.StringData(a.at(i)), n) // as readable through the mapping, if at all
}

// spillTo makes the blocks past the first resident ones mappings of an
// unnamed file in dir.
func (a *keyArena) spillTo(dir string, resident int) {
	ks := &keySpill{s: &chunkSpill{dir: dir, resident: resident}, refs: &chunkSpill{dir: dir, resident: refsResident}}
	runtime.AddCleanup(ks, func(s keySpill) { s.s.release(); s.refs.release() }, *ks)
	a.spill = ks
	a.refs.spill = ks.refs
}

// evict takes the pages of every mapped block but the last keysRecent
// (the one keys are added to and those just before: a load looks up the
// keys it added last most) out of the process's memory: a pass that reads
// keys at random calls it every so often, so that the pages it read do not
// add up to the whole file. Safe beside readers of the arena and its
// views.
func (a *keyArena) evict() {
	if a.spill == nil {
		return
	}
	a.spill.s.evictRange(0, max(0, len(a.spill.s.maps)-keysRecent))
	a.refs.evict()
}

// keysRecent is how many of its last blocks an arena's evict leaves.
const keysRecent = 4

// spills reports whether some block is a mapping of the spill file.
func (a *keyArena) spills() bool {
	return a.spill != nil && a.spill.s.mapped()
}

// view is the arena as it is: the keys held now, readable while a
// goes on adding (it writes neither their bytes nor the slices' elements
// the view holds). It holds the arena's spill file, not the right to
// add or evict.
func (a *keyArena) view() keyArena {
	return keyArena{blocks: a.blocks[:len(a.blocks):len(a.blocks)], refs: a.refs.view(), size: a.size, spill: a.spill,
		blockBytes: a.blockBytes}
}
