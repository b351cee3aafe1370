package snapshot

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// maxPayloadSize bounds what a zstd payload entry may decode to, so a hostile
// frame cannot make the reader allocate without limit.
const maxPayloadSize = 256 << 20

// Header returns the decoded header.
func (f *File) Header() Header { return f.hdr }

// NumNodes, NumEdges, NumStrings and NumRelations are the header counts
// (already checked against the section lengths by Open).
func (f *File) NumNodes() int     { return len(f.nodeIDs) }
func (f *File) NumEdges() int     { return len(f.fwdTargets) }
func (f *File) NumStrings() int   { return len(f.strOffsets) - 1 }
func (f *File) NumRelations() int { return len(f.relations) }

// Bytes is the whole file (zero-copy; valid until Close).
func (f *File) Bytes() []byte { return f.data }

// Size is the file length in bytes.
func (f *File) Size() int64 { return int64(len(f.data)) }

// Sections lists the directory, including optional sections this reader
// does not know.
func (f *File) Sections() []Section {
	h := f.hdr
	out := make([]Section, h.SectionCount)
	for i := range out {
		out[i] = decodeSection(f.data[h.DirOffset+uint64(i*DirEntrySize):])
	}
	return out
}

// Section returns the raw bytes of section k, if present and known.
func (f *File) Section(k Kind) ([]byte, bool) {
	if k >= maxKnownKind || f.present&(1<<k) == 0 {
		return nil, false
	}
	s := f.secs[k]
	return f.data[s.Offset : s.Offset+s.Length], true
}

func (f *File) sectionErr(k Kind, elem uint64, elemSize uint64, format string, args ...any) error {
	s := f.secs[k]
	return formatErr(k.String(), int64(s.Offset+elem*elemSize), format, args...)
}

// String returns string id as a zero-copy string (valid until Close).
func (f *File) String(id uint32) (string, error) {
	if uint64(id) >= uint64(f.NumStrings()) {
		return "", f.sectionErr(KindStrOffsets, 0, 0, "string id %d out of range [0, %d)", id, f.NumStrings())
	}
	lo, hi := f.strOffsets[id], f.strOffsets[id+1]
	if lo > hi || hi > uint64(len(f.strBytes)) {
		return "", f.sectionErr(KindStrOffsets, uint64(id), 8, "string %d spans [%d, %d) outside %d bytes", id, lo, hi, len(f.strBytes))
	}
	if lo == hi {
		return "", nil
	}
	return unsafe.String(&f.strBytes[lo], hi-lo), nil
}

// NodeIDs is the sorted node id array (node index → id).
func (f *File) NodeIDs() []uint64 { return f.nodeIDs }

// NodeRows is the node table, indexed by node index.
func (f *File) NodeRows() []NodeRow { return f.nodes }

func (f *File) checkNode(i uint32) error {
	if uint64(i) >= uint64(len(f.nodeIDs)) {
		return outOfRange("node index", uint64(i), uint64(len(f.nodeIDs)))
	}
	return nil
}

// Key returns the canonical key of node i (string i).
func (f *File) Key(i uint32) (string, error) {
	if err := f.checkNode(i); err != nil {
		return "", err
	}
	return f.String(i)
}

// NodeStrings returns node i's type, scope, run id and task id. A string id
// in the row that is not a string is a FormatError naming nodes.
func (f *File) NodeStrings(i uint32) (typ, scope, run, task string, err error) {
	if err := f.checkNode(i); err != nil {
		return "", "", "", "", err
	}
	row := &f.nodes[i]
	var out [4]string
	for j, id := range [4]uint32{row.Type, row.Scope, row.RunID, row.TaskID} {
		if uint64(id) >= uint64(f.NumStrings()) {
			return "", "", "", "", f.sectionErr(KindNodes, uint64(i), nodeRowSize, "node %d: string id %d not in [0, %d)", i, id, f.NumStrings())
		}
		if out[j], err = f.String(id); err != nil {
			return "", "", "", "", err
		}
	}
	return out[0], out[1], out[2], out[3], nil
}

// NodeType is node i's type alone (NodeStrings' first string, without
// reading the other three): the engines filter every activated node by it.
func (f *File) NodeType(i uint32) (string, error) {
	if err := f.checkNode(i); err != nil {
		return "", err
	}
	id := f.nodes[i].Type
	if uint64(id) >= uint64(f.NumStrings()) {
		return "", f.sectionErr(KindNodes, uint64(i), nodeRowSize, "node %d: string id %d not in [0, %d)", i, id, f.NumStrings())
	}
	return f.String(id)
}

// NodesOfType is the set of nodes whose type is typ, as a bitmap (node i
// is bit i%64 of word i/64), from one pass over the node table: the
// engines filter thousands of nodes a query by type, and a bit costs less
// to test than a string to read and compare. bad marks the nodes whose
// type cannot be read (a string id out of range, or a damaged string
// table): NodeType reports why.
func (f *File) NodesOfType(typ string) (match, bad []uint64) {
	n := len(f.nodeIDs)
	match, bad = make([]uint64, (n+63)/64), make([]uint64, (n+63)/64)
	// Types are few: each string id is compared once.
	type known struct {
		id uint32
		ok bool
	}
	var seen []known
	for i := 0; i < n; i++ {
		id := f.nodes[i].Type
		is, found := false, false
		for _, k := range seen {
			if k.id == id {
				is, found = k.ok, true
				break
			}
		}
		if !found {
			s, err := f.String(id)
			if err != nil {
				bad[i/64] |= 1 << (i % 64)
				continue
			}
			is = s == typ
			if len(seen) < 64 {
				seen = append(seen, known{id, is})
			}
		}
		if is {
			match[i/64] |= 1 << (i % 64)
		}
	}
	return match, bad
}

// Lookup finds the node index of id in the sorted id array, building
// nothing at open. Node ids are hashes of keys, spread uniformly, so one
// interpolation guess lands within about sqrt(n) positions of the answer; a
// galloping search around the guess brackets it within a page or so, and a
// binary search finishes. Worst case O(log n) for any id distribution. On a
// damaged file (unsorted ids) it stays in bounds and may answer wrongly;
// Verify detects that.
func (f *File) Lookup(id uint64) (uint32, bool) {
	ids := f.nodeIDs
	n := len(ids)
	if n == 0 || id < ids[0] || id > ids[n-1] {
		return 0, false
	}
	lo, hi := 0, n // the answer, if any, is in ids[lo:hi]
	if a, b := ids[0], ids[n-1]; b > a && n > 64 {
		pos := int(float64(id-a) / float64(b-a) * float64(n-1))
		pos = min(max(pos, 0), n-1)
		if ids[pos] <= id {
			// Gallop right: find step with ids[pos+step] > id.
			lo = pos
			for step := 1; ; step *= 2 {
				if pos+step >= n {
					break
				}
				if ids[pos+step] > id {
					hi = pos + step
					break
				}
				lo = pos + step
			}
		} else {
			hi = pos
			for step := 1; ; step *= 2 {
				if pos-step < 0 {
					break
				}
				if ids[pos-step] <= id {
					lo = pos - step
					break
				}
				hi = pos - step
			}
		}
	}
	i, ok := slices.BinarySearch(ids[lo:hi], id)
	return uint32(lo + i), ok
}

// PayloadEntry returns the stored entry of node i: its encoding and the
// stored bytes (zero-copy). An empty entry (no payload) has length 0.
func (f *File) PayloadEntry(i uint32) (enc byte, data []byte, err error) {
	if err := f.checkNode(i); err != nil {
		return 0, nil, err
	}
	lo, hi := f.payloadOffsets[i], f.payloadOffsets[i+1]
	if lo > hi || hi > uint64(len(f.payloads)) {
		return 0, nil, f.sectionErr(KindPayloadOffsets, uint64(i), 8, "payload %d spans [%d, %d) outside %d bytes", i, lo, hi, len(f.payloads))
	}
	if lo == hi {
		return PayloadRaw, nil, nil
	}
	enc = f.payloads[lo]
	if enc != PayloadRaw && enc != PayloadZstd {
		return 0, nil, formatErr(KindPayloads.String(), int64(f.secs[KindPayloads].Offset+lo), "payload %d has unknown encoding %d", i, enc)
	}
	return enc, f.payloads[lo+1 : hi], nil
}

// StoredPayload returns node i's payload entry as stored (zero-copy): the
// encoding byte, then the bytes; empty for none. It is what
// NodeRecord.Stored takes.
func (f *File) StoredPayload(i uint32) ([]byte, error) {
	if _, _, err := f.PayloadEntry(i); err != nil {
		return nil, err
	}
	return f.payloads[f.payloadOffsets[i]:f.payloadOffsets[i+1]], nil
}

// Payload returns the JSON payload of node i (nil for none). A raw entry is
// returned zero-copy; a compressed one is decoded into a new slice.
func (f *File) Payload(i uint32) ([]byte, error) {
	enc, data, err := f.PayloadEntry(i)
	if err != nil || enc == PayloadRaw {
		return data, err
	}
	dec, err := f.payloadDecoder()
	if err != nil {
		return nil, err
	}
	out, err := dec.DecodeAll(data, nil)
	if err != nil {
		return nil, formatErr(KindPayloads.String(), int64(f.secs[KindPayloads].Offset+f.payloadOffsets[i]), "payload %d does not decode: %v", i, err)
	}
	return out, nil
}

// payloadDecoder is made on first use (never at open) and released by
// Close; a zstd.Decoder is safe for concurrent DecodeAll.
func (f *File) payloadDecoder() (*zstd.Decoder, error) {
	f.decOnce.Do(func() {
		f.dec, f.decErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxPayloadSize))
	})
	return f.dec, f.decErr
}

// Edge arrays, whole (index them with the ranges below).
func (f *File) FwdOffsets() []uint64  { return f.fwdOffsets }
func (f *File) FwdTargets() []uint32  { return f.fwdTargets }
func (f *File) FwdRels() []uint32     { return f.fwdRels }
func (f *File) FwdWeights() []float32 { return f.fwdWeights }
func (f *File) FwdRevs() []uint64     { return f.fwdRevs }
func (f *File) RevOffsets() []uint64  { return f.revOffsets }
func (f *File) RevSources() []uint32  { return f.revSources }
func (f *File) RevRels() []uint32     { return f.revRels }
func (f *File) RevWeights() []float32 { return f.revWeights }

// OutRange is the position range of node i's out-edges in the Fwd arrays.
func (f *File) OutRange(i uint32) (lo, hi uint64, err error) {
	return f.edgeRange(KindFwdOffsets, f.fwdOffsets, i)
}

// InRange is the position range of node i's in-edges in the Rev arrays.
func (f *File) InRange(i uint32) (lo, hi uint64, err error) {
	return f.edgeRange(KindRevOffsets, f.revOffsets, i)
}

// edgeRange is small enough to inline into the callers' loops; the error
// path is out of line.
func (f *File) edgeRange(k Kind, offs []uint64, i uint32) (uint64, uint64, error) {
	if uint64(i)+1 < uint64(len(offs)) {
		lo, hi := offs[i], offs[i+1]
		if lo <= hi && hi <= uint64(len(f.fwdTargets)) {
			return lo, hi, nil
		}
	}
	return 0, 0, f.edgeRangeErr(k, offs, i)
}

func (f *File) edgeRangeErr(k Kind, offs []uint64, i uint32) error {
	if err := f.checkNode(i); err != nil {
		return err
	}
	return f.sectionErr(k, uint64(i), 8, "edge list of node %d spans [%d, %d) outside %d edges", i, offs[i], offs[i+1], len(f.fwdTargets))
}

// FindOut returns the position of the edge src -rel-> dst in the Fwd
// arrays, by binary search over src's out-list (sorted by rel, then target).
func (f *File) FindOut(src uint32, rel uint32, dst uint32) (uint64, bool, error) {
	lo, hi, err := f.OutRange(src)
	if err != nil {
		return 0, false, err
	}
	rels, tgts := f.fwdRels[lo:hi], f.fwdTargets[lo:hi]
	// A two-key binary search: first position whose (rel, target) >= (rel, dst).
	a, b := 0, len(rels)
	for a < b {
		mid := int(uint(a+b) >> 1)
		if rels[mid] < rel || (rels[mid] == rel && tgts[mid] < dst) {
			a = mid + 1
		} else {
			b = mid
		}
	}
	j := a
	if j < len(rels) && rels[j] == rel && tgts[j] == dst {
		return lo + uint64(j), true, nil
	}
	return 0, false, nil
}

// Relations is the relation table, ascending id.
func (f *File) Relations() []RelationRow { return f.relations }

// RelationByID finds relation id by binary search.
func (f *File) RelationByID(id uint32) (RelationRow, bool) {
	i, ok := slices.BinarySearchFunc(f.relations, id, func(r RelationRow, id uint32) int {
		switch {
		case r.ID < id:
			return -1
		case r.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return RelationRow{}, false
	}
	return f.relations[i], true
}

// CheckRelationOrder reports a relation table whose ids are not strictly
// ascending (damage that can hide an id from RelationByID's binary search)
// as a FormatError naming relations. O(relations).
func (f *File) CheckRelationOrder() error {
	for i := 1; i < len(f.relations); i++ {
		if f.relations[i].ID <= f.relations[i-1].ID {
			return f.sectionErr(KindRelations, uint64(i), relationSize, "relation id %d is not above the previous one", f.relations[i].ID)
		}
	}
	return nil
}

// RevTimes is the revision → commit time table, ascending revision.
func (f *File) RevTimes() []RevTime { return f.revTimes }

// RevisionTime returns the commit time of rev (an edge or node revision).
// A logical export has no times: ok is false.
func (f *File) RevisionTime(rev uint64) (int64, bool) {
	i, ok := slices.BinarySearchFunc(f.revTimes, rev, func(r RevTime, rev uint64) int {
		switch {
		case r.Rev < rev:
			return -1
		case r.Rev > rev:
			return 1
		}
		return 0
	})
	if !ok {
		return 0, false
	}
	return f.revTimes[i].TS, true
}

// KeyOrder is the node indices in ascending key byte order.
func (f *File) KeyOrder() []uint32 { return f.keyOrder }

// KeyAt returns the key of the node at position pos of KeyOrder. A stored
// entry that is not a node index is damage, reported as a FormatError
// naming key_order; pos itself out of range is ErrOutOfRange.
func (f *File) KeyAt(pos int) (uint32, string, error) {
	if pos < 0 || pos >= len(f.keyOrder) {
		return 0, "", outOfRange("key order position", uint64(pos), uint64(len(f.keyOrder)))
	}
	n := f.keyOrder[pos]
	if uint64(n) >= uint64(len(f.nodeIDs)) {
		return 0, "", f.sectionErr(KindKeyOrder, uint64(pos), 4, "entry %d is node %d, not in [0, %d)", pos, n, len(f.nodeIDs))
	}
	k, err := f.String(n)
	return n, k, err
}

// CheckFwdEdges checks the stored fields of forward positions [lo, hi):
// every target is a node index and every relation is in the relation
// table. The first violation is a FormatError naming fwd_targets or
// fwd_rels: it is damage, not the caller's mistake. Verify checks this for
// the whole file; readers that skip Verify call it before following edges.
func (f *File) CheckFwdEdges(lo, hi uint64) error {
	return f.checkEdges(KindFwdTargets, KindFwdRels, f.fwdTargets, f.fwdRels, lo, hi)
}

// CheckRevEdges is CheckFwdEdges for reverse positions (rev_sources,
// rev_rels).
func (f *File) CheckRevEdges(lo, hi uint64) error {
	return f.checkEdges(KindRevSources, KindRevRels, f.revSources, f.revRels, lo, hi)
}

func (f *File) checkEdges(nodeKind, relKind Kind, nodes, rels []uint32, lo, hi uint64) error {
	if lo > hi || hi > uint64(len(nodes)) {
		return outOfRange("edge position", hi, uint64(len(nodes)))
	}
	n := uint64(len(f.nodeIDs))
	for p := lo; p < hi; p++ {
		if uint64(nodes[p]) >= n {
			return f.sectionErr(nodeKind, p, 4, "node index %d not in [0, %d)", nodes[p], n)
		}
		if p == lo || rels[p] != rels[p-1] {
			if _, ok := f.RelationByID(rels[p]); !ok {
				return f.sectionErr(relKind, p, 4, "relation %d is not in the relation table", rels[p])
			}
		}
	}
	return nil
}

// Trigram index arrays.
func (f *File) TriKeys() []uint32    { return f.triKeys }
func (f *File) TriOffsets() []uint64 { return f.triOffsets }
func (f *File) TriPostings() []uint32 {
	return f.triPostings
}

// Postings returns the sorted node indices whose lower-cased key contains
// the trigram tri (b0<<16 | b1<<8 | b2, bytes already lower-cased). An
// absent trigram has no postings.
func (f *File) Postings(tri uint32) ([]uint32, error) {
	j, ok := slices.BinarySearch(f.triKeys, tri)
	if !ok {
		return nil, nil
	}
	lo, hi := f.triOffsets[j], f.triOffsets[j+1]
	if lo > hi || hi > uint64(len(f.triPostings)) {
		return nil, f.sectionErr(KindTriOffsets, uint64(j), 8, "postings of trigram %d span [%d, %d) outside %d", j, lo, hi, len(f.triPostings))
	}
	return f.triPostings[lo:hi], nil
}

// PageRank returns the optional per-node PageRank section.
func (f *File) PageRank() ([]float64, bool) {
	return f.pageRank, f.present&(1<<KindPageRank) != 0
}

// TrigramOf packs three bytes, lower-casing ASCII letters, the way the
// trigram index stores them.
func TrigramOf(a, b, c byte) uint32 {
	return uint32(lowerASCII(a))<<16 | uint32(lowerASCII(b))<<8 | uint32(lowerASCII(c))
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func outOfRange(what string, v, n uint64) error {
	return fmt.Errorf("%w: %s %d not in [0, %d)", ErrOutOfRange, what, v, n)
}
