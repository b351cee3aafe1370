package lmdbstore

// Keys and values of every keyspace, byte by byte (SPEC.md §2). Decoders
// never trust a length they read: every slice is bounds-checked first, and
// failures come back as errors the caller turns into *CorruptionError.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/memctl/memctl/roles"
)

// SchemaVersion is the store layout this package reads and writes.
//
//	1: the layout of SPEC.md §2 as first released.
//	2: adds: relation values carry their creation revision (format 02), so
//	   a past state's relation table is exact. Open upgrades a schema-1
//	   store in place (migrateRelations). Node and kv bodies may carry a
//	   valid-time interval (flag bits 2 and 3) and the log has op kinds 8
//	   and 9 (puts with validity); schema-1 bodies and ops are valid schema-2
//	   ones, so the upgrade need not touch them.
//	3: adds the revs keyspace (a revision's commit time and provenance) and
//	   implicit edge records: an edge whose current version is a plain
//	   creation has no e record (edgerec.go). Open upgrades a schema-1 or
//	   -2 store in place by filling revs from the log; their e records all
//	   stay valid. Schema-2 binaries refuse a schema-3 store (ErrNewerSchema)
//	   instead of misreading its edges.
const SchemaVersion = 3

// Keyspace (DBI) names.
const (
	dbMeta    = "meta"
	dbNodes   = "n"
	dbEdges   = "e"
	dbOut     = "out"
	dbIn      = "in"
	dbKV      = "kv"
	dbHist    = "hist"
	dbIDs     = "ids"
	dbRel     = "rel"
	dbRelName = "relname"
	dbLog     = "log"
	dbTS      = "ts"
	dbRevs    = "revs"
)

// Meta keys.
const (
	metaSchema  = "schema"   // u64: SchemaVersion
	metaCreated = "created"  // u64: unix ns of Init
	metaRev     = "rev"      // u64: latest committed revision
	metaTS      = "ts"       // u64: commit time of metaRev, unix ns
	metaRetain  = "retain"   // u64: revisions kept readable by Compact (0: all)
	metaHorizon = "horizon"  // u64: oldest readable revision (0: all)
	metaNextRel = "next_rel" // u64: id the next AddRelation gets
)

// Value format bytes. Every value starts with one, so no value is empty.
const (
	fmtPlain byte = 1 // body follows as is
	fmtZstd  byte = 2 // uvarint body length, then one zstd frame of the body
)

// Record flags (node, edge and kv records).
const (
	recTombstone  byte = 1 << 0
	recWeight     byte = 1 << 1 // edge only: weight was given explicitly
	recValidFrom  byte = 1 << 2 // node and kv only: a valid_from follows
	recValidUntil byte = 1 << 3 // node and kv only: a valid_until follows
)

// Log op kinds beyond the OpKind values: puts that carry a valid-time
// interval. DiffSince reports them as OpPutNode and OpPutKV with Op.Valid
// set; puts without validity keep kinds 1 and 5.
const (
	opPutNodeValid OpKind = 8
	opPutKVValid   OpKind = 9
)

// hist key kinds.
const (
	histNode byte = 'n'
	histEdge byte = 'e'
	histKV   byte = 'k'
)

// Limits. LMDB keys are at most 511 bytes; the longest key built from a
// caller's strings is a kv history key: 1 + len(kvKey) + 8.
const (
	maxKVKeyLen    = 500
	maxNodeKeyLen  = 4096
	maxRelNameLen  = 64
	compressAbove  = 256  // record bodies (n, e, kv, hist) longer than this are zstd-compressed
	compressLogAbv = 4096 // log op lists longer than this are zstd-compressed
)

// IDOf is the NodeID of a canonical key: FNV-1a 64 of its UTF-8 bytes.
func IDOf(key string) NodeID {
	const offset64, prime64 = 14695981039346656037, 1099511628211 // hash/fnv's
	h := uint64(offset64)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime64
	}
	return NodeID(h)
}

func u64be(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func nodeKey(id NodeID) []byte { return u64be(uint64(id)) }

func edgeKey(src NodeID, rel RelID, dst NodeID) []byte {
	k := make([]byte, 20)
	binary.BigEndian.PutUint64(k, uint64(src))
	binary.BigEndian.PutUint32(k[8:], uint32(rel))
	binary.BigEndian.PutUint64(k[12:], uint64(dst))
	return k
}

// adjKey is the key of an adjacency chunk: the node, then the (rel, peer)
// of the chunk's first entry.
func adjKey(node NodeID, rel RelID, peer NodeID) []byte { return edgeKey(node, rel, peer) }

func parseAdjKey(k []byte) (node NodeID, rel RelID, peer NodeID, ok bool) {
	if len(k) != 20 {
		return 0, 0, 0, false
	}
	return NodeID(binary.BigEndian.Uint64(k)), RelID(binary.BigEndian.Uint32(k[8:])), NodeID(binary.BigEndian.Uint64(k[12:])), true
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// kvPrefix is str(scope) ‖ str(ns): the prefix ListKV scans.
func kvPrefix(scope, ns string) []byte {
	return appendStr(appendStr(nil, scope), ns)
}

// kvKey is str(scope) ‖ str(ns) ‖ key (raw, so keys sort bytewise).
func kvKey(scope, ns, key string) []byte { return append(kvPrefix(scope, ns), key...) }

// kvEntity is the prefix-free form used inside hist keys.
func kvEntity(scope, ns, key string) []byte { return appendStr(kvPrefix(scope, ns), key) }

func parseKVKey(k []byte) (scope, ns, key string, err error) {
	d := decoder{b: k}
	scope = d.str()
	ns = d.str()
	if d.err != nil {
		return "", "", "", d.err
	}
	return scope, ns, string(d.b[d.off:]), nil
}

func histKey(kind byte, entity []byte, rev Revision) []byte {
	k := make([]byte, 0, 1+len(entity)+8)
	k = append(k, kind)
	k = append(k, entity...)
	return binary.BigEndian.AppendUint64(k, uint64(rev))
}

func relKey(id RelID) []byte { return binary.BigEndian.AppendUint32(nil, uint32(id)) }

// castagnoli is the CRC-32C table of value checksums (immutable once built).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksumLen is the length of the CRC-32C trailer every value ends with.
const checksumLen = 4

// errChecksum is the reason a value whose trailer does not match is corrupt.
var errChecksum = errors.New("checksum mismatch")

// sealValue appends to b the 4-byte little-endian CRC-32C of all of b: the
// trailer every value of every keyspace ends with (SPEC.md §2).
func sealValue(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// unsealValue checks the CRC-32C trailer of a stored value and returns the
// bytes it covers (a subslice of v: no copy). Nothing else of v is read.
func unsealValue(v []byte) ([]byte, error) {
	if len(v) < 1+checksumLen {
		return nil, errors.New("value too short for its checksum")
	}
	body := v[:len(v)-checksumLen]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(v[len(body):]) {
		return nil, errChecksum
	}
	return body, nil
}

// openValue is unsealValue with failures as a *CorruptionError naming the
// keyspace and key.
func openValue(dbName string, key, v []byte) (_ []byte, err error) {
	// The first touch of a value's bytes is here: a value whose size or
	// page number was damaged faults now, and the fault names its keyspace.
	defer func() {
		if r := recover(); r != nil {
			addr, ok := asFault(r)
			if !ok {
				panic(r)
			}
			err = faultCorruption(dbName, bytes.Clone(key), addr)
		}
	}()
	body, err := unsealValue(v)
	if err != nil {
		return nil, &CorruptionError{dbName, bytes.Clone(key), err.Error()}
	}
	return body, nil
}

func u64Value(v uint64) []byte {
	return sealValue(binary.BigEndian.AppendUint64([]byte{fmtPlain}, v))
}

func parseU64Value(v []byte) (uint64, error) {
	v, err := unsealValue(v)
	if err != nil {
		return 0, err
	}
	if len(v) != 9 || v[0] != fmtPlain {
		return 0, errors.New("not a format-1 u64 value")
	}
	return binary.BigEndian.Uint64(v[1:]), nil
}

// relNameValue is the value of a `relname` entry: the relation's id.
func relNameValue(id RelID) []byte {
	return sealValue(append([]byte{fmtPlain}, relKey(id)...))
}

func parseRelNameValue(v []byte) (RelID, error) {
	v, err := unsealValue(v)
	if err != nil {
		return 0, err
	}
	if len(v) != 5 || v[0] != fmtPlain {
		return 0, errors.New("bad value")
	}
	return RelID(binary.BigEndian.Uint32(v[1:])), nil
}

// idsValue is the value of an `ids` entry: the canonical key of the id.
func idsValue(key string) []byte {
	return sealValue(append([]byte{fmtPlain}, key...))
}

// parseIDsValue returns the key bytes of an `ids` value (a subslice of v).
func parseIDsValue(v []byte) ([]byte, error) {
	v, err := unsealValue(v)
	if err != nil {
		return nil, err
	}
	if len(v) < 2 || v[0] != fmtPlain {
		return nil, errors.New("bad value")
	}
	return v[1:], nil
}

// decoder reads the primitive encodings; the first failure sticks in err.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("%s at byte %d", msg, d.off)
	}
}

func (d *decoder) u8() byte {
	if d.err != nil || d.off >= len(d.b) {
		d.fail("truncated")
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 || (n > 1 && d.b[d.off+n-1] == 0) {
		d.fail("bad uvarint") // malformed or overlong (not minimal)
		return 0
	}
	d.off += n
	return v
}

// varint reads a zig-zag varint (minimal encoding only).
func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 || (n > 1 && d.b[d.off+n-1] == 0) {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("string longer than value")
		return nil
	}
	v := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return v
}

func (d *decoder) str() string { return string(d.bytes()) }

// strLike is str returning prev itself when the bytes equal it, so runs of
// the same string (an op's provenance) share one allocation.
func (d *decoder) strLike(prev string) string {
	b := d.bytes()
	if string(b) == prev {
		return prev
	}
	return string(b)
}

func (d *decoder) f32() float32 {
	if d.err != nil || len(d.b)-d.off < 4 {
		d.fail("truncated float")
		return 0
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(d.b[d.off:]))
	d.off += 4
	return v
}

func (d *decoder) u32be() uint32 {
	if d.err != nil || len(d.b)-d.off < 4 {
		d.fail("truncated u32")
		return 0
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

func (d *decoder) end() {
	if d.err == nil && d.off != len(d.b) {
		d.fail("trailing bytes")
	}
}

func nsTime(ns uint64) time.Time { return time.Unix(0, int64(ns)).UTC() }

// nodeRec is the body of an `n` value (and of a node's hist value).
type nodeRec struct {
	flags      byte
	rev        Revision
	createdRev Revision
	createdTS  uint64
	updatedTS  uint64
	valid      validity
	typ        string
	scope      string
	run        string
	task       string
	payload    []byte
}

func (r *nodeRec) tombstone() bool { return r.flags&recTombstone != 0 }

func (r *nodeRec) appendBody(b []byte) []byte {
	b = append(b, r.flags|r.valid.flags())
	b = binary.AppendUvarint(b, uint64(r.rev))
	b = binary.AppendUvarint(b, uint64(r.createdRev))
	b = binary.AppendUvarint(b, r.createdTS)
	b = binary.AppendUvarint(b, r.updatedTS)
	b = r.valid.append(b)
	b = appendStr(b, r.typ)
	b = appendStr(b, r.scope)
	b = appendStr(b, r.run)
	b = appendStr(b, r.task)
	return appendStr(b, string(r.payload))
}

func (r *nodeRec) decodeBody(body []byte) error {
	d := decoder{b: body}
	r.flags = d.u8()
	r.rev = Revision(d.uvarint())
	r.createdRev = Revision(d.uvarint())
	r.createdTS = d.uvarint()
	r.updatedTS = d.uvarint()
	r.valid = decodeValidity(&d, r.flags)
	r.flags &^= recValidFrom | recValidUntil
	r.typ = d.str()
	r.scope = d.str()
	r.run = d.str()
	r.task = d.str()
	r.payload = d.bytes()
	d.end()
	if d.err == nil && r.flags&^recTombstone != 0 {
		return fmt.Errorf("unknown node flags %#x", r.flags)
	}
	return d.err
}

func (r *nodeRec) node(id NodeID, key string) Node {
	return Node{
		ID: id, Key: key, Type: r.typ, Payload: clonePayload(r.payload),
		Scope: r.scope, RunID: r.run, TaskID: r.task,
		CreatedTS: nsTime(r.createdTS), UpdatedTS: nsTime(r.updatedTS),
		CreatedRev: r.createdRev, Rev: r.rev, Valid: r.valid.api(),
	}
}

// edgeRec is the body of an `e` value.
type edgeRec struct {
	flags      byte
	rev        Revision
	createdRev Revision
	createdTS  uint64
	updatedTS  uint64
	weight     float32
	scope      string
	run        string
	task       string
	payload    []byte
}

func (r *edgeRec) tombstone() bool { return r.flags&recTombstone != 0 }

func (r *edgeRec) appendBody(b []byte) []byte {
	b = append(b, r.flags)
	b = binary.AppendUvarint(b, uint64(r.rev))
	b = binary.AppendUvarint(b, uint64(r.createdRev))
	b = binary.AppendUvarint(b, r.createdTS)
	b = binary.AppendUvarint(b, r.updatedTS)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r.weight))
	b = appendStr(b, r.scope)
	b = appendStr(b, r.run)
	b = appendStr(b, r.task)
	return appendStr(b, string(r.payload))
}

func (r *edgeRec) decodeBody(body []byte) error {
	d := decoder{b: body}
	r.flags = d.u8()
	r.rev = Revision(d.uvarint())
	r.createdRev = Revision(d.uvarint())
	r.createdTS = d.uvarint()
	r.updatedTS = d.uvarint()
	r.weight = d.f32()
	r.scope = d.str()
	r.run = d.str()
	r.task = d.str()
	r.payload = d.bytes()
	d.end()
	if d.err == nil && r.flags&^(recTombstone|recWeight) != 0 {
		return fmt.Errorf("unknown edge flags %#x", r.flags)
	}
	return d.err
}

// kvRec is the body of a `kv` value.
type kvRec struct {
	flags   byte
	rev     Revision
	ts      uint64
	valid   validity
	run     string
	task    string
	payload []byte
}

func (r *kvRec) tombstone() bool { return r.flags&recTombstone != 0 }

func (r *kvRec) appendBody(b []byte) []byte {
	b = append(b, r.flags|r.valid.flags())
	b = binary.AppendUvarint(b, uint64(r.rev))
	b = binary.AppendUvarint(b, r.ts)
	b = r.valid.append(b)
	b = appendStr(b, r.run)
	b = appendStr(b, r.task)
	return appendStr(b, string(r.payload))
}

func (r *kvRec) decodeBody(body []byte) error {
	d := decoder{b: body}
	r.flags = d.u8()
	r.rev = Revision(d.uvarint())
	r.ts = d.uvarint()
	r.valid = decodeValidity(&d, r.flags)
	r.flags &^= recValidFrom | recValidUntil
	r.run = d.str()
	r.task = d.str()
	r.payload = d.bytes()
	d.end()
	if d.err == nil && r.flags&^recTombstone != 0 {
		return fmt.Errorf("unknown kv flags %#x", r.flags)
	}
	return d.err
}

func clonePayload(p []byte) []byte {
	if len(p) == 0 {
		return nil
	}
	return append([]byte(nil), p...)
}

// Relation values (`rel`): format u8 ‖ flags u8 (bit0 bidirectional, bit1
// inhibitory, bits 2–3 the role, format 02 only) ‖ default weight f32 LE ‖
// [uvarint created_rev, format 02 only] ‖ name bytes ‖ crc. Schema 2
// writes 02; 01 (no creation revision) exists only in schema-1 stores,
// which Open upgrades.
const (
	relFormatV1 = 0x01
	relFormatV2 = 0x02
)

func encodeRel(r Relation) []byte {
	b := []byte{relFormatV2, 0}
	if r.Bidirectional {
		b[1] |= 1
	}
	if r.Inhibitory {
		b[1] |= 2
	}
	b[1] |= r.Role.Bits()
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r.DefaultWeight))
	b = binary.AppendUvarint(b, uint64(r.CreatedRev))
	return sealValue(append(b, r.Name...))
}

// decodeRel decodes a schema-2 relation value.
func decodeRel(id RelID, v []byte) (Relation, error) {
	return decodeRelFormat(id, v, relFormatV2)
}

// decodeRelFormat decodes a relation value of the given format (01 only
// while upgrading a schema-1 store: its CreatedRev is then 0).
func decodeRelFormat(id RelID, v []byte, format byte) (Relation, error) {
	v, err := unsealValue(v)
	if err != nil {
		return Relation{}, err
	}
	if len(v) < 6 || v[0] != format {
		return Relation{}, errors.New("bad relation value")
	}
	known := byte(3) // 01: bidirectional, inhibitory
	if format == relFormatV2 {
		known |= roles.Mask // 02: and the role
	}
	if v[1]&^known != 0 {
		return Relation{}, fmt.Errorf("unknown relation flags %#x", v[1])
	}
	r := Relation{
		ID:            id,
		DefaultWeight: math.Float32frombits(binary.LittleEndian.Uint32(v[2:])),
		Bidirectional: v[1]&1 != 0, Inhibitory: v[1]&2 != 0,
		Role: roles.FromFlags(uint32(v[1])),
	}
	name := v[6:]
	if format == relFormatV2 {
		created, n := binary.Uvarint(name)
		if n <= 0 || n != uvarintLen(created) {
			return Relation{}, errors.New("bad relation creation revision")
		}
		r.CreatedRev, name = Revision(created), name[n:]
	}
	r.Name = string(name)
	if err := validRelName(r.Name); err != nil {
		return Relation{}, err
	}
	return r, nil
}

// uvarintLen is the length of x's minimal uvarint encoding.
func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

func validRelName(name string) error {
	if name == "" || len(name) > maxRelNameLen {
		return fmt.Errorf("%w: relation name must be 1 to %d bytes", ErrInvalid, maxRelNameLen)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return fmt.Errorf("%w: relation name %q: only letters, digits, '_', '-', '.'", ErrInvalid, name)
		}
	}
	return nil
}

// builtinRelations exist with these ids in every store.
var builtinRelations = [...]string{
	"defines", "references", "calls", "imports", "tests",
	"implements", "constrains", "decided_for", "derived_from", "supersedes",
}

// appendRecord appends the value of a record body (appendBody writes it)
// to dst: the format-1 envelope, or format 2 (one zstd frame) when the
// body is longer than compressAbove bytes, then the crc trailer. scratch
// holds the plain body while it is compressed. Every writer of n, e, kv and
// hist values uses this rule, so a bulk load and ordinary transactions
// write the same bytes.
func appendRecord(dst []byte, scratch *[]byte, appendBody func([]byte) []byte, enc *zstd.Encoder) []byte {
	start := len(dst)
	dst = appendBody(append(dst, fmtPlain))
	if body := dst[start+1:]; len(body) > compressAbove {
		*scratch = append((*scratch)[:0], body...)
		dst = binary.AppendUvarint(append(dst[:start], fmtZstd), uint64(len(*scratch)))
		dst = enc.EncodeAll(*scratch, dst)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}
