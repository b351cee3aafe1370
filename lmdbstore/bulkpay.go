package lmdbstore

// A bulk load's payloads, end to end in large blocks that hold no
// pointer: an operation keeps a payRef (block, offset, length), not a
// slice of its own. A load of a large tree holds hundreds of thousands of
// payloads until it commits; as slices they were as many objects for the
// collector to find and scan at every cycle (and each rounded up to its
// size class), as a payRef they are 12 bytes of plain data. The arena
// copies what it is given, so a caller's buffer is never kept alive by
// the load.
//
// Spilling (SPEC §2, "Bulk loads"). Once an arena holds more than
// payResident bytes in memory, each block it fills is written to a
// temporary file beside the store (unnamed: O_TMPFILE, or created and
// unlinked at once, so nothing is left behind by a crash) and mapped back
// read-only in place of its memory: the payloads stay readable as before,
// from the page cache, and a load's memory stops growing with its payloads.
// Space for a block is allocated before it is written (a full disk fails
// the allocation, not a later read), and any failure to spill leaves the
// block in memory and stops spilling: spilling never fails a load.

import (
	"cmp"
	"runtime"

	"golang.org/x/sys/unix"
)

// payBlock is the size of an arena block (a multiple of the page size);
// a payload larger than that gets a block of its own.
const payBlock = 1 << 20

// payResident is how many bytes of payloads an arena holds in memory
// before it spills the blocks it fills.
const payResident = 16 << 20

// payArena holds payloads appended end to end.
type payArena struct {
	blocks [][]byte
	// fileOff is, per block, its offset in the spill file (-1: in
	// memory).
	fileOff []int64
	// dir is where a spill file is made ("": never spill); resident is
	// how many bytes of blocks are in memory (resident limits it, tests
	// set it low).
	dir      string
	resident int
	limit    int
	block    int // block size (0: payBlock; tests set it small)
	spill    *paySpill
}

// paySpill is an arena's spill file and what of it is mapped.
type paySpill struct {
	spillFile
	maps [][]byte // every mapping, for release
}

// payRef names a payload of an arena; n 0 is no payload (an empty payload
// and none store alike: canonicalPayload makes both nil).
type payRef struct {
	blk, off, n uint32
}

// spillTo makes the arena spill into dir once it holds limit bytes (0:
// payResident).
func (a *payArena) spillTo(dir string, limit int) {
	a.dir, a.limit = dir, limit
	if a.limit == 0 {
		a.limit = payResident
	}
}

// add copies p into the arena.
func (a *payArena) add(p []byte) payRef {
	if len(p) == 0 {
		return payRef{}
	}
	last := len(a.blocks) - 1
	if last < 0 || cap(a.blocks[last])-len(a.blocks[last]) < len(p) {
		if last >= 0 {
			a.full(last)
		}
		a.blocks = append(a.blocks, make([]byte, 0, max(cmp.Or(a.block, payBlock), len(p))))
		a.fileOff = append(a.fileOff, -1)
		a.resident += cap(a.blocks[len(a.blocks)-1])
		last++
	}
	b := a.blocks[last]
	a.blocks[last] = append(b, p...)
	return payRef{blk: uint32(last), off: uint32(len(b)), n: uint32(len(p))}
}

// full is called when block i is full: it is spilled when the arena
// holds more than its limit in memory.
func (a *payArena) full(i int) {
	if a.dir == "" || a.resident <= a.limit || (a.spill != nil && a.spill.off) {
		return
	}
	if a.spill == nil {
		a.spill = &paySpill{}
		runtime.AddCleanup(a, func(s *paySpill) { s.release() }, a.spill)
	}
	if m, off, ok := a.spill.write(a.dir, a.blocks[i]); ok {
		a.resident -= cap(a.blocks[i])
		a.blocks[i], a.fileOff[i] = m, off
	}
}

// write appends block b to the file (made in dir at the first spill, at
// off) and maps it back read-only; ok false (and spilling off) when any
// step fails.
func (s *paySpill) write(dir string, b []byte) (m []byte, off int64, ok bool) {
	off, ok = s.alloc(dir, (int64(len(b))+pageSize-1)&^(pageSize-1))
	if !ok {
		return nil, 0, false
	}
	if _, err := s.f.WriteAt(b, off); err != nil {
		s.off = true
		return nil, 0, false
	}
	if m = s.mmap(off, len(b), unix.PROT_READ); m == nil {
		return nil, 0, false
	}
	s.maps = append(s.maps, m)
	return m[:len(b):len(b)], off, true
}

// seal maps the whole spill file at once in place of its blocks' own
// mappings, so that evict is one call, not one per block (hundreds for a
// large load, which a commit evicts hundreds of times). Once the load is
// complete: the arena may still spill afterwards (canonical payloads
// added at commit), into mappings of their own. If the mapping fails,
// the blocks keep theirs.
func (a *payArena) seal() {
	s := a.spill
	if s == nil || len(s.maps) < 2 {
		return
	}
	m, err := unix.Mmap(int(s.f.Fd()), 0, int(s.size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return
	}
	for i, off := range a.fileOff {
		if off >= 0 {
			n := int64(len(a.blocks[i]))
			a.blocks[i] = m[off : off+n : off+n]
		}
	}
	for _, old := range s.maps {
		unix.Munmap(old)
	}
	s.maps = [][]byte{m}
}

// evict takes the spilled blocks' pages out of the process's memory
// (MADV_DONTNEED): they stay in the page cache, and a later read maps
// them back. A commit reads every payload through the mapping in the
// order they were added (canonical forms, the log record); evicting as
// it goes keeps the pages it has read from adding up to the whole file in
// the process's resident memory, on top of LMDB's dirty pages (the passes
// in key order read with read, not through the mapping). Safe beside
// readers: the mappings are read-only views of the file.
func (a *payArena) evict() {
	if a.spill == nil {
		return
	}
	for _, m := range a.spill.maps {
		unix.Madvise(m, unix.MADV_DONTNEED) // advice: a failure leaves the pages resident, nothing else
	}
}

// release unmaps every spilled block and closes the file (which, being
// unnamed, is then gone).
func (s *paySpill) release() {
	s.close(s.maps)
	s.maps = nil
}

// drop releases the arena at once (its payloads are never read again);
// the arena is empty afterwards.
func (a *payArena) drop() {
	if a.spill != nil {
		a.spill.release()
	}
	*a = payArena{dir: a.dir, limit: a.limit, block: a.block}
}

// bytes is the payload r names (nil for none), a view into the arena that
// its caller must not change.
func (a *payArena) bytes(r payRef) []byte {
	if r.n == 0 {
		return nil
	}
	return a.blocks[r.blk][r.off : r.off+r.n : r.off+r.n]
}

// read is the payload r names, as bytes does, but read from the spill
// file into *buf (grown as needed, reused) when r's block is spilled, rather
// than through the mapping. For passes that read the payloads out of the
// order they were added in (the node records, in key order): the page
// cache holds the file in large folios (2 MB on ext4), and a read through
// the mapping maps a whole folio into the process, so that a pass in key
// order soon has the whole file resident, whatever it evicts.
func (a *payArena) read(r payRef, buf *[]byte) []byte {
	if r.n == 0 {
		return nil
	}
	off := a.fileOff[r.blk]
	if off < 0 { // in memory
		return a.bytes(r)
	}
	if b, ok := a.spill.readAt(off+int64(r.off), int(r.n), buf); ok {
		return b
	}
	return a.bytes(r) // as readable through the mapping, if at all
}

// size is the sum of the payloads' lengths, counted by block.
func (a *payArena) size() int64 {
	var n int64
	for _, b := range a.blocks {
		n += int64(len(b))
	}
	return n
}

// spilled is how many bytes of blocks are in the spill file.
func (a *payArena) spilled() int64 {
	if a.spill == nil {
		return 0
	}
	return a.spill.size
}
