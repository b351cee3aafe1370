package lmdbstore

// A bulk load's key index past memKeys keys (SPEC §2, "Bulk loads"): the
// older keys' slots in a sorted table in an unnamed file beside the store,
// read with pread, the recent ones in memory (keyTableIndex).
//
// The file's table (a run) has 2^k home slots and a tail, each slot 8
// bytes little-endian, as keyTableIndex's: the top 32 bits of the key's
// hash above its index + 1 (0: empty). Slots are in ascending order of
// that value, each at its home (the top k bits of the 32) or, when that
// is taken, right after the slot before it: sorted linear probing, which
// never wraps (the tail holds what runs past the last home slot). A key
// is therefore found by reading from its home until a slot is empty or
// holds a larger hash, and two sorted tables are merged into a third in
// one sequential pass over each (flush), without holding either.

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"slices"

	"golang.org/x/sys/unix"
)

// bulkKeyIndex is a bulk load's key index: recent keys in mem, older ones in
// run once the index spills (spillTo).
type bulkKeyIndex struct {
	mem keyTableIndex
	run keyRun
	// f is the index's own spill file (runs are allocated at its end, one
	// after another; a flush frees the run it replaces), nil when the
	// index does not spill.
	f *indexFile
	// memKeys is how many keys mem holds before a flush (memKeys unless
	// a test sets it).
	memKeys int
}

// indexFile is an index's spill file, shared with the views' copies (which
// read it while the load flushes: a run they hold may be freed, and reads
// as empty); a cleanup closes it once neither holds it.
type indexFile struct {
	spillFile
	dir string
}

// bulkKeyIndexMemKeys is how many keys a spilling index holds in memory: a
// table of 2^21 slots, 16 MiB.
const bulkKeyIndexMemKeys = 1 << 20

// keyRun is a sorted table of slots in an index's file.
type keyRun struct {
	off   int64 // the table's first byte in the file
	slots int64 // home slots and tail
	shift uint  // 32 - k: a hash's home is h32 >> shift
	n     int   // keys held
	alloc int64 // slots allocated in the file (slots and the tail's slack)
}

// spillTo makes the index spill to an unnamed file in dir past
// bulkKeyIndexMemKeys keys.
func (x *bulkKeyIndex) spillTo(dir string) {
	x.f = &indexFile{dir: dir}
	x.memKeys = bulkKeyIndexMemKeys
	x.mem.seedOnce()
	runtime.AddCleanup(x, func(f *indexFile) { f.closeFile() }, x.f)
}

// len is the number of keys held.
func (x *bulkKeyIndex) len() int { return x.mem.n + x.run.n }

// find is raw's index, if held; keyAt(i) is the key held as index i.
func (x *bulkKeyIndex) find(raw string, keyAt func(uint32) string) (uint32, bool) {
	if i, ok := x.mem.find(raw, keyAt); ok || x.run.n == 0 {
		return i, ok
	}
	return x.run.find(x.f, x.mem.keyHash(raw), raw, keyAt)
}

// insert holds index i for raw, which it does not hold yet; past memKeys
// keys in memory it flushes them to the file.
func (x *bulkKeyIndex) insert(raw string, i uint32) {
	x.mem.insert(raw, i)
	if x.f != nil && x.mem.n >= x.memKeys {
		x.flush()
	}
}

// grow makes room for n keys in all without resizing (in memory: at most
// memKeys of them when the index spills).
func (x *bulkKeyIndex) grow(n int) {
	if x.f != nil {
		n = min(n-x.run.n, x.memKeys)
	}
	x.mem.grow(n)
}

// clone is a copy of x that x's inserts and flushes do not change (a run
// the load frees reads as empty: its keys are then not found, which a view
// may answer).
func (x *bulkKeyIndex) clone() bulkKeyIndex {
	return bulkKeyIndex{mem: x.mem.clone(), run: x.run, f: x.f, memKeys: x.memKeys}
}

// release closes the file; the index is then empty.
func (x *bulkKeyIndex) release() {
	if x.f != nil {
		x.f.closeFile()
	}
	*x = bulkKeyIndex{}
}

// closeFile closes the file (which, being unnamed, is then gone), leaving
// the field as it is: a view's read of it then fails (a key not found)
// rather than racing with the close; safe to call again.
func (f *indexFile) closeFile() {
	if f.f != nil {
		f.f.Close()
	}
	f.off = true
}

// find reads raw's slot from the run in f, h its hash.
func (r *keyRun) find(f *indexFile, h uint32, raw string, keyAt func(uint32) string) (uint32, bool) {
	var buf [64]byte // a cache line: 8 slots
	for s := int64(h >> r.shift); s < r.slots; s += 8 {
		m := min(8, r.slots-s)
		if _, err := f.f.ReadAt(buf[:8*m], r.off+8*s); err != nil {
			return 0, false // read as empty: the key is registered again, as its own (the commit groups keys by id)
		}
		for j := range m {
			v := binary.LittleEndian.Uint64(buf[8*j:])
			if v == 0 || uint32(v>>32) > h {
				return 0, false
			}
			if uint32(v>>32) == h && keyAt(uint32(v)-1) == raw {
				return uint32(v) - 1, true
			}
		}
	}
	return 0, false
}

// flush merges the keys in memory with the run into a new run, frees the
// old one and empties mem. A step that fails turns spilling off: the keys
// stay in memory (mem grows as before).
func (x *bulkKeyIndex) flush() {
	fresh := x.mem.slots[:0]
	for _, v := range x.mem.slots {
		if v != 0 {
			fresh = append(fresh, v) // in place: never ahead of the read
		}
	}
	slices.Sort(fresh)
	n := x.run.n + len(fresh)
	home := max(int64(keyTableIndexMin), int64(1)<<bits.Len64(uint64((4*n+2)/3)))
	next := keyRun{shift: 32 - uint(bits.Len64(uint64(home))-1), n: n}
	w := runWriter{f: x.f, run: &next}
	if !w.start(home) {
		x.spillOff(fresh)
		return
	}
	old := runReader{f: x.f, run: x.run}
	a, aok := old.next()
	for j := 0; aok || j < len(fresh); {
		var v uint64
		if !aok || (j < len(fresh) && fresh[j] < a) {
			v, j = fresh[j], j+1
		} else {
			v = a
			a, aok = old.next()
		}
		w.place(v)
	}
	if !w.finish() || old.err {
		x.f.punch(next.off, 8*next.alloc)
		x.spillOff(fresh)
		return
	}
	x.f.punch(x.run.off, 8*x.run.alloc)
	x.run = next
	clear(x.mem.slots)
	x.mem.n = 0
}

// spillOff keeps every key in memory from now on: the slots a failed
// flush compacted go back into mem's table.
func (x *bulkKeyIndex) spillOff(fresh []uint64) {
	x.f.off = true
	x.memKeys = int(^uint(0) >> 1)
	vs := slices.Clone(fresh)
	clear(x.mem.slots)
	for _, v := range vs {
		x.mem.place(uint32(v>>32), uint32(v)-1)
	}
}

// runReader reads a run's slots in order, skipping the empty ones.
type runReader struct {
	f   *indexFile
	run keyRun
	buf []byte
	at  int64 // next slot to read into buf
	pos int   // next byte of buf
	err bool
}

// runIOSlots is how many slots a run's reader and writer move at a time
// (1 MiB).
const runIOSlots = 1 << 17

// next is the next held slot; false at the end (or a failed read: err).
func (r *runReader) next() (uint64, bool) {
	for {
		if r.pos == len(r.buf) {
			if r.at == r.run.slots || r.err {
				return 0, false
			}
			m := min(runIOSlots, r.run.slots-r.at)
			r.buf = slices.Grow(r.buf[:0], int(8*m))[:8*m]
			if _, err := r.f.f.ReadAt(r.buf, r.run.off+8*r.at); err != nil {
				r.err = true
				return 0, false
			}
			r.at += m
			r.pos = 0
		}
		v := binary.LittleEndian.Uint64(r.buf[r.pos:])
		r.pos += 8
		if v != 0 {
			return v, true
		}
	}
}

// runWriter writes a run's slots in order, allocating the file's space
// as it goes (the run is the file's last allocation: it grows in place).
type runWriter struct {
	f     *indexFile
	run   *keyRun
	buf   []byte
	flush int64 // slots written to the file
	err   bool
}

// start allocates home slots at the file's end.
func (w *runWriter) start(home int64) bool {
	off, ok := w.f.alloc(w.f.dir, 8*home)
	if !ok {
		return false
	}
	w.run.off, w.run.alloc = off, home
	w.buf = make([]byte, 0, 8*runIOSlots)
	return true
}

// place writes v at its home, or right after the last slot placed.
func (w *runWriter) place(v uint64) {
	s := max(int64(uint32(v>>32)>>w.run.shift), w.run.slots)
	for w.run.slots < s {
		w.put(0)
	}
	w.put(v)
}

// put appends one slot.
func (w *runWriter) put(v uint64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, v)
	w.run.slots++
	if len(w.buf) == cap(w.buf) {
		w.write()
	}
}

// write writes the buffer at its place, allocating the tail's space
// when it runs past what is allocated.
func (w *runWriter) write() {
	m := int64(len(w.buf) / 8)
	if w.flush+m > w.run.alloc && !w.err {
		more := max(w.flush+m-w.run.alloc, runIOSlots)
		if off, ok := w.f.alloc(w.f.dir, 8*more); !ok || off != w.run.off+8*w.run.alloc {
			w.err = true
		} else {
			w.run.alloc += more
		}
	}
	if !w.err {
		if _, err := w.f.f.WriteAt(w.buf, w.run.off+8*w.flush); err != nil {
			w.err = true
		}
	}
	w.flush += m
	w.buf = w.buf[:0]
}

// finish pads the run to its home slots and writes what is buffered.
func (w *runWriter) finish() bool {
	for w.run.slots < int64(1)<<(32-w.run.shift) {
		w.put(0)
	}
	if len(w.buf) > 0 {
		w.write()
	}
	return !w.err
}

// punch frees n bytes at off (a run replaced); advice: a failure keeps the
// space, nothing else.
func (f *indexFile) punch(off, n int64) {
	if n > 0 && f.f != nil {
		unix.Fallocate(int(f.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	}
}
