package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// WriteTxn is one write transaction. It must not be used after the Update
// callback returns.
//
// Every operation validates its input before it writes, so an operation that
// returns ErrInvalid, ErrNotFound or ErrUnknownRelation has written nothing
// and the transaction may go on. A collision, a corruption or an LMDB error
// is sticky: the whole transaction fails even if the callback returns nil.
type WriteTxn struct {
	s       *Store
	txn     *lmdb.Txn
	meta    WriteMeta
	rev     Revision
	ts      uint64
	horizon Revision
	nextRel RelID

	ops      []byte // encoded operations for the log record
	nops     int
	redacted int // secrets the Redactor replaced
	events   []event
	err      error
	r        ReadTxn

	scratch       []adjacency.Entry
	outCur, inCur *lmdb.Cursor // reused by adjInsert; closed by close
	outBuf, inBuf adjBuf       // write-back buffers of adjAdd; flushed by flushAdj
	knownIDs      map[NodeID]string
	verifiedIDs   []NodeID // ids found already stored: cached as committed after commit
	recBuf        []byte   // reused by record
	bodyBuf       []byte   // reused by record
	encBuf        []byte   // reused for chunk values
}

// close releases the transaction's cursors (before commit or abort).
func (tx *WriteTxn) close() {
	if tx.outCur != nil {
		tx.outCur.Close()
	}
	if tx.inCur != nil {
		tx.inCur.Close()
	}
}

func (s *Store) beginWrite(txn *lmdb.Txn, meta WriteMeta) (*WriteTxn, error) {
	lastRev, err := getU64(txn, s.db.meta, metaRev)
	if err != nil {
		return nil, err
	}
	lastTS, err := getU64(txn, s.db.meta, metaTS)
	if err != nil {
		return nil, err
	}
	horizon, err := getU64(txn, s.db.meta, metaHorizon)
	if err != nil {
		return nil, err
	}
	storedHorizon := horizon
	nextRel, err := getU64(txn, s.db.meta, metaNextRel)
	if err != nil {
		return nil, err
	}
	retain, err := getU64(txn, s.db.meta, metaRetain)
	if err != nil {
		return nil, err
	}
	// With a retention of N, the revision this transaction commits makes
	// rev-N+1 the oldest readable one: chunks it rewrites may drop what no
	// view from there on can see.
	if rev := lastRev + 1; retain > 0 && rev >= retain && rev-retain+1 > horizon {
		horizon = rev - retain + 1
	}
	ts := uint64(max(s.clock().UnixNano(), 0))
	if ts <= lastTS {
		ts = lastTS + 1
	}
	tx := &WriteTxn{
		s: s, txn: txn, meta: meta, rev: Revision(lastRev + 1), ts: ts,
		horizon: Revision(horizon), nextRel: RelID(nextRel),
	}
	tx.outBuf.out = true
	tx.r = ReadTxn{s: s, txn: txn, inWrite: true, w: tx, metaLoaded: true,
		rev: tx.rev, horizon: tx.horizon, horizon0: Revision(storedHorizon), pendingTS: ts}
	return tx, nil
}

// Reader returns a read view of this transaction, including its own writes.
// Its latest revision is the one this transaction will commit as.
func (tx *WriteTxn) Reader() *ReadTxn { return &tx.r }

// Revision is the revision this transaction commits as.
func (tx *WriteTxn) Revision() Revision { return tx.rev }

// fail records a sticky error.
func (tx *WriteTxn) fail(err error) error {
	if tx.err == nil {
		tx.err = err
	}
	return err
}

func (tx *WriteTxn) inherit(scope, run, task string) (string, string, string) {
	if scope == "" {
		scope = tx.meta.Scope
	}
	if run == "" {
		run = tx.meta.RunID
	}
	if task == "" {
		task = tx.meta.TaskID
	}
	return scope, run, task
}

func validKey(what, key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	}
	if len(key) > maxNodeKeyLen {
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalid, what, maxNodeKeyLen)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %s is not UTF-8", ErrInvalid, what)
	}
	return nil
}

// redact passes text through the store's Redactor (if any), counting what
// it replaced.
func (tx *WriteTxn) redact(text string) string {
	if tx.s.opts.Redactor == nil || text == "" {
		return text
	}
	out, n := tx.s.opts.Redactor.Redact(text)
	tx.redacted += n
	return out
}

// redactPayload is redact for a payload. Redaction replaces the secret's
// bytes inside a JSON string with `[REDACTED:kind]`, which keeps the JSON
// valid; the canonical form is computed afterwards.
func (tx *WriteTxn) redactPayload(p json.RawMessage) json.RawMessage {
	if tx.s.opts.Redactor == nil || len(p) == 0 {
		return p
	}
	return json.RawMessage(tx.redact(string(p)))
}

// errUnchanged: a put that would leave its record exactly as it is (same
// type/weight and payload, live): it writes nothing and is not an operation.
var errUnchanged = errors.New("unchanged")

func validWeight(w float32) error {
	if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) || w <= 0 {
		return fmt.Errorf("%w: weight %v must be finite and positive", ErrInvalid, w)
	}
	return nil
}

// registerID checks key against the ids keyspace and records it the first
// time. A different key under the same id is a collision (sticky).
func (tx *WriteTxn) registerID(key string) (NodeID, error) {
	id := tx.s.hash(key)
	if known, ok := tx.knownIDs[id]; ok && known == key {
		return id, nil
	}
	if tx.knownIDs == nil {
		tx.knownIDs = map[NodeID]string{}
	}
	if tx.s.ids.has(id, key) {
		tx.knownIDs[id] = key
		return id, nil
	}
	k := nodeKey(id)
	v, err := tx.txn.Get(tx.s.db.ids, k)
	switch {
	case err == nil:
		registered, perr := parseIDsValue(v)
		if perr != nil {
			return 0, tx.fail(&CorruptionError{dbIDs, k, perr.Error()})
		}
		if string(registered) != key {
			return 0, tx.fail(tx.s.collisionOrCorruption(id, key, string(registered)))
		}
		tx.knownIDs[id] = key
		tx.verifiedIDs = append(tx.verifiedIDs, id)
		return id, nil
	case lmdb.IsNotFound(err):
		if err := tx.txn.Put(tx.s.db.ids, k, idsValue(key), 0); err != nil {
			return 0, tx.fail(err)
		}
		tx.knownIDs[id] = key
		return id, nil
	default:
		return 0, tx.fail(err)
	}
}

// checkID is registerID for operations that must not register: it fails on
// a collision and reports whether the key is known.
func (tx *WriteTxn) checkID(key string) (NodeID, bool, error) {
	id := tx.s.hash(key)
	existing, err := tx.r.keyOf(id)
	if errors.Is(err, ErrNotFound) {
		return id, false, nil
	}
	if err != nil {
		return 0, false, tx.fail(err)
	}
	if existing != key {
		return 0, false, tx.fail(tx.s.collisionOrCorruption(id, key, existing))
	}
	return id, true, nil
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

// toHist copies the current value of an entity to hist under its revision,
// compressing large values.
func (tx *WriteTxn) toHist(dbName string, kind byte, entity, cur []byte, rev Revision) error {
	body, err := tx.s.decodeEnvelope(dbName, entity, cur)
	if err != nil {
		return tx.fail(err)
	}
	val := tx.envelope(body, true)
	if err := tx.txn.Put(tx.s.db.hist, histKey(kind, entity, rev), val, 0); err != nil {
		return tx.fail(err)
	}
	return nil
}

// PutNode creates or overwrites a node. A put that leaves the live node as
// it is (same type, payload and valid time) changes nothing (SPEC.md §2).
func (tx *WriteTxn) PutNode(p NodePut) error {
	if tx.err != nil {
		return tx.err
	}
	p.Key, p.Payload = tx.redact(p.Key), tx.redactPayload(p.Payload)
	if err := validKey("node key", p.Key); err != nil {
		return err
	}
	if strings.HasPrefix(p.Key, kvAddrPrefix) {
		return fmt.Errorf("%w: node key %q: keys starting with %q name kv entries (kv:SCOPE/NS/KEY), not nodes", ErrInvalid, p.Key, kvAddrPrefix)
	}
	payload, err := canonicalPayload(p.Payload, false)
	if err != nil {
		return err
	}
	valid, err := toValidity(p.Valid)
	if err != nil {
		return err
	}
	typ := p.Type
	if typ == "" {
		typ, _, _ = strings.Cut(p.Key, ":")
		if typ == p.Key {
			typ = ""
		}
	}
	scope, run, task := tx.inherit(p.Scope, p.RunID, p.TaskID)
	id, err := tx.registerID(p.Key)
	if err != nil {
		return err
	}
	rec := nodeRec{rev: tx.rev, createdRev: tx.rev, createdTS: tx.ts, updatedTS: tx.ts,
		valid: valid, typ: typ, scope: scope, run: run, task: task, payload: payload}
	overwrite, err := tx.supersedeNode(id, &rec)
	if err == errUnchanged {
		return nil // same type, payload and valid time: no change, no operation (SPEC §2)
	}
	if err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.n, nodeKey(id), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	kind := OpPutNode
	if valid != (validity{}) {
		kind = opPutNodeValid
	}
	tx.op(kind, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, p.Key)
		b = appendStr(b, typ)
		b = appendStr(b, string(payload))
		if kind == opPutNodeValid {
			b = valid.appendLog(b)
		}
		return b
	})
	tx.event(eventWriteOrOverwrite(overwrite), "n:"+p.Key, "node", scope, run, task, func(e *event) { e.NodeType = typ })
	return nil
}

// supersedeNode moves the current version of node id (if any, and if it was
// written by an earlier revision) to hist, and carries its creation over to
// rec when it was live. It reports whether a live version existed.
func (tx *WriteTxn) supersedeNode(id NodeID, rec *nodeRec) (bool, error) {
	k := nodeKey(id)
	cur, err := tx.txn.Get(tx.s.db.n, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, tx.fail(err)
	}
	var old nodeRec
	if err := tx.s.decodeRecord(dbNodes, k, cur, old.decodeBody); err != nil {
		return false, tx.fail(err)
	}
	if !old.tombstone() && !rec.tombstone() && old.typ == rec.typ && old.valid == rec.valid && bytes.Equal(old.payload, rec.payload) {
		return true, errUnchanged
	}
	if old.rev < tx.rev {
		if err := tx.toHist(dbNodes, histNode, k, cur, old.rev); err != nil {
			return false, err
		}
	}
	if old.tombstone() {
		return false, nil
	}
	rec.createdRev, rec.createdTS = old.createdRev, old.createdTS
	return true, nil
}

// DeleteNode tombstones a live node. Its edges stay (their endpoint becomes
// a missing node, see Check).
func (tx *WriteTxn) DeleteNode(key string) error {
	if tx.err != nil {
		return tx.err
	}
	if err := validKey("node key", key); err != nil {
		return err
	}
	id, known, err := tx.checkID(key)
	if err != nil {
		return err
	}
	if !known {
		return fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	var cur nodeRec
	found, err := tx.r.nodeAt(id, Revision(math.MaxUint64), &cur)
	if err != nil {
		return tx.fail(err)
	}
	if !found {
		return fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	scope, run, task := tx.inherit("", "", "")
	rec := nodeRec{flags: recTombstone, rev: tx.rev, updatedTS: tx.ts, typ: cur.typ,
		scope: scope, run: run, task: task}
	if _, err := tx.supersedeNode(id, &rec); err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.n, nodeKey(id), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	tx.op(OpDelNode, scope, run, task, func(b []byte) []byte { return appendStr(b, key) })
	tx.event("delete", "n:"+key, "node", scope, run, task, func(e *event) { e.NodeType = cur.typ })
	return nil
}

// relByName resolves a relation inside the write transaction (it sees
// relations this transaction added).
func (tx *WriteTxn) relByName(name string) (Relation, error) {
	return tx.r.RelationByName(name)
}

// PutEdge creates or overwrites the edge src -rel-> dst. Endpoints starting
// with "kv:" must be kv addresses. The relations the store interprets
// (SPEC.md §4): a `supersedes` edge may not close a cycle, neither it nor a
// `contradicts` edge may join an item to itself, and `contradicts` is
// registered by its first use (an add_rel operation in the same revision).
func (tx *WriteTxn) PutEdge(p EdgePut) error {
	if tx.err != nil {
		return tx.err
	}
	p.Src, p.Dst, p.Payload = tx.redact(p.Src), tx.redact(p.Dst), tx.redactPayload(p.Payload)
	if err := validEndpoint("source key", p.Src); err != nil {
		return err
	}
	if err := validEndpoint("destination key", p.Dst); err != nil {
		return err
	}
	if (p.Rel == relSupersedes || p.Rel == relContradicts) && p.Src == p.Dst {
		return fmt.Errorf("%w: an item cannot %s itself (%s)", ErrInvalid, strings.TrimSuffix(p.Rel, "s"), p.Src)
	}
	rel, err := tx.relByName(p.Rel)
	if errors.Is(err, ErrUnknownRelation) && p.Rel == relContradicts {
		if _, err = tx.AddRelation(Relation{Name: relContradicts, DefaultWeight: 1}); err == nil {
			rel, err = tx.relByName(p.Rel)
		}
	}
	if err != nil {
		return err
	}
	weight := p.Weight
	if weight == 0 {
		weight = rel.DefaultWeight
	} else if err := validWeight(weight); err != nil {
		return err
	}
	payload, err := canonicalPayload(p.Payload, false)
	if err != nil {
		return err
	}
	scope, run, task := tx.inherit(p.Scope, p.RunID, p.TaskID)
	src, err := tx.registerID(p.Src)
	if err != nil {
		return err
	}
	dst, err := tx.registerID(p.Dst)
	if err != nil {
		return err
	}
	if rel.Name == relSupersedes {
		if err := tx.checkSupersede(p.Src, src, p.Dst, dst, rel.ID); err != nil {
			return err
		}
	}
	rec := edgeRec{rev: tx.rev, createdRev: tx.rev, createdTS: tx.ts, updatedTS: tx.ts,
		weight: weight, scope: scope, run: run, task: task, payload: payload}
	if p.Weight != 0 {
		rec.flags |= recWeight
	}
	overwrite, stored := false, false
	if !tx.edgeAbsent(src, rel.ID, dst) {
		overwrite, stored, err = tx.supersedeEdge(src, rel.ID, dst, &rec)
		if err == errUnchanged {
			return nil // same weight and payload: no change (SPEC §2)
		}
		if err != nil {
			return err
		}
	}
	if err := tx.writeEdge(src, rel.ID, dst, &rec, stored); err != nil {
		return err
	}
	tx.op(OpPutEdge, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, p.Src)
		b = appendStr(b, rel.Name)
		b = appendStr(b, p.Dst)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(weight))
		return appendStr(b, string(payload))
	})
	if tx.s.opts.Telemetry != nil {
		missing := tx.missingEndpoints(p.Src, src, p.Dst, dst)
		tx.event(eventWriteOrOverwrite(overwrite), "e:"+p.Src+":"+rel.Name+":"+p.Dst, "edge", scope, run, task,
			func(e *event) { e.Rel = rel.Name; e.Weight = &weight; e.Missing = missing })
	}
	return nil
}

func (tx *WriteTxn) missingEndpoints(srcKey string, src NodeID, dstKey string, dst NodeID) []string {
	var missing []string
	var rec nodeRec
	if ok, err := tx.r.nodeAt(src, Revision(math.MaxUint64), &rec); err == nil && !ok {
		missing = append(missing, srcKey)
	}
	if ok, err := tx.r.nodeAt(dst, Revision(math.MaxUint64), &rec); err == nil && !ok && dstKey != srcKey {
		missing = append(missing, dstKey)
	}
	return missing
}

// supersedeEdge is supersedeNode for edges. The current record may be
// implicit (edgerec.go): its synthesized record is what hist keeps. stored
// reports whether the edge has an e record now.
func (tx *WriteTxn) supersedeEdge(src NodeID, rel RelID, dst NodeID, rec *edgeRec) (overwrite, stored bool, err error) {
	var old edgeRec
	cur, explicit, found, err := tx.r.currentEdge(src, rel, dst, &old)
	if err != nil {
		return false, false, tx.fail(err)
	}
	if !found {
		return false, false, nil
	}
	if !old.tombstone() && !rec.tombstone() && old.weight == rec.weight && bytes.Equal(old.payload, rec.payload) {
		return true, explicit, errUnchanged
	}
	if old.rev < tx.rev {
		k := edgeKey(src, rel, dst)
		if !explicit {
			cur = tx.record(old.appendBody)
		}
		if err := tx.toHist(dbEdges, histEdge, k, cur, old.rev); err != nil {
			return false, false, err
		}
	}
	if old.tombstone() {
		return false, explicit, nil
	}
	rec.createdRev, rec.createdTS = old.createdRev, old.createdTS
	return true, explicit, nil
}

// writeEdge writes the e record (none for an implicit one, removing the
// one stored when stored) and the out and in adjacency entries.
func (tx *WriteTxn) writeEdge(src NodeID, rel RelID, dst NodeID, rec *edgeRec, stored bool) error {
	k := edgeKey(src, rel, dst)
	if !tx.implicitEdge(rec) {
		if err := tx.txn.Put(tx.s.db.e, k, tx.record(rec.appendBody), 0); err != nil {
			return tx.fail(err)
		}
	} else if stored {
		if err := tx.txn.Del(tx.s.db.e, k, nil); err != nil {
			return tx.fail(err)
		}
	}
	entry := adjacency.Entry{Rel: uint32(rel), Rev: uint64(tx.rev), Weight: rec.weight}
	if rec.tombstone() {
		entry.Flags = adjacency.FlagTombstone
		entry.Weight = 1
	}
	entry.Peer = uint64(dst)
	if err := tx.adjAdd(&tx.outBuf, src, entry); err != nil {
		return tx.fail(err)
	}
	entry.Peer = uint64(src)
	if err := tx.adjAdd(&tx.inBuf, dst, entry); err != nil {
		return tx.fail(err)
	}
	return nil
}

// Supersede records that item newer supersedes item older (each a node
// key or a kv address): the edge newer -supersedes-> older, with the
// relation's default weight. Both must be live (ErrNotFound otherwise).
func (tx *WriteTxn) Supersede(older, newer string) error {
	if tx.err != nil {
		return tx.err
	}
	older, newer = tx.redact(older), tx.redact(newer)
	for _, key := range []string{older, newer} {
		if err := validEndpoint("key", key); err != nil {
			return err
		}
		live, err := tx.liveItem(key)
		if err != nil {
			return err
		}
		if !live {
			return fmt.Errorf("%w: %s (supersede needs two live items: nodes or kv entries)", ErrNotFound, key)
		}
	}
	return tx.PutEdge(EdgePut{Src: newer, Rel: relSupersedes, Dst: older})
}

// liveItem reports whether key names a live node or (a kv address) a live
// kv entry, including this transaction's writes.
func (tx *WriteTxn) liveItem(key string) (bool, error) {
	if scope, ns, k, ok := ParseKVAddress(key); ok {
		var rec kvRec
		found, err := tx.r.kvAt(scope, ns, k, Revision(math.MaxUint64), &rec)
		if err != nil {
			return false, tx.fail(err)
		}
		return found, nil
	}
	id, known, err := tx.checkID(key)
	if err != nil || !known {
		return false, err
	}
	var rec nodeRec
	found, err := tx.r.nodeAt(id, Revision(math.MaxUint64), &rec)
	if err != nil {
		return false, tx.fail(err)
	}
	return found, nil
}

// DeleteEdge tombstones the live edge src -rel-> dst.
func (tx *WriteTxn) DeleteEdge(src, rel, dst string) error {
	if tx.err != nil {
		return tx.err
	}
	if err := validKey("source key", src); err != nil {
		return err
	}
	if err := validKey("destination key", dst); err != nil {
		return err
	}
	r, err := tx.relByName(rel)
	if errors.Is(err, ErrUnknownRelation) && rel == relContradicts {
		return fmt.Errorf("%w: edge %s -%s-> %s (no contradicts edge was ever written)", ErrNotFound, src, rel, dst)
	}
	if err != nil {
		return err
	}
	srcID, knownSrc, err := tx.checkID(src)
	if err != nil {
		return err
	}
	dstID, knownDst, err := tx.checkID(dst)
	if err != nil {
		return err
	}
	notFound := fmt.Errorf("%w: edge %s -%s-> %s", ErrNotFound, src, rel, dst)
	if !knownSrc || !knownDst {
		return notFound
	}
	var cur edgeRec
	found, err := tx.r.edgeAt(srcID, r.ID, dstID, Revision(math.MaxUint64), &cur)
	if err != nil {
		return tx.fail(err)
	}
	if !found {
		return notFound
	}
	scope, run, task := tx.inherit("", "", "")
	rec := edgeRec{flags: recTombstone, rev: tx.rev, updatedTS: tx.ts, weight: cur.weight,
		scope: scope, run: run, task: task}
	_, stored, err := tx.supersedeEdge(srcID, r.ID, dstID, &rec)
	if err != nil {
		return err
	}
	if err := tx.writeEdge(srcID, r.ID, dstID, &rec, stored); err != nil {
		return err
	}
	tx.op(OpDelEdge, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, src)
		b = appendStr(b, r.Name)
		return appendStr(b, dst)
	})
	tx.event("delete", "e:"+src+":"+r.Name+":"+dst, "edge", scope, run, task, func(e *event) { e.Rel = r.Name })
	return nil
}

func validKVKey(scope, ns, key string) error {
	if ns == "" || key == "" {
		return fmt.Errorf("%w: kv namespace and key must not be empty", ErrInvalid)
	}
	if !utf8.ValidString(scope) || !utf8.ValidString(ns) || !utf8.ValidString(key) {
		return fmt.Errorf("%w: kv scope, namespace and key must be UTF-8", ErrInvalid)
	}
	if n := len(kvEntity(scope, ns, key)); n > maxKVKeyLen {
		return fmt.Errorf("%w: kv scope+namespace+key take %d bytes, at most %d", ErrInvalid, n, maxKVKeyLen)
	}
	return nil
}

// PutKV creates or overwrites a policy-memory entry.
func (tx *WriteTxn) PutKV(p KVPut) error {
	if tx.err != nil {
		return tx.err
	}
	p.Namespace, p.Key, p.Payload = tx.redact(p.Namespace), tx.redact(p.Key), tx.redactPayload(p.Payload)
	scope, run, task := tx.inherit(p.Scope, p.RunID, p.TaskID)
	if err := validKVKey(scope, p.Namespace, p.Key); err != nil {
		return err
	}
	payload, err := canonicalPayload(p.Payload, true)
	if err != nil {
		return err
	}
	valid, err := toValidity(p.Valid)
	if err != nil {
		return err
	}
	rec := kvRec{rev: tx.rev, ts: tx.ts, valid: valid, run: run, task: task, payload: payload}
	overwrite, err := tx.supersedeKV(scope, p.Namespace, p.Key, &rec)
	if err == errUnchanged {
		return nil // same payload and valid time: no change (SPEC §2)
	}
	if err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.kv, kvKey(scope, p.Namespace, p.Key), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	kind := OpPutKV
	if valid != (validity{}) {
		kind = opPutKVValid
	}
	tx.op(kind, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, p.Namespace)
		b = appendStr(b, p.Key)
		b = appendStr(b, string(payload))
		if kind == opPutKVValid {
			b = valid.appendLog(b)
		}
		return b
	})
	tx.event(eventWriteOrOverwrite(overwrite), "kv:"+scope+":"+p.Namespace+":"+p.Key, "kv", scope, run, task, nil)
	return nil
}

// supersedeKV moves the current version of a kv entry to hist (if an
// earlier revision wrote it) and reports whether it was live; errUnchanged
// when rec (nil for a delete) would leave the live entry as it is.
func (tx *WriteTxn) supersedeKV(scope, ns, key string, rec *kvRec) (bool, error) {
	k := kvKey(scope, ns, key)
	cur, err := tx.txn.Get(tx.s.db.kv, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, tx.fail(err)
	}
	var old kvRec
	if err := tx.s.decodeRecord(dbKV, k, cur, old.decodeBody); err != nil {
		return false, tx.fail(err)
	}
	if !old.tombstone() && rec != nil && !rec.tombstone() && old.valid == rec.valid && bytes.Equal(old.payload, rec.payload) {
		return true, errUnchanged
	}
	if old.rev < tx.rev {
		if err := tx.toHist(dbKV, histKV, kvEntity(scope, ns, key), cur, old.rev); err != nil {
			return false, err
		}
	}
	return !old.tombstone(), nil
}

// DeleteKV tombstones a live kv entry.
func (tx *WriteTxn) DeleteKV(scope, ns, key string) error {
	if tx.err != nil {
		return tx.err
	}
	scope, run, task := tx.inherit(scope, "", "")
	if err := validKVKey(scope, ns, key); err != nil {
		return err
	}
	var cur kvRec
	found, err := tx.r.kvAt(scope, ns, key, Revision(math.MaxUint64), &cur)
	if err != nil {
		return tx.fail(err)
	}
	if !found {
		return fmt.Errorf("%w: kv %s/%s/%s", ErrNotFound, scope, ns, key)
	}
	if _, err := tx.supersedeKV(scope, ns, key, nil); err != nil {
		return err
	}
	rec := kvRec{flags: recTombstone, rev: tx.rev, ts: tx.ts, run: run, task: task}
	if err := tx.txn.Put(tx.s.db.kv, kvKey(scope, ns, key), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	tx.op(OpDelKV, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, ns)
		return appendStr(b, key)
	})
	tx.event("delete", "kv:"+scope+":"+ns+":"+key, "kv", scope, run, task, nil)
	return nil
}

// AddRelation registers a new relation and returns its id (r.ID is
// ignored). DefaultWeight 0 means 1.0; the zero Role is memory. A name
// already registered is ErrInvalid.
func (tx *WriteTxn) AddRelation(r Relation) (RelID, error) {
	if tx.err != nil {
		return 0, tx.err
	}
	if err := validRelName(r.Name); err != nil {
		return 0, err
	}
	if r.DefaultWeight == 0 {
		r.DefaultWeight = 1
	}
	if err := validWeight(r.DefaultWeight); err != nil {
		return 0, err
	}
	if !r.Role.Valid() {
		return 0, fmt.Errorf("%w: relation %q: invalid role %d", ErrInvalid, r.Name, r.Role)
	}
	if _, err := tx.txn.Get(tx.s.db.relname, []byte(r.Name)); err == nil {
		return 0, fmt.Errorf("%w: relation %q already exists", ErrInvalid, r.Name)
	} else if !lmdb.IsNotFound(err) {
		return 0, tx.fail(err)
	}
	if tx.nextRel == 0 || tx.nextRel == math.MaxUint32 {
		return 0, tx.fail(&CorruptionError{dbMeta, []byte(metaNextRel), "relation ids exhausted"})
	}
	r.ID, r.CreatedRev = tx.nextRel, tx.rev
	if err := tx.txn.Put(tx.s.db.rel, relKey(r.ID), encodeRel(r), 0); err != nil {
		return 0, tx.fail(err)
	}
	if err := tx.txn.Put(tx.s.db.relname, []byte(r.Name), relNameValue(r.ID), 0); err != nil {
		return 0, tx.fail(err)
	}
	tx.nextRel++
	if err := tx.txn.Put(tx.s.db.meta, []byte(metaNextRel), u64Value(uint64(tx.nextRel)), 0); err != nil {
		return 0, tx.fail(err)
	}
	scope, run, task := tx.inherit("", "", "")
	tx.op(OpAddRel, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, r.Name)
		b = binary.BigEndian.AppendUint32(b, uint32(r.ID))
		b = append(b, encodeRel(r)[1])
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(r.DefaultWeight))
	})
	tx.event("write", "rel:"+r.Name, "relation", scope, run, task, nil)
	return r.ID, nil
}

// op appends one operation to the log record: kind, provenance, then the
// kind's fields.
func (tx *WriteTxn) op(kind OpKind, scope, run, task string, fields func([]byte) []byte) {
	b := append(tx.ops, byte(kind))
	b = appendStr(b, scope)
	b = appendStr(b, run)
	b = appendStr(b, task)
	tx.ops = fields(b)
	tx.nops++
}

// finish writes the log record, the time index and the meta counters.
func (tx *WriteTxn) finish() error {
	if err := tx.flushAdj(); err != nil {
		return err
	}
	return tx.finishLog(tx.logValue())
}

// logValue encodes the log record of the operations so far.
func (tx *WriteTxn) logValue() []byte {
	v := make([]byte, 0, 32+len(tx.ops))
	head := binary.BigEndian.AppendUint64(nil, tx.ts)
	head = appendStr(head, tx.meta.Scope)
	head = appendStr(head, tx.meta.RunID)
	head = appendStr(head, tx.meta.TaskID)
	head = binary.AppendUvarint(head, uint64(tx.nops))
	if len(tx.ops) > compressLogAbv {
		enc, _ := tx.s.zstd()
		v = append(append(v, fmtZstd), head...)
		v = binary.AppendUvarint(v, uint64(len(tx.ops)))
		v = enc.EncodeAll(tx.ops, v)
	} else {
		v = append(append(append(v, fmtPlain), head...), tx.ops...)
	}
	return sealValue(v)
}

// finishLog writes the log record v (logValue), the time index and the
// meta counters.
func (tx *WriteTxn) finishLog(v []byte) error {
	if err := tx.txn.Put(tx.s.db.log, u64be(uint64(tx.rev)), v, lmdb.Append); err != nil {
		if lmdb.IsErrno(err, lmdb.KeyExist) {
			return &CorruptionError{dbLog, u64be(uint64(tx.rev)), "log has a record beyond meta rev"}
		}
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
	return tx.txn.Put(tx.s.db.meta, []byte(metaTS), u64Value(tx.ts), 0)
}

func sameNode(k []byte, node NodeID) bool {
	return len(k) == 20 && binary.BigEndian.Uint64(k) == uint64(node)
}

// adjInsert adds one entry to node's adjacency list in dbi: it rewrites only
// the chunk the entry falls in (SPEC.md §3), compacting it inline and
// splitting it when it passes the thresholds.
func (tx *WriteTxn) adjInsert(slot **lmdb.Cursor, dbi lmdb.DBI, dbName string, node NodeID, e adjacency.Entry) error {
	// LMDB keeps a write transaction's cursors valid across its writes.
	if *slot == nil {
		c, err := tx.txn.OpenCursor(dbi)
		if err != nil {
			return err
		}
		*slot = c
	}
	cur := *slot
	probe := adjKey(node, RelID(e.Rel), NodeID(e.Peer))
	var chunkKey, val []byte
	k, v, err := cur.Get(probe, nil, lmdb.SetRange)
	switch {
	case err == nil && bytes.Equal(k, probe):
		chunkKey, val = k, v
	case err == nil || lmdb.IsNotFound(err):
		op := uint(lmdb.Prev)
		if err != nil {
			op = lmdb.Last
		}
		pk, pv, perr := cur.Get(nil, nil, op)
		switch {
		case perr == nil && sameNode(pk, node):
			chunkKey, val = pk, pv // the chunk before covers the entry
		case perr != nil && !lmdb.IsNotFound(perr):
			return perr
		case err == nil && sameNode(k, node):
			chunkKey, val = k, v // the entry goes before the node's first chunk
		}
	default:
		return err
	}
	entries := tx.scratch[:0]
	if chunkKey != nil {
		entries, err = adjacency.Decode(val, entries)
		if err != nil {
			return &CorruptionError{dbName, bytes.Clone(chunkKey), err.Error()}
		}
		chunkKey = bytes.Clone(chunkKey)
	}
	entries = adjacency.Insert(entries, e)
	if tx.horizon > 0 {
		sup, tomb := adjacency.Dead(entries)
		if len(entries) > tx.s.chunkMax || float64(sup+tomb) >= adjacency.DeadRatioThreshold*float64(len(entries)) {
			entries = adjacency.Compact(entries, uint64(tx.horizon))
		}
	}
	tx.scratch = entries
	return tx.putChunks(dbi, node, chunkKey, entries)
}

// putChunks replaces the chunk at oldKey (nil: none) with entries, split
// as splitChunks says.
func (tx *WriteTxn) putChunks(dbi lmdb.DBI, node NodeID, oldKey []byte, entries []adjacency.Entry) error {
	keep := false
	for _, part := range splitChunks(entries, tx.s.chunkMax) {
		k := adjKey(node, RelID(part[0].Rel), NodeID(part[0].Peer))
		if bytes.Equal(k, oldKey) {
			keep = true
		}
		tx.encBuf = adjacency.Encode(tx.encBuf[:0], part)
		if err := tx.txn.Put(dbi, k, tx.encBuf, 0); err != nil {
			return err
		}
	}
	if oldKey != nil && !keep {
		if err := tx.txn.Del(dbi, oldKey, nil); err != nil {
			return err
		}
	}
	return nil
}

// splitChunks cuts a node's sorted entries into chunks (SPEC.md §3): up to
// MaxChunkEntries stay one chunk; up to twice that split in halves; longer
// runs (Compact) are cut into chunks of about 3/4 of the maximum, leaving
// room to insert. Cuts fall only between edges.
func splitChunks(entries []adjacency.Entry, max int) [][]adjacency.Entry {
	var parts [][]adjacency.Entry
	for len(entries) > max {
		var p int
		if len(entries) <= 2*max {
			p = adjacency.SplitPoint(entries)
		} else {
			p = adjacency.SplitPoint(entries[:max*3/2])
		}
		if p == 0 {
			p = firstBoundary(entries)
		}
		if p == 0 {
			break // one edge with more versions than a chunk holds
		}
		parts = append(parts, entries[:p])
		entries = entries[p:]
	}
	if len(entries) > 0 {
		parts = append(parts, entries)
	}
	return parts
}

// firstBoundary is the index of the first entry of the second edge, or 0.
func firstBoundary(entries []adjacency.Entry) int {
	for i := 1; i < len(entries); i++ {
		if !entries[i].SameEdge(entries[i-1]) {
			return i
		}
	}
	return 0
}
