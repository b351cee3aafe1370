package lmdbstore

// History reads for `memctl context` (SPEC.md §11): every stored version of
// one entity, every adjacency entry of one node (superseded versions and
// tombstones included), every live kv entry of the store, and the headers
// of log records newest first. They read the keyspaces as they are (no new
// format); what compaction dropped (hist versions and adjacency entries
// below the horizon) is simply not there. Like the other scans they emit no
// telemetry.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// Version is one stored version of a node, edge or kv entry, as the
// operation that wrote it left it: a put, or a delete (Deleted) whose
// record is a tombstone.
type Version struct {
	Rev     Revision
	TS      time.Time // commit time of Rev
	Deleted bool
	Scope   string // nodes and edges
	RunID   string
	TaskID  string
	Type    string  // nodes
	Weight  float32 // edges: the effective weight (0 for a delete)
	Payload json.RawMessage
}

// versions calls fn for the hist versions of an entity (oldest first),
// then for its current record. cur is a cursor on hist (nil: one is opened
// for the call).
func (r *ReadTxn) versions(cur *lmdb.Cursor, kind byte, entity []byte, dbi lmdb.DBI, dbName string, key []byte,
	decode func(body []byte) (Version, error), fn func(Version) error) error {
	if cur == nil {
		c, err := r.txn().OpenCursor(r.s.db.hist)
		if err != nil {
			return err
		}
		defer c.Close()
		cur = c
	}
	prefix := append([]byte{kind}, entity...)
	k, v, err := cur.Get(histKey(kind, entity, 0), nil, lmdb.SetRange)
	for ; err == nil && len(k) == len(prefix)+8 && bytes.HasPrefix(k, prefix); k, v, err = cur.Get(nil, nil, lmdb.Next) {
		var ver Version
		if derr := r.s.decodeRecord(dbHist, k, v, func(body []byte) (e error) { ver, e = decode(body); return e }); derr != nil {
			return derr
		}
		if ferr := fn(ver); ferr != nil {
			return ferr
		}
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return classifyLMDB(dbHist, prefix, err)
	}
	if kind == histEdge {
		// The current record may be implicit (edgerec.go).
		var rec edgeRec
		_, _, found, err := r.currentEdge(NodeID(binary.BigEndian.Uint64(key)), RelID(binary.BigEndian.Uint32(key[8:])),
			NodeID(binary.BigEndian.Uint64(key[12:])), &rec)
		if err != nil || !found {
			return err
		}
		return fn(rec.version())
	}
	v, err = r.txn().Get(dbi, key)
	if lmdb.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return classifyLMDB(dbName, key, err)
	}
	var ver Version
	if err := r.s.decodeRecord(dbName, key, v, func(body []byte) (e error) { ver, e = decode(body); return e }); err != nil {
		return err
	}
	return fn(ver)
}

func decodeNodeVersion(body []byte) (Version, error) {
	var rec nodeRec
	if err := rec.decodeBody(body); err != nil {
		return Version{}, err
	}
	return Version{Rev: rec.rev, TS: nsTime(rec.updatedTS), Deleted: rec.tombstone(), Scope: rec.scope,
		RunID: rec.run, TaskID: rec.task, Type: rec.typ, Payload: clonePayload(rec.payload)}, nil
}

func decodeEdgeVersion(body []byte) (Version, error) {
	var rec edgeRec
	if err := rec.decodeBody(body); err != nil {
		return Version{}, err
	}
	return rec.version(), nil
}

func (rec *edgeRec) version() Version {
	w := rec.weight
	if rec.tombstone() {
		w = 0
	}
	return Version{Rev: rec.rev, TS: nsTime(rec.updatedTS), Deleted: rec.tombstone(), Scope: rec.scope,
		RunID: rec.run, TaskID: rec.task, Weight: w, Payload: clonePayload(rec.payload)}
}

// NodeVersions calls fn for every stored version of node key, oldest
// first (hist versions, then the current record). A key never written has
// none. Returning an error from fn stops the walk with that error.
func (r *ReadTxn) NodeVersions(key string, fn func(Version) error) error {
	return r.nodeVersions(nil, key, fn)
}

func (r *ReadTxn) nodeVersions(cur *lmdb.Cursor, key string, fn func(Version) error) error {
	id, known, err := r.idOf(key)
	if err != nil || !known {
		return err
	}
	k := nodeKey(id)
	return r.versions(cur, histNode, k, r.s.db.n, dbNodes, k, decodeNodeVersion, fn)
}

// EdgeVersions calls fn for every stored version of the edge src -rel->
// dst, oldest first.
func (r *ReadTxn) EdgeVersions(src NodeID, rel RelID, dst NodeID, fn func(Version) error) error {
	k := edgeKey(src, rel, dst)
	return r.versions(nil, histEdge, k, r.s.db.e, dbEdges, k, decodeEdgeVersion, fn)
}

// KVVersions calls fn for every stored version of kv entry scope/ns/key,
// oldest first.
func (r *ReadTxn) KVVersions(scope, ns, key string, fn func(Version) error) error {
	return r.kvVersions(nil, scope, ns, key, fn)
}

func (r *ReadTxn) kvVersions(cur *lmdb.Cursor, scope, ns, key string, fn func(Version) error) error {
	if validKVKey(scope, ns, key) != nil {
		return nil // such an entry cannot have been written
	}
	return r.versions(cur, histKV, kvEntity(scope, ns, key), r.s.db.kv, dbKV, kvKey(scope, ns, key), func(body []byte) (Version, error) {
		var rec kvRec
		if err := rec.decodeBody(body); err != nil {
			return Version{}, err
		}
		return Version{Rev: rec.rev, TS: nsTime(rec.ts), Deleted: rec.tombstone(), Scope: scope,
			RunID: rec.run, TaskID: rec.task, Payload: clonePayload(rec.payload)}, nil
	}, fn)
}

// VersionReader reads many entities' versions through one hist cursor:
// a pack reads hundreds. Close it before the transaction ends.
type VersionReader struct {
	r   *ReadTxn
	cur *lmdb.Cursor
}

// Versions opens a VersionReader.
func (r *ReadTxn) Versions() (*VersionReader, error) {
	cur, err := r.txn().OpenCursor(r.s.db.hist)
	if err != nil {
		return nil, err
	}
	return &VersionReader{r: r, cur: cur}, nil
}

// Close releases the cursor.
func (vr *VersionReader) Close() { vr.cur.Close() }

// Node is ReadTxn.NodeVersions.
func (vr *VersionReader) Node(key string, fn func(Version) error) error {
	return vr.r.nodeVersions(vr.cur, key, fn)
}

// KV is ReadTxn.KVVersions.
func (vr *VersionReader) KV(scope, ns, key string, fn func(Version) error) error {
	return vr.r.kvVersions(vr.cur, scope, ns, key, fn)
}

// EdgeAt returns the version of edge src -rel-> dst written by revision
// rev (the revisions of an edge's versions are those of its adjacency
// entries, ScanAdjHistory): the current record when it is that version,
// else one exact hist lookup. ok is false when no such version is stored.
func (vr *VersionReader) EdgeAt(src NodeID, rel RelID, dst NodeID, rev Revision) (Version, bool, error) {
	r := vr.r
	k := edgeKey(src, rel, dst)
	var rec edgeRec
	_, _, found, err := r.currentEdge(src, rel, dst, &rec)
	if err != nil {
		return Version{}, false, err
	}
	if found && rec.rev == rev {
		return rec.version(), true, nil
	}
	var ver Version
	hk := histKey(histEdge, k, rev)
	v, err := r.txn().Get(r.s.db.hist, hk)
	if lmdb.IsNotFound(err) {
		return Version{}, false, nil
	}
	if err != nil {
		return Version{}, false, classifyLMDB(dbHist, hk, err)
	}
	if err := r.s.decodeRecord(dbHist, hk, v, func(body []byte) (e error) { ver, e = decodeEdgeVersion(body); return e }); err != nil {
		return Version{}, false, err
	}
	return ver, true, nil
}

// CommitTime is the commit time of revision rev; for the latest revision
// it is read from meta (no log record is opened).
func (r *ReadTxn) CommitTime(rev Revision) (time.Time, error) {
	if err := r.loadMeta(); err != nil {
		return time.Time{}, err
	}
	if rev == r.rev && rev > 0 && !r.inWrite {
		ts, err := getU64(r.txn(), r.s.db.meta, metaTS)
		if err != nil {
			return time.Time{}, err
		}
		return nsTime(ts), nil
	}
	return r.RevisionTime(rev)
}

// AdjEntry is one stored adjacency entry: one version of one edge as seen
// from one end.
type AdjEntry struct {
	Peer    NodeID // dst in an out-list, src in an in-list
	Rel     RelID
	Rev     Revision
	Deleted bool
	Weight  float32
}

// ScanAdjHistory calls fn for every stored entry of node's out-list (out)
// or in-list, every version of every edge, tombstones included, in (rel,
// peer, rev) order; rel 0 means every relation. Returning false stops the
// scan.
func (r *ReadTxn) ScanAdjHistory(out bool, node NodeID, rel RelID, fn func(AdjEntry) bool) error {
	dbName, dbi := dbIn, r.s.db.in
	if out {
		dbName, dbi = dbOut, r.s.db.out
	}
	cur, err := r.txn().OpenCursor(dbi)
	if err != nil {
		return err
	}
	defer cur.Close()
	var start [20]byte
	binary.BigEndian.PutUint64(start[:], uint64(node))
	// The chunk holding rel's first entries may start with an earlier
	// relation: begin at the node's first chunk and skip.
	k, v, err := cur.Get(start[:12], nil, lmdb.SetRange)
	var it adjacency.Iterator
	var last adjacency.Entry
	maxRel := r.s.maxRel.Load() // ids at or below are known relations
	for ; err == nil && sameNode(k, node); k, v, err = cur.Get(nil, nil, lmdb.Next) {
		it.Reset(v)
		first := true
		for it.Next() {
			e := it.Entry()
			if first {
				if cerr := checkChunkStart(dbName, k, e, last); cerr != nil {
					return cerr
				}
				first = false
			}
			last = e
			if e.Rel > maxRel && !r.validRel(e.Rel) {
				return &CorruptionError{dbName, bytes.Clone(k), "invalid relation id"}
			}
			if rel != 0 && e.Rel != uint32(rel) {
				if e.Rel > uint32(rel) {
					return nil
				}
				continue
			}
			if !fn(AdjEntry{Peer: NodeID(e.Peer), Rel: RelID(e.Rel), Rev: Revision(e.Rev), Deleted: e.Tombstone(), Weight: e.Weight}) {
				return nil
			}
		}
		if ierr := it.Err(); ierr != nil || first {
			msg := "empty chunk"
			if ierr != nil {
				msg = ierr.Error()
			}
			return &CorruptionError{dbName, bytes.Clone(k), msg}
		}
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return classifyLMDB(dbName, start[:8], err)
	}
	return nil
}

// ScanKV calls fn for every live kv entry at the view, in key order (scope,
// namespace, key as stored). Returning an error stops the scan with it.
func (r *ReadTxn) ScanKV(at At, fn func(KV) error) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	cur, err := r.txn().OpenCursor(r.s.db.kv)
	if err != nil {
		return err
	}
	defer cur.Close()
	k, v, err := cur.Get(nil, nil, lmdb.First)
	for ; err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
		scope, ns, key, perr := parseKVKey(k)
		if perr != nil {
			return &CorruptionError{dbKV, bytes.Clone(k), "bad key: " + perr.Error()}
		}
		var rec kvRec
		ok, verr := r.kvVersionAt(k, v, scope, ns, key, view, &rec)
		if verr != nil {
			return verr
		}
		if ok {
			if ferr := fn(rec.kv(scope, ns, key)); ferr != nil {
				return ferr
			}
		}
	}
	if !lmdb.IsNotFound(err) {
		return classifyLMDB(dbKV, nil, err)
	}
	return nil
}

// LogHeader is the transaction-level part of one log record: its revision,
// commit time, WriteMeta and operation count. Operations inherit the
// transaction's scope, run and task unless they set their own.
type LogHeader struct {
	Rev    Revision
	TS     time.Time
	Scope  string
	RunID  string
	TaskID string
	Ops    int
}

// LogHeaders calls fn for the log records of revisions from down to 1,
// newest first, reading only their headers (a large record's operations
// are not decompressed). from beyond the latest revision starts at the
// latest. Returning false stops the walk.
func (r *ReadTxn) LogHeaders(from Revision, fn func(LogHeader) bool) error {
	if err := r.loadMeta(); err != nil {
		return err
	}
	from = min(from, r.rev)
	if from == 0 {
		return nil
	}
	cur, err := r.txn().OpenCursor(r.s.db.log)
	if err != nil {
		return err
	}
	defer cur.Close()
	k, v, err := cur.Get(u64be(uint64(from)), nil, lmdb.SetKey)
	for ; err == nil; k, v, err = cur.Get(nil, nil, lmdb.Prev) {
		bad := func(msg string) error { return &CorruptionError{dbLog, bytes.Clone(k), msg} }
		if len(k) != 8 {
			return bad("key is not 8 bytes")
		}
		body, oerr := openValue(dbLog, k, v)
		if oerr != nil {
			return oerr
		}
		if len(body) < 9 || !logFormat(body[0]) {
			return bad("bad header")
		}
		h := LogHeader{Rev: Revision(binary.BigEndian.Uint64(k)), TS: nsTime(binary.BigEndian.Uint64(body[1:9]))}
		d := decoder{b: body, off: 9}
		h.Scope, h.RunID, h.TaskID = d.str(), d.str(), d.str()
		n := d.uvarint()
		if d.err != nil || n > uint64(len(body)) && body[0] == fmtPlain {
			return bad("bad header")
		}
		h.Ops = int(min(n, 1<<40))
		if !fn(h) {
			return nil
		}
	}
	if !lmdb.IsNotFound(err) {
		return classifyLMDB(dbLog, nil, err)
	}
	return nil
}

// RevisionOps calls fn for the operations of revision rev, in order.
func (r *ReadTxn) RevisionOps(rev Revision, fn func(Op) error) error {
	k := u64be(uint64(rev))
	v, err := r.txn().Get(r.s.db.log, k)
	if lmdb.IsNotFound(err) {
		return fmt.Errorf("%w: revision %d", ErrNotFound, rev)
	}
	if err != nil {
		return classifyLMDB(dbLog, k, err)
	}
	_, err = r.s.scanLog(k, v, func(op Op, _ byte) error { return fn(op) })
	return err
}
