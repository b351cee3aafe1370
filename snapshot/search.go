package snapshot

// The search sections (format 3.1, SPEC.md §7.10.1): two optional groups
// the exporter derives from the core file and the store's kv entries, so a
// reader maps them instead of rebuilding them in every process.
//
// Lexicon (kinds 33–38): the TF-IDF vectors of the nodes' file
// vocabularies (engines §8.2.1), as a CSR both ways.
//
//	lex_vec_offsets   u64[n+1]  node i's vector is entries [off[i], off[i+1])
//	lex_vec_terms     u32[V]    term ids, strictly ascending per node, < T
//	lex_vec_weights   f64[V]    unit-length weights, finite and > 0
//	lex_post_offsets  u64[T+1]  term t's postings are [off[t], off[t+1])
//	lex_post_nodes    u32[V]    node indices, strictly ascending per term, < n
//	lex_post_weights  f64[V]    the node's weight of the term
//
// Node history (kind 39): the git history of ingest's payloads (§9.3
// "git"), as the related profile's temporal term reads it.
//
//	node_history      NodeHistory[h], 16 bytes each: u32 node index (strictly
//	                  ascending, < n), i32 changes (≥ 0), i64 last change (unix s)
//
// Text index (kinds 40–48): a BM25 inverted index over documents 0..n+k-1:
// the n nodes (by index), then the k kv entries the export holds, which
// the core sections do not carry and this group does.
//
//	kv_offsets        u64[2k+1] kv entry j: address [off[2j], off[2j+1]), payload [off[2j+1], off[2j+2]) of kv_bytes
//	kv_bytes          u8[]      addresses ("kv:scope/ns/key", SPEC §4) and payload JSON, concatenated
//	kv_flags          u32[k]    NodeFlagSuperseded, NodeFlagExpired (only those bits)
//	text_doc_lens     u32[n+k]  tokens per document
//	text_term_offsets u64[T'+1] term t is text_term_bytes[off[t], off[t+1])
//	text_term_bytes   u8[]      the distinct tokens, strictly ascending by bytes
//	text_post_offsets u64[T'+1] term t's postings are [off[t], off[t+1])
//	text_post_docs    u32[P]    documents, strictly ascending per term, < n+k
//	text_post_tfs     u32[P]    occurrences of the term in the document, ≥ 1
//
// Open checks that a group is complete and that its section lengths agree
// with each other and with the header's node count, and the last element
// of each offsets array; accessors check every offset they follow; Verify
// checks the rest.

import (
	"bytes"
	"encoding/json"
	"math"
	"unsafe"
)

// Kinds of the search sections (all optional).
const (
	KindLexVecOffsets   Kind = 33
	KindLexVecTerms     Kind = 34
	KindLexVecWeights   Kind = 35
	KindLexPostOffsets  Kind = 36
	KindLexPostNodes    Kind = 37
	KindLexPostWeights  Kind = 38
	KindNodeHistory     Kind = 39
	KindKVOffsets       Kind = 40
	KindKVBytes         Kind = 41
	KindKVFlags         Kind = 42
	KindTextDocLens     Kind = 43
	KindTextTermOffsets Kind = 44
	KindTextTermBytes   Kind = 45
	KindTextPostOffsets Kind = 46
	KindTextPostDocs    Kind = 47
	KindTextPostTFs     Kind = 48
)

var (
	lexiconKinds = []Kind{KindLexVecOffsets, KindLexVecTerms, KindLexVecWeights, KindLexPostOffsets, KindLexPostNodes, KindLexPostWeights}
	textKinds    = []Kind{KindKVOffsets, KindKVBytes, KindKVFlags, KindTextDocLens, KindTextTermOffsets, KindTextTermBytes, KindTextPostOffsets, KindTextPostDocs, KindTextPostTFs}
)

// knownKVFlags are the node flags a kv entry may carry.
const knownKVFlags = NodeFlagSuperseded | NodeFlagExpired

// Lexicon is the lexicon group: in memory (engines build it) or over the
// mapping (valid until Close).
type Lexicon struct {
	VecOffsets  []uint64
	VecTerms    []uint32
	VecWeights  []float64
	PostOffsets []uint64
	PostNodes   []uint32
	PostWeights []float64
}

// NumTerms is T, the number of distinct terms.
func (l *Lexicon) NumTerms() int { return max(len(l.PostOffsets)-1, 0) }

// Vector returns node i's term ids and weights, checked against the
// arrays (a node beyond the offsets has an empty vector).
func (l *Lexicon) Vector(i uint32) ([]uint32, []float64, error) {
	if int(i)+1 >= len(l.VecOffsets) {
		return nil, nil, nil
	}
	lo, hi := l.VecOffsets[i], l.VecOffsets[i+1]
	if lo > hi || hi > uint64(len(l.VecTerms)) || hi > uint64(len(l.VecWeights)) {
		return nil, nil, formatErr(KindLexVecOffsets.String(), -1, "vector of node %d spans [%d, %d) outside %d entries", i, lo, hi, len(l.VecTerms))
	}
	return l.VecTerms[lo:hi], l.VecWeights[lo:hi], nil
}

// Postings returns term t's nodes and weights, checked.
func (l *Lexicon) Postings(t uint32) ([]uint32, []float64, error) {
	if int(t)+1 >= len(l.PostOffsets) {
		return nil, nil, formatErr(KindLexVecTerms.String(), -1, "term id %d beyond %d terms", t, l.NumTerms())
	}
	lo, hi := l.PostOffsets[t], l.PostOffsets[t+1]
	if lo > hi || hi > uint64(len(l.PostNodes)) || hi > uint64(len(l.PostWeights)) {
		return nil, nil, formatErr(KindLexPostOffsets.String(), -1, "postings of term %d span [%d, %d) outside %d entries", t, lo, hi, len(l.PostNodes))
	}
	return l.PostNodes[lo:hi], l.PostWeights[lo:hi], nil
}

// Sections encodes the group for WriterOptions.Extra, ascending kind.
func (l *Lexicon) Sections() []ExtraSection {
	return []ExtraSection{
		{KindLexVecOffsets, u64Bytes(l.VecOffsets)},
		{KindLexVecTerms, u32Bytes(l.VecTerms)},
		{KindLexVecWeights, f64Bytes(l.VecWeights)},
		{KindLexPostOffsets, u64Bytes(l.PostOffsets)},
		{KindLexPostNodes, u32Bytes(l.PostNodes)},
		{KindLexPostWeights, f64Bytes(l.PostWeights)},
	}
}

// TextIndex is the text-index group, in memory or over the mapping.
type TextIndex struct {
	KVOffsets   []uint64
	KVBytes     []byte
	KVFlags     []uint32
	DocLens     []uint32
	TermOffsets []uint64
	TermBytes   []byte
	PostOffsets []uint64
	PostDocs    []uint32
	PostTFs     []uint32
}

// NumKV is k, the number of kv entries.
func (x *TextIndex) NumKV() int { return len(x.KVFlags) }

// NumTerms is T', the number of distinct tokens.
func (x *TextIndex) NumTerms() int { return max(len(x.TermOffsets)-1, 0) }

// KV returns kv entry j's address and payload (zero-copy), checked.
func (x *TextIndex) KV(j uint32) (addr string, payload []byte, err error) {
	if int(j) >= x.NumKV() || 2*int(j)+2 >= len(x.KVOffsets) {
		return "", nil, outOfRange("kv entry", uint64(j), uint64(x.NumKV()))
	}
	a, p, e := x.KVOffsets[2*j], x.KVOffsets[2*j+1], x.KVOffsets[2*j+2]
	if a > p || p > e || e > uint64(len(x.KVBytes)) {
		return "", nil, formatErr(KindKVOffsets.String(), -1, "kv entry %d spans [%d, %d, %d) outside %d bytes", j, a, p, e, len(x.KVBytes))
	}
	if a < p {
		addr = unsafe.String(&x.KVBytes[a], p-a)
	}
	return addr, x.KVBytes[p:e], nil
}

// Term returns token t, checked.
func (x *TextIndex) Term(t uint32) (string, error) {
	if int(t) >= x.NumTerms() {
		return "", outOfRange("term", uint64(t), uint64(x.NumTerms()))
	}
	lo, hi := x.TermOffsets[t], x.TermOffsets[t+1]
	if lo > hi || hi > uint64(len(x.TermBytes)) {
		return "", formatErr(KindTextTermOffsets.String(), -1, "term %d spans [%d, %d) outside %d bytes", t, lo, hi, len(x.TermBytes))
	}
	if lo == hi {
		return "", nil
	}
	return unsafe.String(&x.TermBytes[lo], hi-lo), nil
}

// LookupTerm finds token s by binary search (ok false: not indexed).
func (x *TextIndex) LookupTerm(s string) (uint32, bool, error) {
	lo, hi := 0, x.NumTerms()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		t, err := x.Term(uint32(mid))
		if err != nil {
			return 0, false, err
		}
		switch {
		case t < s:
			lo = mid + 1
		case t > s:
			hi = mid
		default:
			return uint32(mid), true, nil
		}
	}
	return 0, false, nil
}

// Postings returns term t's documents and counts, checked.
func (x *TextIndex) Postings(t uint32) ([]uint32, []uint32, error) {
	if int(t)+1 >= len(x.PostOffsets) {
		return nil, nil, outOfRange("term", uint64(t), uint64(x.NumTerms()))
	}
	lo, hi := x.PostOffsets[t], x.PostOffsets[t+1]
	if lo > hi || hi > uint64(len(x.PostDocs)) || hi > uint64(len(x.PostTFs)) {
		return nil, nil, formatErr(KindTextPostOffsets.String(), -1, "postings of term %d span [%d, %d) outside %d entries", t, lo, hi, len(x.PostDocs))
	}
	return x.PostDocs[lo:hi], x.PostTFs[lo:hi], nil
}

// Sections encodes the group for WriterOptions.Extra, ascending kind.
func (x *TextIndex) Sections() []ExtraSection {
	return []ExtraSection{
		{KindKVOffsets, u64Bytes(x.KVOffsets)},
		{KindKVBytes, bytes.Clone(x.KVBytes)},
		{KindKVFlags, u32Bytes(x.KVFlags)},
		{KindTextDocLens, u32Bytes(x.DocLens)},
		{KindTextTermOffsets, u64Bytes(x.TermOffsets)},
		{KindTextTermBytes, bytes.Clone(x.TermBytes)},
		{KindTextPostOffsets, u64Bytes(x.PostOffsets)},
		{KindTextPostDocs, u32Bytes(x.PostDocs)},
		{KindTextPostTFs, u32Bytes(x.PostTFs)},
	}
}

// NodeHistory is one record of the node_history section.
type NodeHistory struct {
	Node       uint32
	Changes    int32
	LastChange int64 // unix seconds
}

const nodeHistorySize = 16

// NodeHistorySection encodes records (node order) as the section.
func NodeHistorySection(recs []NodeHistory) ExtraSection {
	out := make([]byte, nodeHistorySize*len(recs))
	for i, r := range recs {
		putU32(out[16*i:], r.Node)
		putU32(out[16*i+4:], uint32(r.Changes))
		putU64(out[16*i+8:], uint64(r.LastChange))
	}
	return ExtraSection{KindNodeHistory, out}
}

// NodeHistory returns the mapped node_history section; ok is false
// without one.
func (f *File) NodeHistory() ([]NodeHistory, bool) {
	return f.nodeHistory, f.present&(1<<KindNodeHistory) != 0
}

// Lexicon returns the mapped lexicon group; ok is false when the file has
// none (a 3.0 file, or an export without it).
func (f *File) Lexicon() (*Lexicon, bool) { return f.lexicon, f.lexicon != nil }

// TextIndex returns the mapped text-index group; ok is false without one.
func (f *File) TextIndex() (*TextIndex, bool) { return f.textIndex, f.textIndex != nil }

// groupPresent reports whether every kind of a group is present, and
// fails when only some are.
func (f *File) groupPresent(kinds []Kind) (bool, error) {
	have := 0
	for _, k := range kinds {
		if f.present&(1<<k) != 0 {
			have++
		}
	}
	if have != 0 && have != len(kinds) {
		return false, formatErr("directory", int64(f.hdr.DirOffset), "search group of %s has %d of its %d sections", kinds[0], have, len(kinds))
	}
	return have == len(kinds), nil
}

// bindSearch binds the search groups (O(1): lengths and last offsets).
func (f *File) bindSearch() error {
	n := uint64(f.hdr.NodeCount)
	lex, err := f.groupPresent(lexiconKinds)
	if err != nil {
		return err
	}
	if lex {
		var l Lexicon
		var b []byte
		if b, err = f.bytesOf(KindLexVecOffsets, int64(8*(n+1))); err != nil {
			return err
		}
		l.VecOffsets = u64s(b)
		if b, err = f.bytesOf(KindLexVecTerms, -4); err != nil {
			return err
		}
		l.VecTerms = u32s(b)
		v := uint64(len(l.VecTerms))
		if b, err = f.bytesOf(KindLexVecWeights, int64(8*v)); err != nil {
			return err
		}
		l.VecWeights = f64s(b)
		if b, err = f.bytesOf(KindLexPostOffsets, -8); err != nil {
			return err
		}
		if len(b) == 0 {
			return f.sectionErr(KindLexPostOffsets, 0, 8, "empty offsets array")
		}
		l.PostOffsets = u64s(b)
		if b, err = f.bytesOf(KindLexPostNodes, int64(4*v)); err != nil {
			return err
		}
		l.PostNodes = u32s(b)
		if b, err = f.bytesOf(KindLexPostWeights, int64(8*v)); err != nil {
			return err
		}
		l.PostWeights = f64s(b)
		if err := f.lastOffset(KindLexVecOffsets, l.VecOffsets, v); err != nil {
			return err
		}
		if err := f.lastOffset(KindLexPostOffsets, l.PostOffsets, v); err != nil {
			return err
		}
		f.lexicon = &l
	}
	if f.present&(1<<KindNodeHistory) != 0 {
		b, err := f.bytesOf(KindNodeHistory, -nodeHistorySize)
		if err != nil {
			return err
		}
		if len(b) > 0 {
			f.nodeHistory = unsafe.Slice((*NodeHistory)(unsafe.Pointer(&b[0])), len(b)/nodeHistorySize)
		}
	}
	text, err := f.groupPresent(textKinds)
	if err != nil || !text {
		return err
	}
	var x TextIndex
	var b []byte
	if b, err = f.bytesOf(KindKVFlags, -4); err != nil {
		return err
	}
	x.KVFlags = u32s(b)
	k := uint64(len(x.KVFlags))
	if b, err = f.bytesOf(KindKVOffsets, int64(8*(2*k+1))); err != nil {
		return err
	}
	x.KVOffsets = u64s(b)
	if x.KVBytes, err = f.bytesOf(KindKVBytes, -1); err != nil {
		return err
	}
	if b, err = f.bytesOf(KindTextDocLens, int64(4*(n+k))); err != nil {
		return err
	}
	x.DocLens = u32s(b)
	if b, err = f.bytesOf(KindTextTermOffsets, -8); err != nil {
		return err
	}
	if len(b) == 0 {
		return f.sectionErr(KindTextTermOffsets, 0, 8, "empty offsets array")
	}
	x.TermOffsets = u64s(b)
	if x.TermBytes, err = f.bytesOf(KindTextTermBytes, -1); err != nil {
		return err
	}
	if b, err = f.bytesOf(KindTextPostOffsets, int64(len(x.TermOffsets)*8)); err != nil {
		return err
	}
	x.PostOffsets = u64s(b)
	if b, err = f.bytesOf(KindTextPostDocs, -4); err != nil {
		return err
	}
	x.PostDocs = u32s(b)
	if b, err = f.bytesOf(KindTextPostTFs, int64(4*len(x.PostDocs))); err != nil {
		return err
	}
	x.PostTFs = u32s(b)
	for _, e := range []struct {
		k    Kind
		offs []uint64
		want uint64
	}{
		{KindKVOffsets, x.KVOffsets, uint64(len(x.KVBytes))},
		{KindTextTermOffsets, x.TermOffsets, uint64(len(x.TermBytes))},
		{KindTextPostOffsets, x.PostOffsets, uint64(len(x.PostDocs))},
	} {
		if err := f.lastOffset(e.k, e.offs, e.want); err != nil {
			return err
		}
	}
	f.textIndex = &x
	return nil
}

func (f *File) lastOffset(k Kind, offs []uint64, want uint64) error {
	if last := offs[len(offs)-1]; last != want {
		return f.sectionErr(k, uint64(len(offs)-1), 8, "last offset %d, want %d", last, want)
	}
	return nil
}

// verifySearch checks every invariant of the search groups.
func (f *File) verifySearch() error {
	n := uint32(f.NumNodes())
	if l := f.lexicon; l != nil {
		terms := uint32(l.NumTerms())
		if err := f.monotonic(KindLexVecOffsets, l.VecOffsets, uint64(len(l.VecTerms))); err != nil {
			return err
		}
		if err := f.monotonic(KindLexPostOffsets, l.PostOffsets, uint64(len(l.PostNodes))); err != nil {
			return err
		}
		for i := uint32(0); i < n; i++ {
			ts, ws, _ := l.Vector(i)
			for j, t := range ts {
				if t >= terms || (j > 0 && t <= ts[j-1]) {
					return f.sectionErr(KindLexVecTerms, l.VecOffsets[i]+uint64(j), 4, "node %d: term %d out of order or beyond %d terms", i, t, terms)
				}
				if !(ws[j] > 0) || math.IsInf(ws[j], 0) {
					return f.sectionErr(KindLexVecWeights, l.VecOffsets[i]+uint64(j), 8, "node %d: weight %v is not finite and positive", i, ws[j])
				}
			}
		}
		for t := uint32(0); t < terms; t++ {
			ns, ws, _ := l.Postings(t)
			for j, v := range ns {
				if v >= n || (j > 0 && v <= ns[j-1]) {
					return f.sectionErr(KindLexPostNodes, l.PostOffsets[t]+uint64(j), 4, "term %d: node %d out of order or beyond %d nodes", t, v, n)
				}
				vt, vw, _ := l.Vector(v)
				p, ok := searchU32(vt, t)
				if !ok || vw[p] != ws[j] {
					return f.sectionErr(KindLexPostNodes, l.PostOffsets[t]+uint64(j), 4, "term %d: node %d's vector does not hold it with this weight", t, v)
				}
			}
		}
	}
	for i, r := range f.nodeHistory {
		if r.Node >= n || (i > 0 && r.Node <= f.nodeHistory[i-1].Node) || r.Changes < 0 {
			return f.sectionErr(KindNodeHistory, uint64(i), nodeHistorySize, "record %d: node %d out of order or beyond %d nodes, or %d changes", i, r.Node, n, r.Changes)
		}
	}
	x := f.textIndex
	if x == nil {
		return nil
	}
	if err := f.monotonic(KindKVOffsets, x.KVOffsets, uint64(len(x.KVBytes))); err != nil {
		return err
	}
	for j := 0; j < x.NumKV(); j++ {
		if x.KVFlags[j]&^knownKVFlags != 0 {
			return f.sectionErr(KindKVFlags, uint64(j), 4, "kv entry %d has flags %#x", j, x.KVFlags[j])
		}
		addr, p, _ := x.KV(uint32(j))
		if addr == "" || (len(p) > 0 && !json.Valid(p)) {
			return f.sectionErr(KindKVOffsets, uint64(2*j), 8, "kv entry %d: empty address or payload that is not JSON", j)
		}
		if j > 0 {
			if prev, _, _ := x.KV(uint32(j - 1)); prev >= addr {
				return f.sectionErr(KindKVOffsets, uint64(2*j), 8, "kv entry %d: address %q not after %q", j, addr, prev)
			}
		}
	}
	if err := f.monotonic(KindTextTermOffsets, x.TermOffsets, uint64(len(x.TermBytes))); err != nil {
		return err
	}
	if err := f.monotonic(KindTextPostOffsets, x.PostOffsets, uint64(len(x.PostDocs))); err != nil {
		return err
	}
	docs := uint32(len(x.DocLens))
	for t := uint32(0); t < uint32(x.NumTerms()); t++ {
		s, _ := x.Term(t)
		if s == "" {
			return f.sectionErr(KindTextTermOffsets, uint64(t), 8, "term %d is empty", t)
		}
		if t > 0 {
			if prev, _ := x.Term(t - 1); prev >= s {
				return f.sectionErr(KindTextTermOffsets, uint64(t), 8, "term %q not after %q", s, prev)
			}
		}
		ds, tfs, _ := x.Postings(t)
		for j, d := range ds {
			if d >= docs || (j > 0 && d <= ds[j-1]) || tfs[j] == 0 || tfs[j] > x.DocLens[d] {
				return f.sectionErr(KindTextPostDocs, x.PostOffsets[t]+uint64(j), 4, "term %d: posting (doc %d, count %d) out of order, beyond %d documents or its length", t, d, tfs[j], docs)
			}
		}
	}
	return nil
}

func searchU32(a []uint32, v uint32) (int, bool) {
	lo, hi := 0, len(a)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if a[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(a) && a[lo] == v
}

func u64Bytes(v []uint64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		putU64(out[8*i:], x)
	}
	return out
}

func u32Bytes(v []uint32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		putU32(out[4*i:], x)
	}
	return out
}

func f64Bytes(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		putU64(out[8*i:], math.Float64bits(x))
	}
	return out
}

func putU64(b []byte, v uint64) {
	_ = b[7]
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

func putU32(b []byte, v uint32) {
	_ = b[3]
	for i := 0; i < 4; i++ {
		b[i] = byte(v >> (8 * i))
	}
}
