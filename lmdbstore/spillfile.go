package lmdbstore

import (
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// spillFile is the unnamed file beside the store that a bulk load's
// spilled data lives in (payArena's blocks, chunked's chunks): space is
// allocated at its end (a full disk fails the allocation, not a later
// access) before it is written or mapped, and any failure turns spilling
// off for good (SPEC §2, "Bulk loads").
type spillFile struct {
	f    *os.File
	size int64 // bytes allocated
	off  bool  // a spill failed: no more spilling
}

// pageSize aligns what is spilled (mmap offsets must be page-aligned).
var pageSize = int64(os.Getpagesize())

// alloc allocates n bytes (a multiple of pageSize) at the end of the file,
// which it makes in dir on first use, and returns their offset; ok false
// (and spilling off) when that fails.
func (s *spillFile) alloc(dir string, n int64) (off int64, ok bool) {
	if s.off {
		return 0, false
	}
	if s.f == nil {
		f, err := UnnamedFile(dir)
		if err != nil {
			s.off = true
			return 0, false
		}
		s.f = f
	}
	if unix.Fallocate(int(s.f.Fd()), 0, s.size, n) != nil {
		s.off = true
		return 0, false
	}
	off = s.size
	s.size += n
	return off, true
}

// mmap maps n bytes of the file at off, shared, with prot; nil (and
// spilling off) when that fails.
func (s *spillFile) mmap(off int64, n, prot int) []byte {
	m, err := unix.Mmap(int(s.f.Fd()), off, n, prot, unix.MAP_SHARED)
	if err != nil {
		s.off = true
		return nil
	}
	return m
}

// readAt reads n bytes at off into *buf (grown as needed, reused) with
// pread, not through a mapping: for passes that read spilled data out of
// the order it was written in, where a read through the mapping maps a
// large folio of the page cache each (payArena.read, keyArena.read).
// ok is false when the read fails (the caller reads through the mapping).
func (s *spillFile) readAt(off int64, n int, buf *[]byte) (b []byte, ok bool) {
	*buf = slices.Grow((*buf)[:0], n)[:n]
	if _, err := s.f.ReadAt(*buf, off); err != nil {
		return nil, false
	}
	return *buf, true
}

// close unmaps maps (nil entries are in memory) and closes the file,
// which, being unnamed, is then gone; safe to call again.
func (s *spillFile) close(maps [][]byte) {
	for _, m := range maps {
		if m != nil {
			unix.Munmap(m)
		}
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// UnnamedFile is an unnamed file in dir: O_TMPFILE where the file system
// has it, else a file created and unlinked at once.
func UnnamedFile(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir+"/(unnamed spill file)"), nil
	}
	f, err := os.CreateTemp(dir, ".bulk-spill-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
