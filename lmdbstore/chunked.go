package lmdbstore

import (
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// chunked is a growing list held in fixed-size chunks: appending never
// copies what is there, so a list of hundreds of MB (a bulk load's edge
// operations) grows by a chunk at a time, with no moment where the old
// array and a larger copy are both live, and no slack beyond the last
// chunk. Element pointers stay valid while the list grows.
//
// Spilling (spillTo; SPEC §2, "Bulk loads"): past its first chunks, a
// list of plain data (T holds no pointer) makes each new chunk a shared,
// writable mapping of a temporary file beside the store, and takes a
// chunk's pages out of the process's memory once it is full. Elements
// read and change as before, through the page cache; a list that grows
// with the tree stops adding to the process's memory. Any failure to
// spill leaves the chunk in memory and stops spilling: spilling never
// fails a load.
type chunked[T any] struct {
	chunks [][]T
	n      int
	spill  *chunkSpill
}

// chunkSpill is a chunked list's spill file and its mappings.
//
// The file's bytes are mapped at the same offsets in one address range
// reserved for them (region): the mapped chunks lie one after another, so
// that evicting them all is one madvise call, not one a chunk (a load
// evicts every few thousand operations, and a call a chunk made that cost
// grow with the square of the load: 7.8 % of std×20's CPU). A chunk past
// the region, or every chunk when the range could not be reserved, is a
// mapping of its own.
type chunkSpill struct {
	spillFile
	dir      string
	resident int      // chunks kept in memory (the first ones)
	maps     [][]byte // per chunk (or key block): its mapping, nil in memory
	offs     []int64  // per chunk (or key block): its mapping's offset in the file
	// region is the reserved range (PROT_NONE until a chunk is mapped in
	// it), nil before the first mapping or when none could be reserved;
	// lost: a mapping into it failed and may have left a hole, so it is
	// never unmapped whole (the hole may be another mapping's by then).
	region   []byte
	reserved bool // a reservation was tried
	lost     bool
}

// regionBytes is the address range a spill reserves: 16 GiB, ten times
// what a load spills to one list here (std×80's edges: 0.8 GB), and
// nothing against the memory the process may use (PROT_NONE,
// MAP_NORESERVE: no page and no commit charge until a chunk is mapped;
// only the process's virtual size shows it). Chunks past it are mappings
// of their own.
const regionBytes = 1 << 34

// chunkBits sets a chunk's length: 65,536 elements.
const chunkBits = 16

const chunkLen = 1 << chunkBits

// len is the number of elements.
func (c *chunked[T]) len() int { return c.n }

// at is element i (0 ≤ i < len).
func (c *chunked[T]) at(i int) *T { return &c.chunks[i>>chunkBits][i&(chunkLen-1)] }

// load is element i (0 ≤ i < len), read from the spill file with pread
// when its chunk is a mapping, else through at: for a pass that reads the
// list out of its order, where a read through the mapping maps a large
// folio of the page cache each (spillFile.readAt) and soon has the whole
// file resident. Safe for concurrent use beside other readers.
func (c *chunked[T]) load(i int) T {
	ci := i >> chunkBits
	if s := c.spill; s != nil && s.maps[ci] != nil {
		var v T
		size := int64(unsafe.Sizeof(v))
		b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), size)
		if _, err := s.f.ReadAt(b, s.offs[ci]+int64(i&(chunkLen-1))*size); err == nil {
			return v
		}
	}
	return *c.at(i) // read through the mapping when the file read fails
}

// view is the list as it is: its elements now, readable while c goes on
// adding (an element a view holds is never written again by add; its
// chunks' slice headers are copies). It shares c's spill, and must not
// add, evict, truncate or release.
func (c *chunked[T]) view() chunked[T] {
	return chunked[T]{chunks: slices.Clone(c.chunks), n: c.n, spill: c.spill}
}

// add appends v and returns its index.
func (c *chunked[T]) add(v T) int {
	if c.n>>chunkBits == len(c.chunks) {
		c.chunks = append(c.chunks, c.newChunk())
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
	if len(*last) == chunkLen && c.spill != nil {
		c.spill.evict(len(c.chunks) - 1) // written: out of memory until read
	}
	return c.n - 1
}

// spills reports whether some chunk of the list is a mapping of its spill
// file (its elements are then mostly out of the process's memory).
func (c *chunked[T]) spills() bool {
	return c.spill != nil && c.spill.mapped()
}

// mapped reports whether some chunk is a mapping of the spill file.
func (s *chunkSpill) mapped() bool {
	return slices.ContainsFunc(s.maps, func(m []byte) bool { return m != nil })
}

// spillTo makes the chunks past the first resident ones mappings of a
// temporary file in dir. T must hold no pointer (the collector does not
// see into the mappings).
func (c *chunked[T]) spillTo(dir string, resident int) {
	c.spill = &chunkSpill{dir: dir, resident: resident}
	runtime.AddCleanup(c, func(s *chunkSpill) { s.release() }, c.spill)
}

// newChunk is an empty chunk: mapped from the spill file when the list
// spills and holds its resident chunks already, else in memory.
func (c *chunked[T]) newChunk() []T {
	s := c.spill
	if s == nil {
		return make([]T, 0, chunkLen)
	}
	var zero T
	m := s.next(len(c.chunks), chunkLen*int(unsafe.Sizeof(zero)))
	if m == nil {
		return make([]T, 0, chunkLen)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(m))), chunkLen)[:0]
}

// next records chunk i (the next one) of n bytes and returns its
// mapping: nil, the chunk in memory, for the first resident chunks or
// once spilling is off.
func (s *chunkSpill) next(i, n int) []byte {
	var m []byte
	var off int64
	if !s.off && i >= s.resident {
		m, off = s.mapChunkAt(n)
	}
	s.maps, s.offs = append(s.maps, m), append(s.offs, off)
	return m
}

// mapChunkAt extends the file by n bytes (a multiple of the page size:
// chunkLen is) and maps them writable, returning the mapping and its
// offset in the file; nil (and spilling off) when any step fails.
func (s *chunkSpill) mapChunkAt(n int) ([]byte, int64) {
	off, ok := s.alloc(s.dir, int64(n))
	if !ok {
		return nil, 0
	}
	if r := s.reserve(); r != nil && off+int64(n) <= int64(len(r)) {
		p, err := unix.MmapPtr(int(s.f.Fd()), off, unsafe.Pointer(&r[off]), uintptr(n),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED)
		if err != nil {
			s.off, s.lost = true, true
			return nil, 0
		}
		return unsafe.Slice((*byte)(p), n), off
	}
	return s.mmap(off, n, unix.PROT_READ|unix.PROT_WRITE), off
}

// reserve is the region, reserved on first use; nil when it could not be
// (the chunks are then mappings of their own).
func (s *chunkSpill) reserve() []byte {
	if !s.reserved {
		s.reserved = true
		p, err := unix.MmapPtr(-1, 0, nil, regionBytes, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err == nil {
			s.region = unsafe.Slice((*byte)(p), regionBytes)
		}
	}
	return s.region
}

// inRegion reports whether mapping m lies in the region.
func (s *chunkSpill) inRegion(m []byte) bool {
	if s.region == nil || len(m) == 0 {
		return false
	}
	base, at := uintptr(unsafe.Pointer(unsafe.SliceData(s.region))), uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	return at >= base && at < base+regionBytes
}

// unmap unmaps chunk mapping m: a mapping of its own is unmapped; one in
// the region is replaced by the reservation again (the range stays the
// region's, and its file pages leave the process).
func (s *chunkSpill) unmap(m []byte) {
	if !s.inRegion(m) {
		unix.Munmap(m)
		return
	}
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(unsafe.SliceData(m)), uintptr(len(m)), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED)
	if err != nil {
		s.lost = true
	}
}

// evict takes chunk i's pages, if it is mapped, out of the process's
// memory (MADV_DONTNEED): a shared mapping's pages, written or not, stay
// in the page cache (and the file), and a later access maps them back.
func (s *chunkSpill) evict(i int) {
	if m := s.maps[i]; m != nil {
		unix.Madvise(m, unix.MADV_DONTNEED) // advice: a failure leaves the pages resident, nothing else
	}
}

// evictRange evicts chunks lo to hi−1: those in the region with one call
// over the span from the first to the last (whatever lies between is the
// region's: its chunks, or the reservation), the others one by one.
func (s *chunkSpill) evictRange(lo, hi int) {
	first, last := -1, -1 // chunks in the region
	for i := lo; i < hi; i++ {
		m := s.maps[i]
		switch {
		case m == nil:
		case s.inRegion(m):
			if first < 0 {
				first = i
			}
			last = i
		default:
			unix.Madvise(m, unix.MADV_DONTNEED)
		}
	}
	if first >= 0 {
		unix.Madvise(s.region[s.offs[first]:s.offs[last]+int64(len(s.maps[last]))], unix.MADV_DONTNEED)
	}
}

// evict takes every mapped chunk's pages out of the process's memory: a
// pass that reads the list through evicts as it goes, so that the pages
// it read do not add up to the whole file. Safe beside readers and
// writers of the list's elements.
func (c *chunked[T]) evict() {
	if c.spill == nil {
		return
	}
	c.spill.evictRange(0, len(c.spill.maps))
}

// truncate keeps the first n elements (n ≤ len), releasing the chunks past
// them.
func (c *chunked[T]) truncate(n int) {
	keep := (n + chunkLen - 1) >> chunkBits
	clear(c.chunks[keep:])
	c.chunks = c.chunks[:keep]
	if s := c.spill; s != nil {
		for _, m := range s.maps[keep:] {
			if m != nil {
				s.unmap(m)
			}
		}
		clear(s.maps[keep:])
		s.maps, s.offs = s.maps[:keep], s.offs[:keep]
	}
	if keep > 0 {
		last := &c.chunks[keep-1]
		n0 := n - (keep-1)<<chunkBits
		clear((*last)[n0:])
		*last = (*last)[:n0]
	}
	c.n = n
}

// release empties the list, unmapping its spilled chunks and closing the
// spill file (which, being unnamed, is then gone).
func (c *chunked[T]) release() {
	if c.spill != nil {
		c.spill.release()
	}
	*c = chunked[T]{}
}

// release unmaps every spilled chunk and closes the file; safe to call
// again.
func (s *chunkSpill) release() {
	var own [][]byte // the mappings outside the region: the region goes whole
	for _, m := range s.maps {
		if m != nil && !s.inRegion(m) {
			own = append(own, m)
		}
	}
	s.close(own)
	if s.region != nil && !s.lost {
		unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(s.region)), regionBytes)
	}
	s.region = nil
	s.maps, s.offs = nil, nil
	s.off = true
}
