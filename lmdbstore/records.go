package lmdbstore

// What every keyspace shares (SPEC.md §2): the keyspace names, format
// bytes and record flags, the checksum trailer (sealValue, unsealValue), the
// record envelope of n, e, kv and hist values (appendRecord, decodeEnvelope)
// and the bounds-checked decoder. Each keyspace's own keys and codec are in
// its file (keyspace.go lists them). Decoders never trust a length they
// read: every slice is bounds-checked first, and failures come back as
// errors the caller turns into *CorruptionError.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	"github.com/klauspost/compress/zstd"
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
//	4: adds: log records of format 03 (a key table, logkeyed.go). A store
//	   becomes schema 4 in the transaction that writes its first such
//	   record (WriteTxn.noteLogFormat), not at Open: its other records all
//	   stay valid, and a store that never holds one stays readable by
//	   schema-3 binaries. Schema-3 binaries refuse a schema-4 store
//	   (ErrNewerSchema) instead of failing on its log.
const SchemaVersion = schemaKeyedLog

// The schemas that name a layout step: Open upgrades an older store to
// schemaRevs; the first format-03 log record raises it to schemaKeyedLog.
const (
	schemaRevs     = 3
	schemaKeyedLog = 4
)

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

// Value format bytes. Every value starts with one, so no value is empty.
const (
	fmtPlain byte = 1 // body follows as is
	fmtZstd  byte = 2 // uvarint body length, then one zstd frame of the body
	// fmtKeyed (3, logkeyed.go) is a log record format only.
)

// Record flags (node, edge and kv records).
const (
	recTombstone  byte = 1 << 0
	recWeight     byte = 1 << 1 // edge only: weight was given explicitly
	recValidFrom  byte = 1 << 2 // node and kv only: a valid_from follows
	recValidUntil byte = 1 << 3 // node and kv only: a valid_until follows
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

func u64be(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

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

func clonePayload(p []byte) []byte {
	if len(p) == 0 {
		return nil
	}
	return append([]byte(nil), p...)
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

// decodeEnvelope returns the body of a record value (decompressing it).
func (s *Store) decodeEnvelope(dbName string, key, v []byte) ([]byte, error) {
	v, err := openValue(dbName, key, v)
	if err != nil {
		return nil, err
	}
	if len(v) < 2 {
		return nil, &CorruptionError{dbName, bytes.Clone(key), "value too short"}
	}
	switch v[0] {
	case fmtPlain:
		return v[1:], nil
	case fmtZstd:
		n, w := binary.Uvarint(v[1:])
		if w <= 0 || n > 1<<30 {
			return nil, &CorruptionError{dbName, bytes.Clone(key), "bad compressed length"}
		}
		body, err := s.unzstd(v[1+w:], n)
		if err != nil {
			return nil, &CorruptionError{dbName, bytes.Clone(key), fmt.Sprintf("bad compressed body: %v", err)}
		}
		return body, nil
	}
	return nil, &CorruptionError{dbName, bytes.Clone(key), fmt.Sprintf("unknown format byte %d", v[0])}
}

func (s *Store) decodeRecord(dbName string, key, v []byte, decode func([]byte) error) error {
	body, err := s.decodeEnvelope(dbName, key, v)
	if err != nil {
		return err
	}
	if err := decode(body); err != nil {
		return &CorruptionError{dbName, bytes.Clone(key), err.Error()}
	}
	return nil
}

// envelope wraps a record body as a value: format byte, then the body plain
// or zstd-compressed when compress is set and the body is large.
func (tx *WriteTxn) envelope(body []byte, compress bool) []byte {
	if compress && len(body) > compressAbove {
		enc, _ := tx.s.zstd()
		v := binary.AppendUvarint([]byte{fmtZstd}, uint64(len(body)))
		return sealValue(enc.EncodeAll(body, v))
	}
	return sealValue(append([]byte{fmtPlain}, body...))
}

// record encodes a record body as a value in a buffer reused by the
// transaction (LMDB copies values on Put): format 1, or format 2 (zstd)
// when the body is longer than compressAbove bytes.
func (tx *WriteTxn) record(appendBody func([]byte) []byte) []byte {
	enc, _ := tx.s.zstd()
	tx.recBuf = appendRecord(tx.recBuf[:0], &tx.bodyBuf, appendBody, enc)
	return tx.recBuf
}

// errUnchanged: a put that would leave its record exactly as it is (same
// type/weight and payload, live): it writes nothing and is not an operation.
var errUnchanged = errors.New("unchanged")
