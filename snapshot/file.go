package snapshot

import (
	"fmt"
	"math"
	"os"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
)

// File is an open snapshot: the header, the directory, and typed slices over
// the mapped sections. It is immutable and safe for concurrent use.
//
// Caveats (as in bbolt): every slice and string a File or a view over it
// returns points into the mapping and is valid only until Close; copy what
// must outlive it. Open checks the header, the directory and the section
// bounds in O(number of sections); the contents of the sections are only
// checked by Verify. Accessors built on File (package csr) check every
// offset they follow, so a damaged file yields an error, never a panic.
type File struct {
	data   []byte
	mapped bool // data is an mmap to release on Close

	hdr Header

	present uint64 // bit k set: section of kind k (< maxKnownKind) is present
	secs    [maxKnownKind]Section

	strOffsets     []uint64
	strBytes       []byte
	relations      []RelationRow
	nodeIDs        []uint64
	nodes          []NodeRow
	payloadOffsets []uint64
	payloads       []byte
	fwdOffsets     []uint64
	fwdTargets     []uint32
	fwdRels        []uint32
	fwdWeights     []float32
	fwdRevs        []uint64
	revOffsets     []uint64
	revSources     []uint32
	revRels        []uint32
	revWeights     []float32
	revTimes       []RevTime
	keyOrder       []uint32
	triKeys        []uint32
	triOffsets     []uint64
	triPostings    []uint32
	pageRank       []float64
	nodeHistory    []NodeHistory
	lexicon        *Lexicon   // nil without the lexicon group
	textIndex      *TextIndex // nil without the text-index group

	decOnce sync.Once
	dec     *zstd.Decoder
	decErr  error
}

// Open maps the snapshot at path read-only (PROT_READ, MAP_SHARED) and
// checks its header and directory. It does not read the sections.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < HeaderSize {
		return nil, formatErr("header", 0, "file is %d bytes, shorter than the %d-byte header", size, HeaderSize)
	}
	if size > math.MaxInt {
		return nil, formatErr("header", 0, "file of %d bytes cannot be mapped", size)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("snapshot: mmap %s: %w", path, err)
	}
	f := &File{}
	if err := f.init(data); err != nil {
		_ = unix.Munmap(data)
		return nil, err
	}
	f.mapped = true
	return f, nil
}

// FromBytes reads a snapshot held in memory; it shares Open's code path.
// The File aliases b (b must not change while the File is used); if b is
// not 8-byte aligned it is copied once into an aligned buffer.
func FromBytes(b []byte) (*File, error) {
	if len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		words := make([]uint64, (len(b)+7)/8)
		aligned := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(b))
		copy(aligned, b)
		b = aligned
	}
	f := &File{}
	if err := f.init(b); err != nil {
		return nil, err
	}
	return f, nil
}

// Close releases the mapping. No slice or string obtained from f may be
// used afterwards.
func (f *File) Close() error {
	if f == nil {
		return nil
	}
	if f.dec != nil {
		f.dec.Close()
		f.dec = nil
	}
	if !f.mapped || f.data == nil {
		return nil
	}
	data := f.data
	f.data = nil
	f.mapped = false
	return unix.Munmap(data)
}

func littleEndianHost() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

func (f *File) init(data []byte) error {
	if !littleEndianHost() {
		return fmt.Errorf("%w: the zero-copy reader needs a little-endian host", ErrUnsupported)
	}
	h, err := parseHeader(data)
	if err != nil {
		return err
	}
	f.data = data
	f.hdr = h
	dir := data[h.DirOffset:h.FileLength]
	if got := crc(dir); got != h.DirCRC {
		return formatErr("directory", int64(h.DirOffset), "directory CRC mismatch: stored %08x, computed %08x", h.DirCRC, got)
	}
	next := uint64(HeaderSize) // where the next section must start
	var prevKind Kind
	for i := 0; i < int(h.SectionCount); i++ {
		off := int64(h.DirOffset) + int64(i*DirEntrySize)
		s := decodeSection(dir[i*DirEntrySize:])
		if s.Kind == 0 || (i > 0 && s.Kind <= prevKind) {
			return formatErr("directory", off, "section kind %d out of order (after %d)", s.Kind, prevKind)
		}
		prevKind = s.Kind
		if s.Flags&^knownSectionFlags != 0 {
			return formatErr("directory", off, "section %s has unknown flags %#x", s.Kind, s.Flags)
		}
		if s.Offset != alignUp(next) {
			return formatErr("directory", off, "section %s starts at %d, want %d", s.Kind, s.Offset, alignUp(next))
		}
		if s.Offset > h.DirOffset || s.Length > h.DirOffset-s.Offset {
			return formatErr("directory", off, "section %s [%d, +%d) runs past the directory at %d", s.Kind, s.Offset, s.Length, h.DirOffset)
		}
		next = s.Offset + s.Length
		if s.Kind >= maxKnownKind || !isKnownKind(s.Kind) {
			if s.Flags&SectionOptional == 0 {
				return fmt.Errorf("%w: required section kind %d is unknown to this reader (format %s)", ErrUnsupported, s.Kind, h.Version)
			}
			continue // a newer minor's optional section
		}
		f.secs[s.Kind] = s
		f.present |= 1 << s.Kind
	}
	if alignUp(next) != h.DirOffset {
		return formatErr("directory", int64(h.DirOffset), "directory at %d, want %d after the last section", h.DirOffset, alignUp(next))
	}
	for _, k := range requiredKinds {
		if f.present&(1<<k) == 0 {
			return formatErr("directory", int64(h.DirOffset), "required section %s is missing", k)
		}
	}
	return f.bindSections()
}

func isKnownKind(k Kind) bool { return int(k) < len(kindNames) && kindNames[k] != "" }

// bytesOf returns the bytes of section k checked to be want bytes long
// (want < 0: any multiple of -want).
func (f *File) bytesOf(k Kind, want int64) ([]byte, error) {
	s := f.secs[k]
	b := f.data[s.Offset : s.Offset+s.Length]
	if want >= 0 && uint64(want) != s.Length {
		return nil, formatErr(k.String(), int64(s.Offset), "length %d, want %d from the header counts", s.Length, want)
	}
	if want < 0 && s.Length%uint64(-want) != 0 {
		return nil, formatErr(k.String(), int64(s.Offset), "length %d is not a multiple of %d", s.Length, -want)
	}
	return b, nil
}

func u64s(b []byte) []uint64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}

func u32s(b []byte) []uint32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func f32s(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func f64s(b []byte) []float64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// bindSections makes the typed slices and checks their lengths against the
// header counts, plus the O(1) end-of-array invariants (last offsets equal
// the lengths they index).
func (f *File) bindSections() error {
	h := f.hdr
	n, m, s, r := int64(h.NodeCount), int64(h.EdgeCount), int64(h.StringCount), int64(h.RelationCount)
	if uint64(n) > h.FileLength || uint64(m) > h.FileLength || uint64(s) > h.FileLength {
		return formatErr("header", 32, "counts exceed the file size")
	}
	var err error
	get := func(k Kind, want int64) []byte {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = f.bytesOf(k, want)
		return b
	}
	f.strOffsets = u64s(get(KindStrOffsets, 8*(s+1)))
	f.strBytes = get(KindStrBytes, -1)
	relBytes := get(KindRelations, relationSize*r)
	f.nodeIDs = u64s(get(KindNodeIDs, 8*n))
	nodeBytes := get(KindNodes, nodeRowSize*n)
	f.payloadOffsets = u64s(get(KindPayloadOffsets, 8*(n+1)))
	f.payloads = get(KindPayloads, -1)
	f.fwdOffsets = u64s(get(KindFwdOffsets, 8*(n+1)))
	f.fwdTargets = u32s(get(KindFwdTargets, 4*m))
	f.fwdRels = u32s(get(KindFwdRels, 4*m))
	f.fwdWeights = f32s(get(KindFwdWeights, 4*m))
	f.fwdRevs = u64s(get(KindFwdRevs, 8*m))
	f.revOffsets = u64s(get(KindRevOffsets, 8*(n+1)))
	f.revSources = u32s(get(KindRevSources, 4*m))
	f.revRels = u32s(get(KindRevRels, 4*m))
	f.revWeights = f32s(get(KindRevWeights, 4*m))
	revTimeBytes := get(KindRevTimes, -revTimeSize)
	f.keyOrder = u32s(get(KindKeyOrder, 4*n))
	f.triKeys = u32s(get(KindTriKeys, -4))
	f.triOffsets = u64s(get(KindTriOffsets, 8*(int64(len(f.triKeys))+1)))
	f.triPostings = u32s(get(KindTriPostings, -4))
	if err != nil {
		return err
	}
	if f.present&(1<<KindPageRank) != 0 {
		f.pageRank = f64s(get(KindPageRank, 8*n))
		if err != nil {
			return err
		}
	}
	if err := f.bindSearch(); err != nil {
		return err
	}
	if len(relBytes) > 0 {
		f.relations = unsafe.Slice((*RelationRow)(unsafe.Pointer(&relBytes[0])), r)
	}
	if len(nodeBytes) > 0 {
		f.nodes = unsafe.Slice((*NodeRow)(unsafe.Pointer(&nodeBytes[0])), n)
	}
	if len(revTimeBytes) > 0 {
		f.revTimes = unsafe.Slice((*RevTime)(unsafe.Pointer(&revTimeBytes[0])), len(revTimeBytes)/revTimeSize)
	}
	ends := []struct {
		k    Kind
		last uint64
		want uint64
	}{
		{KindStrOffsets, f.strOffsets[s], uint64(len(f.strBytes))},
		{KindPayloadOffsets, f.payloadOffsets[n], uint64(len(f.payloads))},
		{KindFwdOffsets, f.fwdOffsets[n], uint64(m)},
		{KindRevOffsets, f.revOffsets[n], uint64(m)},
		{KindTriOffsets, f.triOffsets[len(f.triKeys)], uint64(len(f.triPostings))},
	}
	for _, e := range ends {
		if e.last != e.want {
			sec := f.secs[e.k]
			return formatErr(e.k.String(), int64(sec.Offset+sec.Length-8), "last offset %d, want %d", e.last, e.want)
		}
	}
	return nil
}
