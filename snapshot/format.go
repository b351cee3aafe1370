// Package snapshot writes and reads memctl snapshot files: one immutable,
// versioned, little-endian file holding a graph state (nodes, relations,
// forward and reverse CSR, seed-finding indexes, payloads) laid out so that
// every numeric array can be used in place from a read-only mapping.
//
// The file:
//
//	offset 0        +-------------------------------------------+
//	                | header (128 bytes): magic, version, flags, |
//	                | revision, commit time, counts, directory   |
//	                | offset, file length, directory CRC,        |
//	                | header CRC                                 |
//	offset 128      +-------------------------------------------+
//	                | section 1  (each section starts at a       |
//	                | section 2   multiple of 64; the gaps are   |
//	                | ...         zero bytes)                    |
//	                | section k                                  |
//	dir_offset      +-------------------------------------------+
//	                | section directory: section_count entries  |
//	                | of 24 bytes (kind, flags, CRC-32C, offset, |
//	                | length), ascending kind and offset         |
//	file_length     +-------------------------------------------+
//
// The directory sits at the end because the writer streams the sections and
// only knows their checksums when it is done; the header, at a fixed
// place, says where the directory is. Sections are laid out in ascending
// kind order, so a reader can check the whole directory in one pass.
//
// Invariants a reader relies on after Open (checked in O(sections)):
// header and directory CRCs match; every section lies inside
// [128, dir_offset), is 64-aligned and does not overlap the next one; every
// required section is present and its length agrees with the header counts.
// Verify additionally checks every section CRC and every structural
// invariant (sorted ids, monotonic offsets, indices in range, strings in
// bounds, reverse CSR equal to the forward CSR transposed, indexes complete).
//
// The reader never imports the store or cgo: the exporter receives the
// store's state through the State interface (state.go).
package snapshot

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/memctl/memctl/roles"
)

// Magic opens every snapshot file.
const Magic = "MEMCTLSN"

// FormatVersion is major<<16 | minor. A reader accepts any minor of a major
// it knows (newer minors only add optional sections) and refuses a newer
// major with ErrNewerVersion.
type FormatVersion uint32

const (
	// FormatV1_0 adds: everything (the first format).
	FormatV1_0 FormatVersion = 1 << 16 // major 1, minor 0
	// FormatV2_0 adds: relation roles (relation flags bits 2–3). A 1.x
	// file has none, and reading its relations as memory would silently
	// change every engine's answer, so 1.x is refused (re-export it).
	FormatV2_0 FormatVersion = 2 << 16
	// FormatV3_0 adds: node rows of 72 bytes with the valid time and the
	// superseded/expired flags, the header's valid_at and its
	// includes-superseded/includes-expired flags (store schema 2, SPEC.md
	// §4); the logical hash stream v2. 2.x files are refused (re-export).
	FormatV3_0 FormatVersion = 3 << 16 // major 3, minor 0
	// FormatV3_1 adds: the optional search sections (search.go): the
	// lexicon (kinds 33–38) and the text index with the kv entries (kinds
	// 40–48). A 3.0 reader skips them; a reader of a file without them
	// builds the lexicon in memory.
	FormatV3_1 FormatVersion = 3<<16 | 1

	// FormatOldest and FormatNewest bound what this reader accepts; the
	// writer always writes FormatNewest.
	FormatOldest = FormatV3_0
	FormatNewest = FormatV3_1
)

// Major and Minor split the version.
func (v FormatVersion) Major() uint16 { return uint16(v >> 16) }
func (v FormatVersion) Minor() uint16 { return uint16(v) }

func (v FormatVersion) String() string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

// Layout constants.
const (
	HeaderSize   = 128
	DirEntrySize = 24
	// SectionAlign is the alignment of every section start (a cache line;
	// more than any element width needs).
	SectionAlign = 64
	// maxSections bounds the directory so a hostile count cannot make Open
	// do unbounded work.
	maxSections = 256
	// maxKnownKind sizes the fixed section table inside File: one past the
	// highest kind this reader knows (at most 64: File.present is a bitmask).
	maxKnownKind = KindTextPostTFs + 1
)

// Header flags.
const (
	// FlagLogical: history metadata was zeroed at export (revisions,
	// timestamps, run and task ids, header revision and time); the file
	// depends only on the logical state.
	FlagLogical uint32 = 1 << 0
	// FlagIncludesSuperseded: superseded items were exported (marked
	// NodeFlagSuperseded); without it the export left them out.
	FlagIncludesSuperseded uint32 = 1 << 1
	// FlagIncludesExpired: items not valid at the header's valid_at were
	// exported (marked NodeFlagExpired); without it the export left them out.
	FlagIncludesExpired uint32 = 1 << 2

	knownHeaderFlags = FlagLogical | FlagIncludesSuperseded | FlagIncludesExpired
)

// Section flags (directory entry).
const (
	// SectionOptional: a reader that does not know the kind may ignore the
	// section. A newer minor version only ever adds optional sections.
	SectionOptional uint16 = 1 << 0

	knownSectionFlags = SectionOptional
)

// Kind identifies a section. Kinds appear in the file and in the directory in
// ascending order. Element types are little-endian.
type Kind uint16

const (
	KindStrOffsets     Kind = 1  // u64[string_count+1]: byte offsets into StrBytes
	KindStrBytes       Kind = 2  // u8[]: UTF-8 bytes of every string, concatenated
	KindRelations      Kind = 3  // RelationRecord[relation_count], 16 bytes each, ascending id
	KindNodeIDs        Kind = 4  // u64[node_count], strictly ascending
	KindNodes          Kind = 5  // NodeRow[node_count], 56 bytes each
	KindPayloadOffsets Kind = 6  // u64[node_count+1]: byte offsets into Payloads
	KindFwdOffsets     Kind = 7  // u64[node_count+1]: out-list of node i is [off[i], off[i+1])
	KindFwdTargets     Kind = 8  // u32[edge_count]: destination node index
	KindFwdRels        Kind = 9  // u32[edge_count]: relation id
	KindFwdWeights     Kind = 10 // f32[edge_count]
	KindFwdRevs        Kind = 11 // u64[edge_count]: revision that wrote the edge
	KindRevOffsets     Kind = 12 // u64[node_count+1]: in-list of node i
	KindRevSources     Kind = 13 // u32[edge_count]: source node index
	KindRevRels        Kind = 14 // u32[edge_count]
	KindRevWeights     Kind = 15 // f32[edge_count]
	KindRevTimes       Kind = 16 // RevTime[k], 16 bytes each, strictly ascending rev
	KindKeyOrder       Kind = 17 // u32[node_count]: node indices in ascending key byte order
	KindTriKeys        Kind = 18 // u32[t]: distinct key trigrams, strictly ascending
	KindTriOffsets     Kind = 19 // u64[t+1]: postings of trigram j are [off[j], off[j+1])
	KindTriPostings    Kind = 20 // u32[]: node indices, strictly ascending per trigram
	KindPayloads       Kind = 21 // u8[]: payload entries (encoding byte + data)
	KindPageRank       Kind = 32 // f64[node_count], optional
)

// kindNames is indexed by kind (an array, not a map: Open looks every
// directory entry up).
var kindNames = [...]string{
	KindStrOffsets: "str_offsets", KindStrBytes: "str_bytes", KindRelations: "relations",
	KindNodeIDs: "node_ids", KindNodes: "nodes", KindPayloadOffsets: "payload_offsets",
	KindFwdOffsets: "fwd_offsets", KindFwdTargets: "fwd_targets", KindFwdRels: "fwd_rels",
	KindFwdWeights: "fwd_weights", KindFwdRevs: "fwd_revs", KindRevOffsets: "rev_offsets",
	KindRevSources: "rev_sources", KindRevRels: "rev_rels", KindRevWeights: "rev_weights",
	KindRevTimes: "rev_times", KindKeyOrder: "key_order", KindTriKeys: "tri_keys",
	KindTriOffsets: "tri_offsets", KindTriPostings: "tri_postings", KindPayloads: "payloads",
	KindPageRank:      "pagerank",
	KindLexVecOffsets: "lex_vec_offsets", KindLexVecTerms: "lex_vec_terms", KindLexVecWeights: "lex_vec_weights",
	KindLexPostOffsets: "lex_post_offsets", KindLexPostNodes: "lex_post_nodes", KindLexPostWeights: "lex_post_weights",
	KindNodeHistory: "node_history",
	KindKVOffsets:   "kv_offsets", KindKVBytes: "kv_bytes", KindKVFlags: "kv_flags",
	KindTextDocLens: "text_doc_lens", KindTextTermOffsets: "text_term_offsets", KindTextTermBytes: "text_term_bytes",
	KindTextPostOffsets: "text_post_offsets", KindTextPostDocs: "text_post_docs", KindTextPostTFs: "text_post_tfs",
}

// String is the section's name as used in error messages and `snapshot info`.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind_%d", uint16(k))
}

// requiredKinds are the sections of format 1.0, all mandatory.
var requiredKinds = []Kind{
	KindStrOffsets, KindStrBytes, KindRelations, KindNodeIDs, KindNodes,
	KindPayloadOffsets, KindFwdOffsets, KindFwdTargets, KindFwdRels, KindFwdWeights,
	KindFwdRevs, KindRevOffsets, KindRevSources, KindRevRels, KindRevWeights,
	KindRevTimes, KindKeyOrder, KindTriKeys, KindTriOffsets, KindTriPostings, KindPayloads,
}

// knownOptional are optional kinds this reader understands.
var knownOptional = []Kind{
	KindPageRank,
	KindLexVecOffsets, KindLexVecTerms, KindLexVecWeights, KindLexPostOffsets, KindLexPostNodes, KindLexPostWeights,
	KindNodeHistory, KindKVOffsets, KindKVBytes, KindKVFlags, KindTextDocLens, KindTextTermOffsets, KindTextTermBytes,
	KindTextPostOffsets, KindTextPostDocs, KindTextPostTFs,
}

// Fixed record sizes.
const (
	nodeRowSize  = 72
	relationSize = 16
	revTimeSize  = 16
)

// NodeRow is the on-disk node record (KindNodes), 72 bytes:
//
//	0  u32 type string id
//	4  u32 scope string id
//	8  u32 run_id string id
//	12 u32 task_id string id
//	16 u32 flags (NodeFlag*)
//	20 u32 reserved, zero
//	24 i64 created_ts
//	32 i64 updated_ts
//	40 u64 created_rev
//	48 u64 rev
//	56 i64 valid_from (unix ns; 0 unless NodeFlagValidFrom)
//	64 i64 valid_until (unix ns; 0 unless NodeFlagValidUntil)
//
// The key of node i is string i (keys come first in the string table).
type NodeRow struct {
	Type, Scope, RunID, TaskID uint32
	Flags                      uint32
	Reserved                   uint32
	CreatedTS, UpdatedTS       int64
	CreatedRev, Rev            uint64
	ValidFrom, ValidUntil      int64
}

// Node flags.
const (
	// NodeFlagMissing marks a node that exists only as an edge endpoint.
	NodeFlagMissing uint32 = 1 << 0
	// NodeFlagValidFrom, NodeFlagValidUntil: the bound is set (an absent
	// bound is open).
	NodeFlagValidFrom  uint32 = 1 << 1
	NodeFlagValidUntil uint32 = 1 << 2
	// NodeFlagSuperseded: a live supersedes edge points at the item (only
	// in files with FlagIncludesSuperseded).
	NodeFlagSuperseded uint32 = 1 << 3
	// NodeFlagExpired: the valid time does not contain the header's
	// valid_at (only in files with FlagIncludesExpired).
	NodeFlagExpired uint32 = 1 << 4

	knownNodeFlags = NodeFlagMissing | NodeFlagValidFrom | NodeFlagValidUntil | NodeFlagSuperseded | NodeFlagExpired
)

// RelationRow is the on-disk relation record (KindRelations), 16 bytes:
//
//	0  u32 relation id (ascending, unique, non-zero)
//	4  u32 name string id
//	8  f32 default weight
//	12 u32 flags (bit 0 bidirectional, bit 1 inhibitory, bits 2–3 role)
type RelationRow struct {
	ID            uint32
	Name          uint32
	DefaultWeight float32
	Flags         uint32
}

// Relation flags.
const (
	RelBidirectional uint32 = 1 << 0
	RelInhibitory    uint32 = 1 << 1
	RelRoleMask      uint32 = uint32(roles.Mask) // the role, SPEC §1
)

// Role is the relation's role (flags bits 2–3).
func (r RelationRow) Role() roles.Role { return roles.FromFlags(r.Flags) }

// RevTime maps a revision to its commit time (KindRevTimes), 16 bytes:
// u64 rev, i64 unix nanoseconds.
type RevTime struct {
	Rev uint64
	TS  int64
}

// Payload entry encodings (first byte of a non-empty payload entry).
const (
	PayloadRaw  byte = 0 // the JSON bytes follow
	PayloadZstd byte = 1 // one zstd frame follows that decodes to the JSON bytes
)

// Header is the decoded file header.
//
//	0   [8]  magic "MEMCTLSN"
//	8   u16  major
//	10  u16  minor
//	12  u32  flags (bit 0 logical export, bit 1 includes superseded, bit 2 includes expired)
//	16  u64  revision the snapshot represents (0 in a logical export)
//	24  i64  commit time of that revision, unix ns (0 in a logical export)
//	32  u64  node_count (including missing nodes)
//	40  u64  edge_count
//	48  u64  string_count
//	56  u32  relation_count
//	60  u32  section_count
//	64  u64  dir_offset (64-aligned)
//	72  u64  file_length
//	80  u32  CRC-32C of the directory bytes
//	84  i64  valid_at: the valid time the export judged items at (0 in a logical export)
//	92  [32] reserved, zero
//	124 u32  CRC-32C of header bytes [0, 124)
type Header struct {
	Version       FormatVersion
	Flags         uint32
	Revision      uint64
	CommitTime    int64
	NodeCount     uint64
	EdgeCount     uint64
	StringCount   uint64
	RelationCount uint32
	SectionCount  uint32
	DirOffset     uint64
	FileLength    uint64
	DirCRC        uint32
	ValidAt       int64
}

// Logical reports whether history metadata was zeroed at export.
func (h Header) Logical() bool { return h.Flags&FlagLogical != 0 }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func (h *Header) encode(b []byte) {
	_ = b[HeaderSize-1]
	clear(b[:HeaderSize])
	copy(b, Magic)
	le := binary.LittleEndian
	le.PutUint16(b[8:], h.Version.Major())
	le.PutUint16(b[10:], h.Version.Minor())
	le.PutUint32(b[12:], h.Flags)
	le.PutUint64(b[16:], h.Revision)
	le.PutUint64(b[24:], uint64(h.CommitTime))
	le.PutUint64(b[32:], h.NodeCount)
	le.PutUint64(b[40:], h.EdgeCount)
	le.PutUint64(b[48:], h.StringCount)
	le.PutUint32(b[56:], h.RelationCount)
	le.PutUint32(b[60:], h.SectionCount)
	le.PutUint64(b[64:], h.DirOffset)
	le.PutUint64(b[72:], h.FileLength)
	le.PutUint32(b[80:], h.DirCRC)
	le.PutUint64(b[84:], uint64(h.ValidAt))
	le.PutUint32(b[124:], crc(b[:124]))
}

// parseHeader checks, in this order, size, magic, version, header CRC,
// reserved bytes, flags and the file length; each failure has its own
// error so a damaged file says what is wrong.
func parseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, formatErr("header", 0, "file is %d bytes, shorter than the %d-byte header", len(b), HeaderSize)
	}
	if string(b[:8]) != Magic {
		return h, &FormatError{Section: "header", Offset: 0, Msg: fmt.Sprintf("bad magic %q (not a memctl snapshot)", b[:8]), err: ErrNotSnapshot}
	}
	le := binary.LittleEndian
	h.Version = FormatVersion(uint32(le.Uint16(b[8:]))<<16 | uint32(le.Uint16(b[10:])))
	if h.Version.Major() > FormatNewest.Major() {
		return h, &VersionError{Version: h.Version}
	}
	if h.Version.Major() < FormatOldest.Major() {
		return h, &VersionError{Version: h.Version}
	}
	if got, want := le.Uint32(b[124:]), crc(b[:124]); got != want {
		return h, formatErr("header", 124, "header CRC mismatch: stored %08x, computed %08x", got, want)
	}
	for i := 92; i < 124; i++ {
		if b[i] != 0 {
			return h, formatErr("header", int64(i), "reserved byte is %#x, want 0", b[i])
		}
	}
	h.Flags = le.Uint32(b[12:])
	h.Revision = le.Uint64(b[16:])
	h.CommitTime = int64(le.Uint64(b[24:]))
	h.NodeCount = le.Uint64(b[32:])
	h.EdgeCount = le.Uint64(b[40:])
	h.StringCount = le.Uint64(b[48:])
	h.RelationCount = le.Uint32(b[56:])
	h.SectionCount = le.Uint32(b[60:])
	h.DirOffset = le.Uint64(b[64:])
	h.FileLength = le.Uint64(b[72:])
	h.DirCRC = le.Uint32(b[80:])
	h.ValidAt = int64(le.Uint64(b[84:]))
	if h.Flags&^knownHeaderFlags != 0 && h.Version.Minor() <= FormatNewest.Minor() {
		return h, formatErr("header", 12, "unknown header flags %#x", h.Flags&^knownHeaderFlags)
	}
	if h.FileLength != uint64(len(b)) {
		return h, formatErr("header", 72, "header says the file is %d bytes, it is %d (truncated or extended)", h.FileLength, len(b))
	}
	if h.NodeCount > 1<<32-1 {
		return h, formatErr("header", 32, "node count %d exceeds the 32-bit index space", h.NodeCount)
	}
	if h.EdgeCount > 1<<40 || h.StringCount > 1<<40 {
		return h, formatErr("header", 40, "implausible counts: %d edges, %d strings", h.EdgeCount, h.StringCount)
	}
	if h.SectionCount > maxSections {
		return h, formatErr("header", 60, "section count %d exceeds %d", h.SectionCount, maxSections)
	}
	dirLen := uint64(h.SectionCount) * DirEntrySize
	if h.DirOffset < HeaderSize || h.DirOffset%SectionAlign != 0 || h.DirOffset > h.FileLength || h.FileLength-h.DirOffset != dirLen {
		return h, formatErr("header", 64, "directory at %d with %d entries does not end the %d-byte file", h.DirOffset, h.SectionCount, h.FileLength)
	}
	return h, nil
}

// Section is one directory entry.
//
//	0  u16 kind
//	2  u16 flags (bit 0: optional)
//	4  u32 CRC-32C of the section bytes
//	8  u64 offset (64-aligned)
//	16 u64 length in bytes
type Section struct {
	Kind   Kind
	Flags  uint16
	CRC    uint32
	Offset uint64
	Length uint64
}

func (s Section) encode(b []byte) {
	le := binary.LittleEndian
	le.PutUint16(b[0:], uint16(s.Kind))
	le.PutUint16(b[2:], s.Flags)
	le.PutUint32(b[4:], s.CRC)
	le.PutUint64(b[8:], s.Offset)
	le.PutUint64(b[16:], s.Length)
}

func decodeSection(b []byte) Section {
	le := binary.LittleEndian
	return Section{
		Kind:   Kind(le.Uint16(b[0:])),
		Flags:  le.Uint16(b[2:]),
		CRC:    le.Uint32(b[4:]),
		Offset: le.Uint64(b[8:]),
		Length: le.Uint64(b[16:]),
	}
}

func alignUp(n uint64) uint64 { return (n + SectionAlign - 1) &^ (SectionAlign - 1) }
