package snapshot

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// WriterOptions configures an export.
type WriterOptions struct {
	// Logical zeroes history metadata (node and edge revisions and
	// timestamps, run and task ids, the header revision and commit time)
	// and sets FlagLogical, so the file depends only on the logical state.
	Logical bool
	// Extra, when set, is called with a read view of the finished core file
	// (valid only during the call) and returns optional sections to append,
	// e.g. PageRank computed over the CSR. Each kind must be a known optional
	// kind, at most once, ascending.
	Extra func(f *File) ([]ExtraSection, error)
	// Progress, when set, is called now and then during the long phases.
	Progress func(Progress)
}

// ExtraSection is an optional section produced by WriterOptions.Extra.
type ExtraSection struct {
	Kind Kind
	Data []byte
}

// Progress reports how far an export is: Phase is "scan" (first pass over
// the state), "nodes", "edges" or "index"; Done of Total items.
type Progress struct {
	Phase       string
	Done, Total uint64
}

// WriteStats describes a finished export.
type WriteStats struct {
	Nodes, MissingNodes, Edges int
	Strings                    int
	Bytes                      int64 // file length
	PayloadBytes               int64 // payloads as given (uncompressed)
	PayloadStored              int64 // payload section length
}

// compressMin is the payload size from which zstd is tried; the compressed
// form is kept only if smaller. It and the encoder's settings (fill) decide
// a payload's entry, which an export from a base copies from an earlier
// file (NodeRecord.Stored): changing them changes FormatNewest (SPEC.md
// §12.5).
const compressMin = 256

// output is where the writer puts the file: a fixed region it fills in
// place (header and every section before the payloads), then sequential
// appends after it (payloads, extra sections, directory).
type output interface {
	// region returns size zeroed bytes for the start of the file, 8-aligned.
	region(size uint64) ([]byte, error)
	// releaseRegion ends writes through the region slice.
	releaseRegion() error
	// append writes p at the current end of the file.
	append(p []byte) error
	// writeAt overwrites bytes inside the file (the header).
	writeAt(p []byte, off uint64) error
	// truncate cuts the file back to size; later appends continue there.
	truncate(size uint64) error
	// view returns a File over the file as written so far; close it before
	// writing again.
	view() (*File, error)
}

// layout is the position of every core section.
type layout struct {
	secs [maxKnownKind]Section
}

// builder carries the state of one export between its passes. Its heap is
// per node (ids, in-degree cursors: 16 bytes), per distinct small string,
// per distinct revision and per distinct trigram; nothing per edge or per
// payload byte.
type builder struct {
	st   State
	opts WriterOptions
	out  output

	rels      []RelationRecord
	ids       []uint64
	idx       *idIndex // over ids, built after the node pass
	cursor    []uint64 // in-degrees after pass 1, then reverse-CSR fill cursors
	missing   int
	m         uint64
	keyBytes  uint64
	small     map[string]uint32 // type/scope/run/task/relation names → string id
	smallList []string
	revs      map[uint64]int64
	triCount  map[uint32]uint64
	triKeys   []uint32
	triPos    map[uint32]uint32 // trigram → index in triKeys
	triCursor []uint64
	triTotal  uint64

	lay     layout
	reg     []byte
	enc     *zstd.Encoder
	encBuf  []byte
	triBuf  []uint32
	stats   WriteStats
	payOff  uint64 // bytes of payload section written
	payCRC  uint32
	payBase uint64 // file offset of the payload section
}

// Write exports st into a snapshot held in memory. Tests and small tools
// use it; WriteFile streams to disk with the same code.
func Write(st State, opts WriterOptions) ([]byte, WriteStats, error) {
	out := &memOutput{}
	stats, err := build(st, opts, out)
	if err != nil {
		return nil, WriteStats{}, err
	}
	return out.bytes(), stats, nil
}

func build(st State, opts WriterOptions, out output) (WriteStats, error) {
	if !littleEndianHost() {
		return WriteStats{}, fmt.Errorf("%w: the writer needs a little-endian host", ErrUnsupported)
	}
	b := &builder{st: st, opts: opts, out: out}
	if err := b.scan(); err != nil {
		return WriteStats{}, err
	}
	if err := b.fill(); err != nil {
		return WriteStats{}, err
	}
	return b.finish()
}

func (b *builder) progress(phase string, done, total uint64) {
	if b.opts.Progress != nil && (done%65536 == 0 || done == total) {
		b.opts.Progress(Progress{Phase: phase, Done: done, Total: total})
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidState, fmt.Sprintf(format, args...))
}

func (b *builder) intern(s string) {
	if _, ok := b.small[s]; !ok {
		b.small[s] = 0
	}
}

func (b *builder) addRev(rev uint64, ts int64) error {
	if b.opts.Logical {
		return nil
	}
	if old, ok := b.revs[rev]; ok && old != ts {
		return invalid("revision %d has two commit times (%d and %d)", rev, old, ts)
	}
	b.revs[rev] = ts
	return nil
}

// keyTrigrams appends the distinct trigrams of key, sorted, to b.triBuf.
func (b *builder) keyTrigrams(key string) []uint32 {
	t := b.triBuf[:0]
	for i := 0; i+3 <= len(key); i++ {
		t = append(t, TrigramOf(key[i], key[i+1], key[i+2]))
	}
	slices.Sort(t)
	t = slices.Compact(t)
	b.triBuf = t
	return t
}

// scan is the first pass: counts, the id array, distinct strings,
// revisions and trigrams, in-degrees. It validates the State contract.
func (b *builder) scan() error {
	rels, err := b.st.Relations()
	if err != nil {
		return err
	}
	b.rels = rels
	b.small = map[string]uint32{"": 0}
	b.revs = map[uint64]int64{}
	b.triCount = map[uint32]uint64{}
	for i, r := range rels {
		if r.ID == 0 || (i > 0 && r.ID <= rels[i-1].ID) {
			return invalid("relation ids not strictly ascending and non-zero at %d", r.ID)
		}
		if !finite32(r.DefaultWeight) {
			return invalid("relation %q has a non-finite default weight", r.Name)
		}
		b.intern(r.Name)
	}
	err = b.st.Nodes(func(n NodeRecord) error {
		if len(b.ids) > 0 && n.ID <= b.ids[len(b.ids)-1] {
			return invalid("node ids not strictly ascending: %d after %d", n.ID, b.ids[len(b.ids)-1])
		}
		if len(b.ids) == math.MaxUint32 {
			return invalid("more than 2^32-1 nodes")
		}
		b.ids = append(b.ids, n.ID)
		b.keyBytes += uint64(len(n.Key))
		for _, t := range b.keyTrigrams(n.Key) {
			b.triCount[t]++
		}
		if n.Missing {
			b.missing++
			return nil
		}
		b.intern(n.Type)
		b.intern(n.Scope)
		if !b.opts.Logical {
			b.intern(n.RunID)
			b.intern(n.TaskID)
		}
		if err := b.addRev(n.CreatedRev, n.CreatedTS); err != nil {
			return err
		}
		if err := b.addRev(n.Rev, n.UpdatedTS); err != nil {
			return err
		}
		b.progress("scan", uint64(len(b.ids)), 0)
		return nil
	})
	if err != nil {
		return err
	}
	b.cursor = make([]uint64, len(b.ids)+1)
	b.idx = newIDIndex(b.ids)
	var prev EdgeRecord
	src := 0 // edges come in source order: follow the sources by merging
	err = b.st.Edges(func(e EdgeRecord) error {
		if b.m > 0 && !edgeLess(prev, e) {
			return invalid("edges not strictly ascending by (src, rel, dst): %d/%d/%d after %d/%d/%d", e.Src, e.Rel, e.Dst, prev.Src, prev.Rel, prev.Dst)
		}
		prev = e
		for src < len(b.ids) && b.ids[src] < e.Src {
			src++
		}
		if src == len(b.ids) || b.ids[src] != e.Src {
			return invalid("edge source %d is not a delivered node", e.Src)
		}
		d, ok := b.idx.find(e.Dst)
		if !ok {
			return invalid("edge target %d is not a delivered node", e.Dst)
		}
		if _, ok := b.relationIndex(e.Rel); !ok {
			return invalid("edge relation %d is not in the relation table", e.Rel)
		}
		if !finite32(e.Weight) {
			return invalid("edge %d/%d/%d has a non-finite weight", e.Src, e.Rel, e.Dst)
		}
		if err := b.addRev(e.Rev, e.TS); err != nil {
			return err
		}
		b.cursor[d]++
		b.m++
		if b.m >= 1<<40 {
			return invalid("too many edges")
		}
		b.progress("scan", b.m, 0)
		return nil
	})
	if err != nil {
		return err
	}
	// Strings: keys are ids 0..n-1 in node order; the small strings follow,
	// sorted, so their ids depend only on the set.
	b.smallList = make([]string, 0, len(b.small))
	for s := range b.small {
		b.smallList = append(b.smallList, s)
	}
	slices.Sort(b.smallList)
	for i, s := range b.smallList {
		b.small[s] = uint32(len(b.ids) + i)
	}
	if uint64(len(b.ids))+uint64(len(b.smallList)) > math.MaxUint32 {
		return invalid("more than 2^32-1 strings")
	}
	b.triKeys = make([]uint32, 0, len(b.triCount))
	for t := range b.triCount {
		b.triKeys = append(b.triKeys, t)
	}
	slices.Sort(b.triKeys)
	b.triPos = make(map[uint32]uint32, len(b.triKeys))
	b.triCursor = make([]uint64, len(b.triKeys)+1)
	for j, t := range b.triKeys {
		b.triPos[t] = uint32(j)
		b.triCursor[j+1] = b.triCursor[j] + b.triCount[t]
	}
	b.triTotal = b.triCursor[len(b.triKeys)]
	b.triCount = nil
	return nil
}

// idIndex finds a node id's index in the sorted id array: a table of
// 2^16 bucket starts by the id's top bits narrows the binary search to a
// few entries for hashed (uniform) ids. 256 KiB, whatever the graph size.
type idIndex struct {
	ids   []uint64
	shift uint
	start []uint32 // start[b]: first index whose id>>shift >= b; len 1<<16+1
}

const idBucketBits = 16

func newIDIndex(ids []uint64) *idIndex {
	x := &idIndex{ids: ids, start: make([]uint32, 1<<idBucketBits+1)}
	if len(ids) > 0 {
		if l := bits.Len64(ids[len(ids)-1]); l > idBucketBits {
			x.shift = uint(l - idBucketBits)
		}
	}
	j := 0
	for b := 0; b <= 1<<idBucketBits; b++ {
		for j < len(ids) && ids[j]>>x.shift < uint64(b) {
			j++
		}
		x.start[b] = uint32(j)
	}
	return x
}

func (x *idIndex) find(id uint64) (int, bool) {
	b := id >> x.shift
	if b >= 1<<idBucketBits {
		return len(x.ids), false
	}
	lo, hi := int(x.start[b]), int(x.start[b+1])
	i, ok := slices.BinarySearch(x.ids[lo:hi], id)
	return lo + i, ok
}

func edgeLess(a, b EdgeRecord) bool {
	if a.Src != b.Src {
		return a.Src < b.Src
	}
	if a.Rel != b.Rel {
		return a.Rel < b.Rel
	}
	return a.Dst < b.Dst
}

func finite32(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

func (b *builder) relationIndex(id uint32) (int, bool) {
	return slices.BinarySearchFunc(b.rels, id, func(r RelationRecord, id uint32) int { return cmp.Compare(r.ID, id) })
}

func (b *builder) stringBytes() uint64 {
	n := b.keyBytes
	for _, s := range b.smallList {
		n += uint64(len(s))
	}
	return n
}

// plan lays out the core sections in kind order. Payloads come last: their
// length is only known once written.
func (b *builder) plan() uint64 {
	n, m := uint64(len(b.ids)), b.m
	s := n + uint64(len(b.smallList))
	sizes := []struct {
		k    Kind
		size uint64
	}{
		{KindStrOffsets, 8 * (s + 1)},
		{KindStrBytes, b.stringBytes()},
		{KindRelations, relationSize * uint64(len(b.rels))},
		{KindNodeIDs, 8 * n},
		{KindNodes, nodeRowSize * n},
		{KindPayloadOffsets, 8 * (n + 1)},
		{KindFwdOffsets, 8 * (n + 1)},
		{KindFwdTargets, 4 * m},
		{KindFwdRels, 4 * m},
		{KindFwdWeights, 4 * m},
		{KindFwdRevs, 8 * m},
		{KindRevOffsets, 8 * (n + 1)},
		{KindRevSources, 4 * m},
		{KindRevRels, 4 * m},
		{KindRevWeights, 4 * m},
		{KindRevTimes, revTimeSize * uint64(len(b.revs))},
		{KindKeyOrder, 4 * n},
		{KindTriKeys, 4 * uint64(len(b.triKeys))},
		{KindTriOffsets, 8 * (uint64(len(b.triKeys)) + 1)},
		{KindTriPostings, 4 * b.triTotal},
	}
	next := uint64(HeaderSize)
	for _, z := range sizes {
		off := alignUp(next)
		b.lay.secs[z.k] = Section{Kind: z.k, Offset: off, Length: z.size}
		next = off + z.size
	}
	b.payBase = alignUp(next)
	return b.payBase
}

func (b *builder) sec(k Kind) []byte {
	s := b.lay.secs[k]
	return b.reg[s.Offset : s.Offset+s.Length]
}

// fill is the second pass: it writes every section.
func (b *builder) fill() error {
	regionSize := b.plan()
	reg, err := b.out.region(regionSize)
	if err != nil {
		return err
	}
	b.reg = reg
	b.enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(1<<20))
	if err != nil {
		return err
	}
	defer b.enc.Close()
	// The payload section starts right after the region (it is 64-aligned).
	if err := b.writeStrings(); err != nil {
		return err
	}
	if err := b.writeRelations(); err != nil {
		return err
	}
	if err := b.writeNodes(); err != nil {
		return err
	}
	if err := b.writeEdges(); err != nil {
		return err
	}
	b.writeRevTimes()
	if err := b.writeKeyOrder(); err != nil {
		return err
	}
	b.writeTrigramTables()
	return nil
}

func (b *builder) writeStrings() error {
	// Keys are written during the node pass; here the small strings, which
	// follow the keys in the byte area.
	offs := u64s(b.sec(KindStrOffsets))
	bytesSec := b.sec(KindStrBytes)
	n := len(b.ids)
	pos := b.keyBytes
	for i, s := range b.smallList {
		offs[n+i] = pos
		copy(bytesSec[pos:], s)
		pos += uint64(len(s))
	}
	offs[n+len(b.smallList)] = pos
	return nil
}

func (b *builder) writeRelations() error {
	sec := b.sec(KindRelations)
	if len(sec) == 0 {
		return nil
	}
	rows := unsafe.Slice((*RelationRow)(unsafe.Pointer(&sec[0])), len(b.rels))
	for i, r := range b.rels {
		var flags uint32
		if r.Bidirectional {
			flags |= RelBidirectional
		}
		if r.Inhibitory {
			flags |= RelInhibitory
		}
		flags |= uint32(r.Role.Bits())
		rows[i] = RelationRow{ID: r.ID, Name: b.small[r.Name], DefaultWeight: r.DefaultWeight, Flags: flags}
	}
	return nil
}

func (b *builder) writeNodes() error {
	ids := u64s(b.sec(KindNodeIDs))
	var rows []NodeRow
	if sec := b.sec(KindNodes); len(sec) > 0 {
		rows = unsafe.Slice((*NodeRow)(unsafe.Pointer(&sec[0])), len(b.ids))
	}
	strOffs := u64s(b.sec(KindStrOffsets))
	strBytes := b.sec(KindStrBytes)
	payOffs := u64s(b.sec(KindPayloadOffsets))
	postings := u32s(b.sec(KindTriPostings))
	cursor := slices.Clone(b.triCursor) // fill positions per trigram
	var keyPos uint64
	i := 0
	total := uint64(len(b.ids))
	err := b.st.Nodes(func(n NodeRecord) error {
		if i >= len(b.ids) || n.ID != b.ids[i] {
			return invalid("the state changed between passes (node %d)", n.ID)
		}
		if keyPos+uint64(len(n.Key)) > b.keyBytes {
			return invalid("the state changed between passes (keys)")
		}
		ids[i] = n.ID
		strOffs[i] = keyPos
		copy(strBytes[keyPos:], n.Key)
		keyPos += uint64(len(n.Key))
		for _, t := range b.keyTrigrams(n.Key) {
			j, ok := b.triPos[t]
			if !ok || cursor[j] >= b.triCursor[j+1] {
				return invalid("the state changed between passes (keys)")
			}
			postings[cursor[j]] = uint32(i)
			cursor[j]++
		}
		empty := b.small[""]
		row := NodeRow{Type: empty, Scope: empty, RunID: empty, TaskID: empty}
		inclSup, inclExp := b.st.Includes()
		if n.Superseded {
			if !inclSup {
				return invalid("node %d is superseded in a state that excludes superseded items", n.ID)
			}
			row.Flags |= NodeFlagSuperseded
		}
		if n.Missing {
			row.Flags |= NodeFlagMissing
		} else {
			if n.HasValidFrom {
				row.Flags |= NodeFlagValidFrom
				row.ValidFrom = n.ValidFrom
			}
			if n.HasValidUntil {
				row.Flags |= NodeFlagValidUntil
				row.ValidUntil = n.ValidUntil
			}
			if n.Expired {
				if !inclExp {
					return invalid("node %d is expired in a state that excludes expired items", n.ID)
				}
				row.Flags |= NodeFlagExpired
			}
			row.Type = b.small[n.Type]
			row.Scope = b.small[n.Scope]
			if !b.opts.Logical {
				row.RunID = b.small[n.RunID]
				row.TaskID = b.small[n.TaskID]
				row.CreatedTS, row.UpdatedTS = n.CreatedTS, n.UpdatedTS
				row.CreatedRev, row.Rev = n.CreatedRev, n.Rev
			}
			if err := b.writeNodePayload(n); err != nil {
				return err
			}
		}
		rows[i] = row
		payOffs[i+1] = b.payOff
		i++
		b.stats.Nodes++
		if n.Missing {
			b.stats.MissingNodes++
		}
		b.progress("nodes", uint64(i), total)
		return nil
	})
	if err != nil {
		return err
	}
	if i != len(b.ids) || keyPos != b.keyBytes {
		return invalid("the state changed between passes (%d nodes, then %d)", len(b.ids), i)
	}
	return nil
}

// writeNodePayload writes n's entry: the stored one when given, else its
// payload encoded.
func (b *builder) writeNodePayload(n NodeRecord) error {
	if n.Stored == nil {
		return b.writePayload(n.Payload)
	}
	size, err := storedSize(n.Stored)
	if err != nil {
		return invalid("node %d: %v", n.ID, err)
	}
	b.stats.PayloadBytes += int64(size)
	return b.appendPayload(n.Stored)
}

// storedSize is the payload length of a stored entry (its frame's content
// size when compressed: EncodeAll records it).
func storedSize(entry []byte) (int, error) {
	switch {
	case len(entry) == 0:
		return 0, nil
	case entry[0] == PayloadRaw:
		return len(entry) - 1, nil
	case entry[0] == PayloadZstd:
		var h zstd.Header
		if err := h.Decode(entry[1:]); err != nil || !h.HasFCS {
			return 0, fmt.Errorf("stored payload has no zstd frame size (%v)", err)
		}
		return int(h.FrameContentSize), nil
	}
	return 0, fmt.Errorf("stored payload has unknown encoding %d", entry[0])
}

func (b *builder) writePayload(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	b.stats.PayloadBytes += int64(len(p))
	enc, data := PayloadRaw, p
	if len(p) >= compressMin {
		b.encBuf = b.enc.EncodeAll(p, b.encBuf[:0])
		if len(b.encBuf) < len(p) {
			enc, data = PayloadZstd, b.encBuf
		}
	}
	hdr := [1]byte{enc}
	if err := b.appendPayload(hdr[:]); err != nil {
		return err
	}
	return b.appendPayload(data)
}

func (b *builder) appendPayload(p []byte) error {
	b.payCRC = crc32Update(b.payCRC, p)
	b.payOff += uint64(len(p))
	return b.out.append(p)
}

func (b *builder) writeEdges() error {
	n := len(b.ids)
	fwdOffs := u64s(b.sec(KindFwdOffsets))
	tgts, rels, wts := u32s(b.sec(KindFwdTargets)), u32s(b.sec(KindFwdRels)), f32s(b.sec(KindFwdWeights))
	revs := u64s(b.sec(KindFwdRevs))
	revOffs := u64s(b.sec(KindRevOffsets))
	srcs, rrels, rwts := u32s(b.sec(KindRevSources)), u32s(b.sec(KindRevRels)), f32s(b.sec(KindRevWeights))
	// In-degrees → reverse offsets; cursor becomes the fill position.
	var sum uint64
	for i := 0; i < n; i++ {
		d := b.cursor[i]
		revOffs[i] = sum
		b.cursor[i] = sum
		sum += d
	}
	revOffs[n] = sum
	var k uint64
	src := 0 // node index of the current source; edges come in src order
	err := b.st.Edges(func(e EdgeRecord) error {
		if k >= b.m {
			return invalid("the state changed between passes (edges)")
		}
		for src < n && b.ids[src] < e.Src {
			src++
			fwdOffs[src] = k
		}
		if src >= n || b.ids[src] != e.Src {
			return invalid("the state changed between passes (edge source %d)", e.Src)
		}
		d, ok := b.idx.find(e.Dst)
		if !ok {
			return invalid("the state changed between passes (edge target %d)", e.Dst)
		}
		tgts[k], rels[k], wts[k] = uint32(d), e.Rel, e.Weight
		if !b.opts.Logical {
			revs[k] = e.Rev
		}
		p := b.cursor[d]
		if p >= revOffs[d+1] {
			return invalid("the state changed between passes (in-degree of %d)", e.Dst)
		}
		srcs[p], rrels[p], rwts[p] = uint32(src), e.Rel, e.Weight
		b.cursor[d]++
		k++
		b.progress("edges", k, b.m)
		return nil
	})
	if err != nil {
		return err
	}
	if k != b.m {
		return invalid("the state changed between passes (%d edges, then %d)", b.m, k)
	}
	for src < n {
		src++
		fwdOffs[src] = k
	}
	b.stats.Edges = int(k)
	b.cursor = nil
	return nil
}

func (b *builder) writeRevTimes() {
	sec := b.sec(KindRevTimes)
	if len(sec) == 0 {
		return
	}
	rows := unsafe.Slice((*RevTime)(unsafe.Pointer(&sec[0])), len(b.revs))
	i := 0
	for rev, ts := range b.revs {
		rows[i] = RevTime{Rev: rev, TS: ts}
		i++
	}
	slices.SortFunc(rows, func(a, c RevTime) int { return cmp.Compare(a.Rev, c.Rev) })
}

// writeKeyOrder sorts the node indices by key, in place in the output, using
// the keys already written: no copy of the keys on the heap.
func (b *builder) writeKeyOrder() error {
	order := u32s(b.sec(KindKeyOrder))
	strOffs := u64s(b.sec(KindStrOffsets))
	strBytes := b.sec(KindStrBytes)
	key := func(i uint32) string {
		lo, hi := strOffs[i], strOffs[i+1]
		if lo == hi {
			return ""
		}
		return unsafe.String(&strBytes[lo], hi-lo)
	}
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, c uint32) int { return strings.Compare(key(a), key(c)) })
	for i := 1; i < len(order); i++ {
		if key(order[i-1]) == key(order[i]) {
			return invalid("two nodes have the key %q", key(order[i]))
		}
	}
	b.progress("index", uint64(len(order)), uint64(len(order)))
	return nil
}

func (b *builder) writeTrigramTables() {
	copy(u32s(b.sec(KindTriKeys)), b.triKeys)
	copy(u64s(b.sec(KindTriOffsets)), b.triCursor)
}

// finish writes the directory and header (and any extra sections).
func (b *builder) finish() (WriteStats, error) {
	secs := make([]Section, 0, len(requiredKinds)+4)
	for _, k := range requiredKinds {
		if k == KindPayloads {
			continue
		}
		s := b.lay.secs[k]
		s.CRC = crc(b.reg[s.Offset : s.Offset+s.Length])
		secs = append(secs, s)
	}
	if err := b.out.releaseRegion(); err != nil {
		return WriteStats{}, err
	}
	b.reg = nil
	secs = append(secs, Section{Kind: KindPayloads, Offset: b.payBase, Length: b.payOff, CRC: b.payCRC})
	end := b.payBase + b.payOff
	hdr := Header{
		Version:       FormatNewest,
		NodeCount:     uint64(len(b.ids)),
		EdgeCount:     b.m,
		StringCount:   uint64(len(b.ids) + len(b.smallList)),
		RelationCount: uint32(len(b.rels)),
	}
	if inclSup, inclExp := b.st.Includes(); inclSup || inclExp {
		if inclSup {
			hdr.Flags |= FlagIncludesSuperseded
		}
		if inclExp {
			hdr.Flags |= FlagIncludesExpired
		}
	}
	if b.opts.Logical {
		hdr.Flags |= FlagLogical
	} else {
		hdr.Revision = b.st.Revision()
		hdr.CommitTime = b.st.CommitTime()
		hdr.ValidAt = b.st.ValidAt()
	}
	size, err := b.writeTail(&hdr, secs, end)
	if err != nil {
		return WriteStats{}, err
	}
	if b.opts.Extra != nil {
		view, err := b.out.view()
		if err != nil {
			return WriteStats{}, err
		}
		extra, err := b.opts.Extra(view)
		view.Close()
		if err != nil {
			return WriteStats{}, err
		}
		if len(extra) > 0 {
			if err := b.out.truncate(end); err != nil {
				return WriteStats{}, err
			}
			for i, x := range extra {
				if !slices.Contains(knownOptional, x.Kind) || (i > 0 && x.Kind <= extra[i-1].Kind) || x.Kind <= KindPayloads {
					return WriteStats{}, fmt.Errorf("snapshot: extra section %s is not a known optional kind in ascending order", x.Kind)
				}
				if x.Kind == KindPageRank && len(x.Data) != 8*len(b.ids) {
					return WriteStats{}, fmt.Errorf("snapshot: pagerank section has %d bytes, want %d", len(x.Data), 8*len(b.ids))
				}
				off := alignUp(end)
				if err := b.out.append(make([]byte, off-end)); err != nil {
					return WriteStats{}, err
				}
				if err := b.out.append(x.Data); err != nil {
					return WriteStats{}, err
				}
				secs = append(secs, Section{Kind: x.Kind, Flags: SectionOptional, Offset: off, Length: uint64(len(x.Data)), CRC: crc(x.Data)})
				end = off + uint64(len(x.Data))
			}
			if size, err = b.writeTail(&hdr, secs, end); err != nil {
				return WriteStats{}, err
			}
		}
	}
	b.stats.Strings = int(hdr.StringCount)
	b.stats.Bytes = int64(size)
	b.stats.PayloadStored = int64(b.payOff)
	return b.stats, nil
}

// writeTail appends padding and the directory after end and writes the
// header; it returns the file length.
func (b *builder) writeTail(hdr *Header, secs []Section, end uint64) (uint64, error) {
	dirOff := alignUp(end)
	dir := make([]byte, (dirOff-end)+uint64(len(secs))*DirEntrySize)
	pad := dirOff - end
	for i, s := range secs {
		s.encode(dir[pad+uint64(i*DirEntrySize):])
	}
	hdr.SectionCount = uint32(len(secs))
	hdr.DirOffset = dirOff
	hdr.FileLength = dirOff + uint64(len(secs))*DirEntrySize
	hdr.DirCRC = crc(dir[pad:])
	if err := b.out.append(dir); err != nil {
		return 0, err
	}
	var hb [HeaderSize]byte
	hdr.encode(hb[:])
	if err := b.out.writeAt(hb[:], 0); err != nil {
		return 0, err
	}
	return hdr.FileLength, nil
}

func crc32Update(c uint32, p []byte) uint32 { return crc32.Update(c, castagnoli, p) }

// memOutput keeps the whole file in memory: the region, then the tail.
type memOutput struct {
	reg  []byte
	tail []byte
}

func alignedBytes(n uint64) []byte {
	words := make([]uint64, n/8+1)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:n]
}

func (o *memOutput) region(size uint64) ([]byte, error) {
	o.reg = alignedBytes(size)
	return o.reg, nil
}

func (o *memOutput) releaseRegion() error { return nil }

func (o *memOutput) append(p []byte) error {
	o.tail = append(o.tail, p...)
	return nil
}

func (o *memOutput) writeAt(p []byte, off uint64) error {
	if off+uint64(len(p)) > uint64(len(o.reg)) {
		return errors.New("snapshot: writeAt outside the region")
	}
	copy(o.reg[off:], p)
	return nil
}

func (o *memOutput) truncate(size uint64) error {
	o.tail = o.tail[:size-uint64(len(o.reg))]
	return nil
}

func (o *memOutput) view() (*File, error) { return FromBytes(o.bytes()) }

func (o *memOutput) bytes() []byte {
	out := alignedBytes(uint64(len(o.reg) + len(o.tail)))
	copy(out, o.reg)
	copy(out[len(o.reg):], o.tail)
	return out
}

// Float64Bytes encodes v little-endian, the element layout of f64 sections
// (KindPageRank).
func Float64Bytes(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
	return out
}
