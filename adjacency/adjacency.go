// Package adjacency is the codec of memctl's packed adjacency chunks: the
// values of the `out` and `in` keyspaces of the store (SPEC.md §3).
//
// A node's adjacency list is a sequence of chunks. A chunk is a sorted run of
// entries, strictly increasing by (Rel, Peer, Rev); every version of an edge
// is one entry, a delete is a tombstone entry. The entries of one edge
// (one (Rel, Peer) group) never span two chunks, so visibility at a revision
// can be decided chunk by chunk.
//
// Invariants the codec enforces (Verify, Decode and Iterator all reject
// anything else with a *CorruptError), so every valid chunk has exactly one
// encoding:
//   - the last 4 bytes are the little-endian CRC-32C (Castagnoli) of all
//     bytes before them, checked before anything else is read, so a damaged
//     chunk is detected, never misread;
//   - the first byte is Version; varints are minimal (no overlong forms);
//   - a weight is present only when it is not 1.0, and is finite and > 0;
//   - the count matches the entries, and no byte follows the last entry;
//   - Rel is never 0, only known flag bits are set, order is strict.
//
// The package is pure: no I/O, no LMDB, and bad input never panics.
package adjacency

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// Version is the first byte of every chunk value.
const Version = 1

// Entry flags.
const (
	// FlagTombstone marks a deleted edge version.
	FlagTombstone uint8 = 1 << 0
	// FlagWeight says a 4-byte weight follows; without it the weight is 1.0.
	FlagWeight uint8 = 1 << 1

	knownFlags = FlagTombstone | FlagWeight
)

// MaxChunkEntries is the size a chunk is split at (SPEC.md §3): a chunk with
// more entries is split in two at the group boundary nearest its middle. A
// single edge with more versions than this stays in one (larger) chunk.
const MaxChunkEntries = 128

// DeadRatioThreshold: a rewritten chunk whose superseded and tombstone
// entries reach this fraction of its entries is compacted inline.
const DeadRatioThreshold = 0.25

// ChecksumLen is the length of the CRC-32C trailer that ends every chunk.
const ChecksumLen = 4

// castagnoli is the CRC-32C table (immutable once built).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is matched by every decoding error (errors.Is).
var ErrCorrupt = errors.New("corrupt adjacency chunk")

// CorruptError says where in a chunk value decoding failed.
type CorruptError struct {
	Offset int // byte offset in the value
	Msg    string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("adjacency chunk: %s at byte %d", e.Msg, e.Offset)
}

func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Entry is one edge version in an adjacency list.
type Entry struct {
	Rel    uint32
	Peer   uint64 // dst in out-lists, src in in-lists
	Rev    uint64
	Flags  uint8
	Weight float32 // 1.0 unless FlagWeight was stored
}

// Tombstone reports whether e is a delete marker.
func (e Entry) Tombstone() bool { return e.Flags&FlagTombstone != 0 }

// SameEdge reports whether e and o are versions of the same edge.
func (e Entry) SameEdge(o Entry) bool { return e.Rel == o.Rel && e.Peer == o.Peer }

// Less orders entries by (Rel, Peer, Rev).
func (e Entry) Less(o Entry) bool {
	if e.Rel != o.Rel {
		return e.Rel < o.Rel
	}
	if e.Peer != o.Peer {
		return e.Peer < o.Peer
	}
	return e.Rev < o.Rev
}

// Encode appends the chunk value of entries to dst. entries must be sorted
// strictly by (Rel, Peer, Rev) with Rel != 0; Encode does not check (Verify
// the result in tests). The weight is written only when it is not 1.0. The
// chunk ends with its CRC-32C trailer (covering the chunk's bytes only, not
// what dst held before).
func Encode(dst []byte, entries []Entry) []byte {
	start := len(dst)
	dst = append(dst, Version)
	dst = binary.AppendUvarint(dst, uint64(len(entries)))
	var prev Entry
	for i, e := range entries {
		relDelta := e.Rel - prev.Rel
		if i == 0 {
			relDelta = e.Rel
		}
		dst = binary.AppendUvarint(dst, uint64(relDelta))
		if i > 0 && relDelta == 0 {
			dst = binary.AppendUvarint(dst, e.Peer-prev.Peer)
		} else {
			dst = binary.AppendUvarint(dst, e.Peer)
		}
		dst = binary.AppendUvarint(dst, e.Rev)
		flags := e.Flags &^ FlagWeight
		if e.Weight != 1 {
			flags |= FlagWeight
		}
		dst = append(dst, flags)
		if flags&FlagWeight != 0 {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(e.Weight))
		}
		prev = e
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// Iterator decodes a chunk value in place, one entry per Next, without
// allocating. The bytes must stay valid while it is used (for an LMDB RawRead
// value: until the transaction ends or writes).
type Iterator struct {
	b         []byte
	off       int
	count     int
	remaining int
	cur       Entry
	err       error
}

// Reset starts iterating over chunk value b. The checksum is verified here,
// before any entry is decoded.
func (it *Iterator) Reset(b []byte) {
	*it = Iterator{}
	if len(b) == 0 {
		it.err = &CorruptError{0, "empty value"}
		return
	}
	if len(b) < 1+ChecksumLen {
		it.err = &CorruptError{0, "value too short for its checksum"}
		return
	}
	sum := len(b) - ChecksumLen
	if crc32.Checksum(b[:sum], castagnoli) != binary.LittleEndian.Uint32(b[sum:]) {
		it.err = &CorruptError{sum, "checksum mismatch"}
		return
	}
	b = b[:sum]
	it.b = b
	if b[0] != Version {
		it.err = &CorruptError{0, fmt.Sprintf("unknown version %d", b[0])}
		return
	}
	n, end := uvarintAt(b, 1)
	if end < 0 {
		it.err = &CorruptError{1, "bad count"}
		return
	}
	w := end - 1
	// Every entry takes at least 4 bytes: never trust a count the bytes
	// cannot hold.
	if n > uint64(len(b)-1-w)/4 {
		it.err = &CorruptError{1, fmt.Sprintf("count %d exceeds value length %d", n, len(b))}
		return
	}
	it.off = 1 + w
	it.count = int(n)
	it.remaining = int(n)
}

// Len is the entry count of the chunk (0 after an error in Reset).
func (it *Iterator) Len() int { return it.count }

// oneByte decodes the uvarint at b[off:] if it is one byte long (ok).
func oneByte(b []byte, off int) (v uint64, next int, ok bool) {
	if uint(off) < uint(len(b)) && b[off] < 0x80 {
		return uint64(b[off]), off + 1, true
	}
	return 0, 0, false
}

// uvarintAt decodes the uvarint at b[off:] and returns the offset after it
// (-1 on error). With 8 bytes available it decodes values of up to 8 bytes
// branch-free from one 64-bit load, and 9- and 10-byte ones (a hashed
// 64-bit node id, or the delta between two, is usually one of those) from
// that load and one or two more bytes; the rest goes through
// binary.Uvarint.
func uvarintAt(b []byte, off int) (uint64, int) {
	if off >= 0 && off+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[off:])
		if x&0x80 == 0 {
			return x & 0x7f, off + 1
		}
		m := ^x & 0x8080808080808080
		if m != 0 {
			n := bits.TrailingZeros64(m)/8 + 1
			if x>>(8*(n-1))&0xff == 0 {
				return 0, -1 // overlong: a final byte of 0 adds nothing
			}
			x &= ^uint64(0) >> (64 - 8*n)
			return compact7(x), off + n
		}
		// All eight bytes continue: 56 bits, then one or two more bytes.
		v := compact7(x)
		if off+8 < len(b) {
			if c := b[off+8]; c < 0x80 {
				if c == 0 {
					return 0, -1 // overlong
				}
				return v | uint64(c)<<56, off + 9
			} else if off+9 < len(b) {
				c2 := b[off+9]
				if c2 == 0 || c2 > 1 {
					return 0, -1 // overlong, or overflows 64 bits
				}
				return v | uint64(c&0x7f)<<56 | uint64(c2)<<63, off + 10
			}
		}
		return 0, -1 // truncated
	}
	if off < 0 || off >= len(b) {
		return 0, -1
	}
	v, n := binary.Uvarint(b[off:])
	if n <= 0 || (n > 1 && b[off+n-1] == 0) {
		return 0, -1 // malformed or overlong
	}
	return v, off + n
}

// compact7 joins the low 7 bits of each byte of x (little-endian).
func compact7(x uint64) uint64 {
	return x&0x7f | (x>>1)&(0x7f<<7) | (x>>2)&(0x7f<<14) | (x>>3)&(0x7f<<21) |
		(x>>4)&(0x7f<<28) | (x>>5)&(0x7f<<35) | (x>>6)&(0x7f<<42) | (x>>7)&(0x7f<<49)
}

// Next decodes the next entry; it returns false at the end or on error.
func (it *Iterator) Next() bool {
	if it.err != nil {
		return false
	}
	if it.remaining == 0 {
		if it.off != len(it.b) {
			it.err = &CorruptError{it.off, "trailing bytes"}
		}
		return false
	}
	off, err := entryAt(it.b, it.off, &it.cur, &it.cur, it.remaining == it.count)
	if err != nil {
		it.err = err
		return false
	}
	it.off = off
	it.remaining--
	return true
}

// entryAt decodes into e the entry at b[start:] (b without its checksum)
// that follows prev, or the chunk's first entry (first: absolute values),
// and returns the offset after it. e may be prev; on an error e is
// unchanged.
func entryAt(b []byte, start int, e, prev *Entry, first bool) (int, *CorruptError) {
	// The relation delta and the revision are mostly one byte: oneByte
	// decodes those without a call (uvarintAt is too large to inline).
	relDelta, off, ok := oneByte(b, start)
	if !ok {
		relDelta, off = uvarintAt(b, start)
	}
	if off < 0 || relDelta > math.MaxUint32 {
		return 0, &CorruptError{start, "bad relation"}
	}
	peer, off2 := uvarintAt(b, off)
	if off2 < 0 {
		return 0, &CorruptError{off, "bad peer"}
	}
	rev, off3, ok := oneByte(b, off2)
	if !ok {
		rev, off3 = uvarintAt(b, off2)
	}
	if off3 < 0 {
		return 0, &CorruptError{off2, "bad revision"}
	}
	if off3 >= len(b) {
		return 0, &CorruptError{off3, "missing flags"}
	}
	flags := b[off3]
	off = off3 + 1
	if flags&^knownFlags != 0 {
		return 0, &CorruptError{off3, fmt.Sprintf("unknown flags %#x", flags)}
	}
	weight := float32(1)
	if flags&FlagWeight != 0 {
		if len(b)-off < 4 {
			return 0, &CorruptError{off, "truncated weight"}
		}
		weight = math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
		if weight == 1 || !(weight > 0) || math.IsInf(float64(weight), 0) {
			// 1.0 is never written (it is implicit); others must be finite and positive
			return 0, &CorruptError{off, fmt.Sprintf("bad weight %v", weight)}
		}
		off += 4
	}
	rel := uint32(relDelta) // absolute values in the first entry
	if !first {
		sum := uint64(prev.Rel) + relDelta
		if sum > math.MaxUint32 {
			return 0, &CorruptError{start, "relation overflows"}
		}
		rel = uint32(sum)
		if relDelta == 0 {
			if peer > math.MaxUint64-prev.Peer {
				return 0, &CorruptError{start, "peer overflows"}
			}
			if peer == 0 && rev <= prev.Rev {
				return 0, &CorruptError{start, "entries out of order"}
			}
			peer += prev.Peer
		}
	}
	if rel == 0 {
		return 0, &CorruptError{start, "relation 0"}
	}
	// Written last: e may be prev.
	*e = Entry{Rel: rel, Peer: peer, Rev: rev, Flags: flags, Weight: weight}
	return off, nil
}

// Entry is the entry decoded by the last successful Next.
func (it *Iterator) Entry() Entry { return it.cur }

// Err is the decoding error that stopped Next, if any.
func (it *Iterator) Err() error { return it.err }

// Decode appends the entries of chunk value b to dst. It checks what
// Iterator checks, decoding into dst directly (no call per entry through
// the iterator); on an error dst holds the entries before it.
func Decode(b []byte, dst []Entry) ([]Entry, error) {
	var it Iterator
	it.Reset(b)
	if it.err != nil {
		return dst, it.err
	}
	b, off := it.b, it.off
	n := len(dst)
	dst = slices.Grow(dst, it.count)[:n+it.count]
	for i := n; i < len(dst); i++ {
		prev := &dst[max(i-1, n)]
		if i > n {
			if next := plainNext(b, off, &dst[i], prev); next > 0 {
				off = next
				continue
			}
		}
		next, err := entryAt(b, off, &dst[i], prev, i == n)
		if err != nil {
			return dst[:i], err
		}
		off = next
	}
	if off != len(b) {
		return dst, &CorruptError{off, "trailing bytes"}
	}
	return dst, nil
}

// plainNext decodes the commonest entry shape without entryAt's general
// checks: the next peer of prev's relation (a delta of 1 to 9 bytes, not
// 0), a revision of one or two bytes, no flags. It returns the offset after
// the entry, or 0 (e untouched) for any other shape, which entryAt then
// decodes or rejects: an entry plainNext accepts is one entryAt decodes the
// same way (TestDecodeMatchesIterator, FuzzDecode).
func plainNext(b []byte, off int, e, prev *Entry) int {
	if off < 0 || off+9 > len(b) || b[off] != 0 {
		return 0
	}
	x := binary.LittleEndian.Uint64(b[off+1:])
	var delta uint64
	k := 9 // the peer delta's bytes
	if m := ^x & 0x8080808080808080; m != 0 {
		k = bits.TrailingZeros64(m)/8 + 1
		if k > 1 && x>>(8*(k-1))&0xff == 0 {
			return 0 // overlong
		}
		delta = compact7(x & (^uint64(0) >> (64 - 8*k)))
	} else if off+10 < len(b) && b[off+9] != 0 && b[off+9] < 0x80 {
		delta = compact7(x) | uint64(b[off+9])<<56
	} else {
		return 0 // a tenth byte, overlong, or truncated
	}
	if delta == 0 || delta > math.MaxUint64-prev.Peer {
		return 0 // another version of prev's edge, or an overflow
	}
	p := off + 1 + k
	if p+2 >= len(b) {
		return 0
	}
	rev := uint64(b[p])
	if rev >= 0x80 {
		c := b[p+1]
		if c == 0 || c >= 0x80 || p+3 >= len(b) {
			return 0 // overlong, longer than two bytes, or no room for flags
		}
		rev = rev&0x7f | uint64(c)<<7
		p++
	}
	if b[p+1] != 0 {
		return 0 // flags
	}
	*e = Entry{Rel: prev.Rel, Peer: prev.Peer + delta, Rev: rev, Weight: 1}
	return p + 2
}

// Verify checks that b is a well-formed chunk value.
func Verify(b []byte) error {
	var it Iterator
	it.Reset(b)
	if it.Err() == nil && it.Len() == 0 {
		return &CorruptError{1, "empty chunk"}
	}
	for it.Next() {
	}
	return it.Err()
}

// Insert adds e to the sorted entries, replacing an entry with the same
// (Rel, Peer, Rev), and returns the result (which may share entries' array).
func Insert(entries []Entry, e Entry) []Entry {
	i := sort.Search(len(entries), func(i int) bool { return !entries[i].Less(e) })
	if i < len(entries) && entries[i].Rel == e.Rel && entries[i].Peer == e.Peer && entries[i].Rev == e.Rev {
		entries[i] = e
		return entries
	}
	entries = append(entries, Entry{})
	copy(entries[i+1:], entries[i:])
	entries[i] = e
	return entries
}

// Compact drops, in place, every entry no view at or after horizon can see:
// within each edge, the versions older than the newest one with Rev <=
// horizon, and that one too if it is a tombstone. horizon 0 keeps all.
func Compact(entries []Entry, horizon uint64) []Entry {
	if horizon == 0 {
		return entries
	}
	out := entries[:0]
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].SameEdge(entries[i]) {
			j++
		}
		// entries[i:j] is one edge, oldest first. Find the base: the
		// newest version at or below the horizon.
		base := -1
		for k := i; k < j; k++ {
			if entries[k].Rev <= horizon {
				base = k
			}
		}
		from := i
		if base >= 0 {
			from = base
			if entries[base].Tombstone() {
				from = base + 1
			}
		}
		out = append(out, entries[from:j]...)
		i = j
	}
	return out
}

// Dead counts the entries no latest view sees: superseded versions and
// tombstones that are the newest version of their edge.
func Dead(entries []Entry) (superseded, tombstones int) {
	for i, e := range entries {
		if i+1 < len(entries) && entries[i+1].SameEdge(e) {
			superseded++
		} else if e.Tombstone() {
			tombstones++
		}
	}
	return superseded, tombstones
}

// SplitPoint is where a chunk of entries too large to keep whole is cut: the
// edge boundary nearest the middle, or 0 if the whole chunk is one edge.
func SplitPoint(entries []Entry) int {
	mid := len(entries) / 2
	for d := 0; d < len(entries); d++ {
		if i := mid + d; i > 0 && i < len(entries) && !entries[i].SameEdge(entries[i-1]) {
			return i
		}
		if i := mid - d; i > 0 && i < len(entries) && !entries[i].SameEdge(entries[i-1]) {
			return i
		}
	}
	return 0
}

// Visible filters a sorted stream of entries (possibly spread over several
// chunks) down to what a view at revision View sees: per edge, the newest
// version with Rev <= View, unless it is a tombstone.
type Visible struct {
	View    uint64
	started bool
	has     bool
	group   Entry // the edge being collected
	pending Entry // its newest version so far with Rev <= View
}

// Push feeds the next entry. When e starts a new edge, Push returns the
// previous edge's visible version, if any.
func (v *Visible) Push(e Entry) (Entry, bool) {
	var out Entry
	var ok bool
	if !v.started || !e.SameEdge(v.group) {
		if v.has && !v.pending.Tombstone() {
			out, ok = v.pending, true
		}
		v.started = true
		v.group = e
		v.has = false
	}
	if e.Rev <= v.View {
		v.pending = e
		v.has = true
	}
	return out, ok
}

// Flush returns the last edge's visible version, if any, and resets v.
func (v *Visible) Flush() (Entry, bool) {
	out, ok := v.pending, v.has && !v.pending.Tombstone()
	view := v.View
	*v = Visible{View: view}
	return out, ok
}

// VisibleIn filters entries in place down to what a view at revision view
// sees, as Visible does for a stream: per edge, the newest version with
// Rev <= view, unless it is a tombstone. entries must hold every version
// of each edge it holds (one chunk's entries do: an edge never spans two
// chunks).
func VisibleIn(entries []Entry, view uint64) []Entry {
	out := entries[:0]
	cand := -1 // the newest version at or below view of the edge at i
	for i := range entries {
		if entries[i].Rev <= view {
			cand = i
		}
		if i+1 < len(entries) && entries[i+1].SameEdge(entries[i]) {
			continue
		}
		if cand >= 0 && !entries[cand].Tombstone() {
			if len(out) == cand { // nothing dropped so far: already in place
				out = out[:cand+1]
			} else {
				out = append(out, entries[cand]) // len(out) < cand: in place
			}
		}
		cand = -1
	}
	return out
}
