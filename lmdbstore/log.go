package lmdbstore

// The log keyspace (SPEC.md §2): one record per revision listing its
// operations in order.
//
//	key:   rev u64 BE
//	value: format u8 (01 ops plain, 02 ops zstd, 03 key table and ops zstd)
//	       ‖ commit time u64 BE ‖ str scope ‖ str run_id ‖ str task_id ‖
//	       uvarint op count ‖ ops ‖ crc
//	op:    kind u8 ‖ str scope ‖ str run_id ‖ str task_id ‖ fields (SPEC.md §2)
//
// Format 03 is in logkeyed.go. Writers use 01 up to compressLogAbv bytes of
// ops and 03 above; 02 is read, no longer written.
//
// The record is written at commit with the ts, revs and meta entries of the
// revision (finishLog).

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/klauspost/compress/zstd"
)

// Log op kinds beyond the OpKind values: puts that carry a valid-time
// interval. DiffSince reports them as OpPutNode and OpPutKV with Op.Valid
// set; puts without validity keep kinds 1 and 5.
const (
	opPutNodeValid OpKind = 8
	opPutKVValid   OpKind = 9
)

// DiffSince calls fn for every operation committed after since (a revision
// or a time), in commit order, restricted by f. Since the log is never
// pruned, DiffSince works below the retention horizon too.
func (r *ReadTxn) DiffSince(since At, f DiffFilter, fn func(Op) error) error {
	if err := r.loadMeta(); err != nil {
		return err
	}
	var first uint64
	switch since.kind {
	case atLatest:
		return nil
	case atRevision:
		if since.rev > r.rev {
			return fmt.Errorf("%w: revision %d (latest is %d)", ErrNotFound, since.rev, r.rev)
		}
		first = uint64(since.rev) + 1
	case atTime:
		rev, ok, err := r.revAtTime(since.t)
		if err != nil {
			return err
		}
		first = 1
		if ok {
			first = uint64(rev) + 1
		}
	}
	cur, err := r.txn().OpenCursor(r.s.db.log)
	if err != nil {
		return err
	}
	defer cur.Close()
	count := 0
	k, v, err := cur.Get(u64be(first), nil, lmdb.SetRange)
	for ; err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
		if _, err := r.s.scanLog(k, v, func(op Op, _ byte) error {
			if f.RunID != "" && op.RunID != f.RunID || f.TaskID != "" && op.TaskID != f.TaskID {
				return nil
			}
			count++
			return fn(op)
		}); err != nil {
			return err
		}
	}
	if !lmdb.IsNotFound(err) {
		return err
	}
	r.emitRead("query", "log", "log", r.rev, func(e *event) { e.Query, e.Results = "diff_since", &count })
	return nil
}

// logRecord is one decoded `log` value.
type logRecord struct {
	format          byte // fmtPlain, fmtZstd or fmtKeyed
	rev             Revision
	ts              uint64
	scope, run, tsk string
	ops             []Op
	relFlags        map[int]byte // add_rel ops by index: the relation's flags byte (encodeRel)
}

// openLog checks a log value's crc and returns its header, its op count,
// its format byte and a reader of its body: the ops for formats 01 and 02,
// the key table and the ops for 03 (logbody.go). The record's rev is left
// 0. The caller closes the body.
func (s *Store) openLog(v []byte) (logRecord, uint64, byte, *logBody, error) {
	v, err := unsealValue(v)
	if err != nil {
		return logRecord{}, 0, 0, nil, err
	}
	if len(v) < 9 || !logFormat(v[0]) {
		return logRecord{}, 0, 0, nil, errors.New("bad header")
	}
	rec := logRecord{ts: binary.BigEndian.Uint64(v[1:9])}
	d := decoder{b: v, off: 9}
	rec.scope, rec.run, rec.tsk = d.str(), d.str(), d.str()
	nops := d.uvarint()
	if d.err != nil {
		return logRecord{}, 0, 0, nil, d.err
	}
	frame, n := v[d.off:], uint64(len(v)-d.off)
	if v[0] != fmtPlain {
		var w int
		if n, w = binary.Uvarint(frame); w <= 0 {
			return logRecord{}, 0, 0, nil, errors.New("bad compressed length")
		}
		frame = frame[w:]
	}
	if nops > n {
		return logRecord{}, 0, 0, nil, errors.New("op count exceeds value")
	}
	body, err := s.openBody(v[0], frame, n)
	if err != nil {
		return logRecord{}, 0, 0, nil, err
	}
	return rec, nops, v[0], body, nil
}

// logFormat reports whether f is a log record format this binary reads.
func logFormat(f byte) bool { return f == fmtPlain || f == fmtZstd || f == fmtKeyed }

// decodeLog decodes the log record v of key k with all its operations.
func (s *Store) decodeLog(k, v []byte) (logRecord, error) {
	var ops []Op
	var flags map[int]byte
	rec, err := s.scanLog(k, v, func(op Op, f byte) error {
		if op.Kind == OpAddRel {
			if flags == nil {
				flags = map[int]byte{}
			}
			flags[len(ops)] = f
		}
		ops = append(ops, op)
		return nil
	})
	if err != nil {
		return logRecord{}, err
	}
	rec.ops, rec.relFlags = ops, flags
	return rec, nil
}

// scanLog checks the log record v of key k and calls fn for each of its
// operations in order, with add_rel's flags byte (encodeRel; 0 for other
// kinds). It returns the record's header, its ops nil. A record that
// does not decode is a *CorruptionError, whose operations before the
// damage fn may have seen; fn's own error is returned as it is.
func (s *Store) scanLog(k, v []byte, fn func(op Op, relFlags byte) error) (logRecord, error) {
	bad := func(msg string) error { return &CorruptionError{dbLog, bytes.Clone(k), msg} }
	if len(k) != 8 {
		return logRecord{}, bad("key is not 8 bytes")
	}
	rec, nops, format, body, err := s.openLog(v)
	if err != nil {
		return logRecord{}, bad(err.Error())
	}
	defer body.close()
	if format == fmtKeyed {
		if err := body.keyTable(); err != nil {
			return logRecord{}, bad(err.Error())
		}
	}
	rec.rev, rec.format = Revision(binary.BigEndian.Uint64(k)), format
	ts := nsTime(rec.ts)
	prev := Op{Scope: rec.scope, RunID: rec.run, TaskID: rec.tsk} // the previous op's provenance, shared when equal
	for range nops {
		var op Op
		var flags byte
		if err := body.read(func() { op, flags = decodeOp(&body.opDecoder, prev) }); err != nil {
			return logRecord{}, bad(err.Error())
		}
		if op.Kind == 0 {
			return logRecord{}, bad(fmt.Sprintf("unknown op kind %d", flags))
		}
		op.Rev, op.TS = rec.rev, ts
		prev = op
		if err := fn(op, flags); err != nil {
			return logRecord{}, err
		}
	}
	if err := body.end(); err != nil {
		return logRecord{}, bad(err.Error())
	}
	return rec, nil
}

// decodeOp reads one operation, its provenance strings shared with
// prev's when equal, and add_rel's flags byte. An op of unknown kind
// comes back with Kind 0 and the kind in the flags byte.
func decodeOp(od *opDecoder, prev Op) (Op, byte) {
	op := Op{Kind: OpKind(od.u8())}
	if od.err == nil && (int(op.Kind) >= len(opFields) || opFields[op.Kind] == nil) {
		return Op{}, byte(op.Kind)
	}
	op.Scope, op.RunID, op.TaskID = od.nameLike(prev.Scope), od.nameLike(prev.RunID), od.nameLike(prev.TaskID)
	var flags byte
	switch op.Kind {
	case OpPutNode, opPutNodeValid:
		op.NodeKey, op.NodeType = od.name(), od.name()
		op.Payload = nilIfEmpty(od.bytes())
		if op.Kind == opPutNodeValid {
			op.Kind, op.Valid = OpPutNode, decodeLogValidity(&od.decoder).api()
		}
	case OpDelNode:
		op.NodeKey = od.name()
	case OpPutEdge:
		op.Src, op.Rel, op.Dst = od.name(), od.name(), od.name()
		op.Weight = od.f32()
		op.Payload = nilIfEmpty(od.bytes())
	case OpDelEdge:
		op.Src, op.Rel, op.Dst = od.name(), od.name(), od.name()
	case OpPutKV, opPutKVValid:
		op.Namespace, op.Key = od.name(), od.name()
		op.Payload = nilIfEmpty(od.bytes())
		if op.Kind == opPutKVValid {
			op.Kind, op.Valid = OpPutKV, decodeLogValidity(&od.decoder).api()
		}
	case OpDelKV:
		op.Namespace, op.Key = od.name(), od.name()
	case OpAddRel:
		op.Rel = od.name()
		od.u32be()
		flags = od.u8()
		op.Weight = od.f32()
	}
	return op, flags
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

// op appends one operation to the log record: kind, provenance, then the
// kind's fields.
func (tx *WriteTxn) op(kind OpKind, scope, run, task string, fields func([]byte) []byte) {
	tx.ops = appendLogOp(tx.ops, kind, scope, run, task, fields)
	tx.nops++
}

// appendLogOp appends one operation as the log encodes it: kind,
// provenance, then the kind's fields.
func appendLogOp(b []byte, kind OpKind, scope, run, task string, fields func([]byte) []byte) []byte {
	b = append(b, byte(kind))
	b = appendStr(b, scope)
	b = appendStr(b, run)
	b = appendStr(b, task)
	return fields(b)
}

// logValue encodes the log record of the operations so far: format 01, or
// format 03 when they exceed compressLogAbv bytes (02 when its body would
// be under minKeyedBody bytes, and with the test-only logFormat02).
func (tx *WriteTxn) logValue() ([]byte, error) {
	if len(tx.ops) <= compressLogAbv {
		v := append(append(make([]byte, 0, 48+len(tx.ops)), fmtPlain), tx.logHead()...)
		return sealValue(append(v, tx.ops...)), nil
	}
	if tx.s.logFormat02 {
		return tx.sealLog(fmtZstd, tx.ops), nil
	}
	body, err := keyedOps(tx.ops, tx.nops)
	if err != nil {
		return nil, err // tx.ops are this package's own encoding: a bug
	}
	if len(body) < minKeyedBody {
		return tx.sealLog(fmtZstd, tx.ops), nil
	}
	return tx.sealLog(fmtKeyed, body), nil
}

// logHead is a log record's header after its format byte.
func (tx *WriteTxn) logHead() []byte {
	head := binary.BigEndian.AppendUint64(make([]byte, 0, 48), tx.ts)
	head = appendStr(head, tx.meta.Scope)
	head = appendStr(head, tx.meta.RunID)
	head = appendStr(head, tx.meta.TaskID)
	return binary.AppendUvarint(head, uint64(tx.nops))
}

// sealLog encodes a compressed log record (format 02 or 03) of body.
func (tx *WriteTxn) sealLog(format byte, body []byte) []byte {
	if len(body) > tx.s.streamLogAbove() {
		r, err := tx.sealLogStream(format, len(body), "", func(w io.Writer) error {
			_, err := w.Write(body)
			return err
		})
		if err == nil {
			if v, err := r.bytes(); err == nil { // in memory: no error
				return v
			}
		}
		// A write to memory fails only with a bug: EncodeAll below.
	}
	enc, _ := tx.s.zstd()
	v := append(append(make([]byte, 0, 64+len(body)/4), format), tx.logHead()...)
	v = binary.AppendUvarint(v, uint64(len(body)))
	return sealValue(enc.EncodeAll(body, v))
}

// streamLogAbove is the body size above which a log record is compressed
// as a stream (sealLogStream) rather than in one call (EncodeAll): the two
// frames differ in bytes (both declare the content size), and a bulk
// load's large record is written as a stream without its body held whole.
const streamLogAbove = 8 << 20

func (s *Store) streamLogAbove() int { return cmp.Or(s.streamLog, streamLogAbove) }

// sealLogStream seals a log record of a body of size bytes that write
// writes, in pieces, to the compressor it is given: the same bytes
// whatever the pieces (TestSealLogStream), sealLog's for a body over
// streamLogAbove, with only the compressed record held, in parts (its
// size is not known before it is compressed). A body of other than size
// bytes is an error.
//
// With spillDir set, the record's parts past its first recordResident go
// to an unnamed file there as each fills (recordParts.spillTo), not
// the heap: a bulk load's record (226 MB for std×40) is then held once,
// in the page LMDB reserves for it, not also in the process beside it.
func (tx *WriteTxn) sealLogStream(format byte, size int, spillDir string, write func(w io.Writer) error) (*recordParts, error) {
	out := &recordParts{}
	if spillDir != "" {
		out.spillTo(spillDir, cmp.Or(tx.s.recordResident, recordResident))
	}
	head := append([]byte{format}, tx.logHead()...)
	out.Write(binary.AppendUvarint(head, uint64(size)))
	enc, err := zstd.NewWriter(nil, zstdEncoderOptions()...)
	if err != nil {
		return nil, err
	}
	enc.ResetContentSize(out, int64(size))
	cw := &countingWriter{w: enc}
	if err := write(cw); err != nil {
		enc.Close()
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if cw.n != size {
		return nil, fmt.Errorf("log record: body of %d bytes, sized %d", cw.n, size) // a bug, not bad input
	}
	out.seal()
	return out, nil
}

// recordParts is a value written in parts of recordPart bytes: a log
// record compressed as a stream, whose size is known only at its end, is
// held in no more memory than it takes (a buffer that grows by doubling
// holds up to three times that while it copies) and written into the
// page LMDB reserves for it (putLogParts) without being joined first.
//
// Spilling (spillTo): past its first recordResident parts, each part is
// written, once full, to the end of an unnamed file beside the store
// (spillFile) and its buffer reused for the next: the record is its
// parts before fileAt, the file's onFile bytes, then its parts from
// fileAt on. Any failure to spill keeps the part in memory and stops
// spilling: spilling never fails a load.
type recordParts struct {
	parts [][]byte
	n     int
	crc   uint32 // of every byte written (seal)

	spill    *spillFile
	dir      string
	resident int   // parts kept in memory before any goes to the file
	fileAt   int   // where the file's bytes go among parts (-1: none yet)
	onFile   int64 // bytes in the file
}

// recordPart is the size of a part of recordParts.
const recordPart = 1 << 20

// recordResident is how many parts a spilling recordParts keeps in
// memory before it writes the next full ones to its file.
const recordResident = 16

// spillTo makes the full parts past the first resident go to an unnamed
// file in dir.
func (r *recordParts) spillTo(dir string, resident int) {
	r.spill, r.dir, r.resident, r.fileAt = &spillFile{}, dir, resident, -1
	runtime.AddCleanup(r, func(s *spillFile) { s.close(nil) }, r.spill)
}

func (r *recordParts) Write(p []byte) (int, error) {
	n := len(p)
	r.crc = crc32.Update(r.crc, castagnoli, p)
	for len(p) > 0 {
		if len(r.parts) == 0 || len(r.parts[len(r.parts)-1]) == recordPart {
			r.parts = append(r.parts, make([]byte, 0, recordPart))
		}
		last := &r.parts[len(r.parts)-1]
		k := min(len(p), recordPart-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
		if len(*last) == recordPart {
			r.spillLast()
		}
	}
	r.n += n
	return n, nil
}

// spillLast writes the last part, full, to the end of the file and
// reuses its buffer for the next part, when r spills, holds its first
// recordResident parts already, and keeps no part in memory after the
// file's bytes but this one.
func (r *recordParts) spillLast() {
	s := r.spill
	last := len(r.parts) - 1
	if s == nil || s.off || last < r.resident || (r.fileAt >= 0 && r.fileAt != last) {
		return
	}
	part := r.parts[last]
	off, ok := s.alloc(r.dir, int64(len(part)))
	if !ok {
		return
	}
	if _, err := s.f.WriteAt(part, off); err != nil {
		s.off = true
		return
	}
	r.fileAt = last
	r.onFile += int64(len(part))
	r.parts[last] = part[:0]
}

// seal appends the checksum of what r holds (sealValue's trailer).
func (r *recordParts) seal() {
	r.Write(binary.LittleEndian.AppendUint32(nil, r.crc))
}

// copyTo copies r's bytes to dst, which is r.n long; the error is the
// spill file's, read back.
func (r *recordParts) copyTo(dst []byte) error {
	for i, part := range r.parts {
		if i == r.fileAt && r.onFile > 0 {
			if _, err := r.spill.f.ReadAt(dst[:r.onFile], 0); err != nil {
				return fmt.Errorf("log record spilled to %s: %w", r.dir, err)
			}
			dst = dst[r.onFile:]
		}
		dst = dst[copy(dst, part):]
	}
	return nil
}

// bytes is r's bytes in one slice.
func (r *recordParts) bytes() ([]byte, error) {
	v := make([]byte, r.n)
	return v, r.copyTo(v)
}

// release closes r's spill file, if any (the record is read no more).
func (r *recordParts) release() {
	if r.spill != nil {
		r.spill.close(nil)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// noteLogFormat raises the store's schema to schemaKeyedLog in the
// transaction that writes its first format-03 log record v, so binaries
// that cannot read one refuse the store (ErrNewerSchema).
func (tx *WriteTxn) noteLogFormat(v []byte) error {
	if v[0] != fmtKeyed {
		return nil
	}
	ver, err := getU64(tx.txn, tx.s.db.meta, metaSchema)
	if err != nil || ver >= schemaKeyedLog {
		return err
	}
	return tx.txn.Put(tx.s.db.meta, []byte(metaSchema), u64Value(schemaKeyedLog), 0)
}

// finishLog writes the log record v (logValue), the time index and the
// meta counters, and publishes v if the store is bound to a remote.
func (tx *WriteTxn) finishLog(v []byte) error {
	if err := tx.putLog(v); err != nil {
		return err
	}
	return tx.finishPutLog(v)
}

// putLog writes the log record v.
func (tx *WriteTxn) putLog(v []byte) error {
	return tx.logPutErr(tx.txn.Put(tx.s.db.log, u64be(uint64(tx.rev)), v, lmdb.Append))
}

// putLogParts writes the log record r, copied into the space LMDB
// reserves for it.
func (tx *WriteTxn) putLogParts(r *recordParts) error {
	v, err := tx.txn.PutReserve(tx.s.db.log, u64be(uint64(tx.rev)), r.n, lmdb.Append)
	if err != nil {
		return tx.logPutErr(err)
	}
	err = r.copyTo(v)
	r.release()
	return err
}

// logPutErr is the error of a put of the transaction's log record.
func (tx *WriteTxn) logPutErr(err error) error {
	if lmdb.IsErrno(err, lmdb.KeyExist) {
		return &CorruptionError{dbLog, u64be(uint64(tx.rev)), "log has a record beyond meta rev"}
	}
	return err
}

// finishPutLog is finishLog once putLog wrote v. Only publishing to a
// remote reads past v's first byte (the format): a store with no
// Replicator may pass that byte alone.
func (tx *WriteTxn) finishPutLog(v []byte) error {
	if err := tx.noteLogFormat(v); err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.ts, u64be(tx.ts), u64Value(uint64(tx.rev)), lmdb.Append); err != nil {
		if lmdb.IsErrno(err, lmdb.KeyExist) {
			return &CorruptionError{dbTS, u64be(tx.ts), "time index has a time beyond meta ts"}
		}
		return err
	}
	if err := putRevs(tx.txn, tx.s.db.revs, tx.rev, revMeta{ts: tx.ts, scope: tx.meta.Scope, run: tx.meta.RunID, task: tx.meta.TaskID}); err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.meta, []byte(metaRev), u64Value(uint64(tx.rev)), 0); err != nil {
		return err
	}
	if tx.horizon != tx.r.horizon0 {
		if err := tx.txn.Put(tx.s.db.meta, []byte(metaHorizon), u64Value(uint64(tx.horizon)), 0); err != nil {
			return err
		}
	}
	if err := tx.txn.Put(tx.s.db.meta, []byte(metaTS), u64Value(tx.ts), 0); err != nil {
		return err
	}
	// Last: a bound store commits only what the remote accepted (replica.go).
	return tx.publish(v)
}
