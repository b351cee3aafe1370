package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
	"github.com/memctl/memctl/suggest"
)

// viewLatest is the view revision of a latest read: every committed entry
// is at or below it.
const viewLatest = Revision(math.MaxUint64)

// ReadTxn is one read transaction (also available inside a write
// transaction, where it sees the transaction's own writes).
type ReadTxn struct {
	s       *Store
	txn     *lmdb.Txn
	inWrite bool
	w       *WriteTxn // the write transaction (inWrite only): adjacency reads flush its buffers first

	metaLoaded bool
	rev        Revision // latest revision visible (in a write txn: the pending one)
	horizon    Revision
	horizon0   Revision // write txn: the stored horizon (horizon is the one it commits)
	pendingTS  uint64   // commit time of the pending revision (write txn only)

	outCur, inCur *lmdb.Cursor      // reused by scans of a read-only transaction
	pooled        *pooledRead       // the pooled transaction (nil: none); owns the scan cursors
	nb            *neighbourScratch // Neighbours' scratch when not pooled
	revMemo       revMemo           // the last revs entry read (revs.go)
}

func (r *ReadTxn) close() {
	if r.outCur != nil {
		r.outCur.Close()
	}
	if r.inCur != nil {
		r.inCur.Close()
	}
}

func (r *ReadTxn) loadMeta() error {
	if r.metaLoaded {
		return nil
	}
	rev, err := getU64(r.txn, r.s.db.meta, metaRev)
	if err != nil {
		return err
	}
	h, err := getU64(r.txn, r.s.db.meta, metaHorizon)
	if err != nil {
		return err
	}
	r.rev, r.horizon, r.metaLoaded = Revision(rev), Revision(h), true
	return nil
}

// Revision is the latest committed revision this transaction sees.
func (r *ReadTxn) Revision() Revision {
	if err := r.loadMeta(); err != nil {
		return 0
	}
	return r.rev
}

// Horizon is the oldest revision a point-in-time read may ask for (0: all).
func (r *ReadTxn) Horizon() (Revision, error) {
	if err := r.loadMeta(); err != nil {
		return 0, err
	}
	return r.horizon, nil
}

// Resolve turns a view into a concrete revision. It fails with
// ErrBeforeHorizon for a revision older than the retention horizon and
// ErrNotFound for a revision newer than the latest or a time before the
// first commit.
func (r *ReadTxn) Resolve(at At) (Revision, error) {
	if err := r.loadMeta(); err != nil {
		return 0, err
	}
	var rev Revision
	switch at.kind {
	case atLatest:
		return r.rev, nil
	case atRevision:
		rev = at.rev
		if rev > r.rev {
			return 0, fmt.Errorf("%w: revision %d (latest is %d)", ErrNotFound, rev, r.rev)
		}
	case atTime:
		var err error
		var ok bool
		rev, ok, err = r.revAtTime(at.t)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("%w: no revision committed at or before %s", ErrNotFound, at.t.UTC().Format(time.RFC3339Nano))
		}
	default:
		return 0, fmt.Errorf("%w: bad view", ErrInvalid)
	}
	if r.horizon > 0 && rev < r.horizon {
		return 0, fmt.Errorf("%w: revision %d, horizon %d", ErrBeforeHorizon, rev, r.horizon)
	}
	return rev, nil
}

// view is Resolve for internal reads: the latest view needs no lookup.
func (r *ReadTxn) view(at At) (Revision, error) {
	if at.kind == atLatest {
		return viewLatest, nil
	}
	return r.Resolve(at)
}

// revAtTime is the latest revision committed at or before t.
func (r *ReadTxn) revAtTime(t time.Time) (Revision, bool, error) {
	if t.Before(time.Unix(0, 0)) {
		return 0, false, nil
	}
	ns := t.UnixNano()
	if t.After(time.Unix(0, math.MaxInt64)) {
		ns = math.MaxInt64 // beyond int64 nanoseconds (year 2262): every commit is before
	}
	if r.inWrite && uint64(ns) >= r.pendingTS {
		return r.rev, true, nil
	}
	cur, err := r.txn.OpenCursor(r.s.db.ts)
	if err != nil {
		return 0, false, err
	}
	defer cur.Close()
	var k, v []byte
	if ns == math.MaxInt64 {
		k, v, err = cur.Get(nil, nil, lmdb.Last)
	} else {
		k, v, err = cur.Get(u64be(uint64(ns)+1), nil, lmdb.SetRange)
		if err == nil {
			k, v, err = cur.Get(nil, nil, lmdb.Prev)
		} else if lmdb.IsNotFound(err) {
			k, v, err = cur.Get(nil, nil, lmdb.Last)
		}
	}
	if lmdb.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	rev, perr := parseU64Value(v)
	if perr != nil || len(k) != 8 {
		return 0, false, &CorruptionError{dbTS, bytes.Clone(k), "bad time index entry"}
	}
	return Revision(rev), true, nil
}

// RevisionTime is the commit time of revision rev.
func (r *ReadTxn) RevisionTime(rev Revision) (time.Time, error) {
	if r.inWrite && rev == r.rev {
		return nsTime(r.pendingTS), nil
	}
	k := u64be(uint64(rev))
	v, err := r.txn.Get(r.s.db.log, k)
	if lmdb.IsNotFound(err) {
		return time.Time{}, fmt.Errorf("%w: revision %d", ErrNotFound, rev)
	}
	if err != nil {
		return time.Time{}, classifyLMDB(dbLog, k, err)
	}
	v, err = openValue(dbLog, k, v)
	if err != nil {
		return time.Time{}, err
	}
	if len(v) < 9 || (v[0] != fmtPlain && v[0] != fmtZstd) {
		return time.Time{}, &CorruptionError{dbLog, k, "bad log record header"}
	}
	return nsTime(binary.BigEndian.Uint64(v[1:9])), nil
}

// KeyOf returns the canonical key registered for id (any id ever written as
// a node or an edge endpoint).
func (r *ReadTxn) KeyOf(id NodeID) (string, error) { return r.keyOf(id) }

func (r *ReadTxn) keyOf(id NodeID) (string, error) {
	if k, ok := r.s.ids.get(id); ok {
		return k, nil
	}
	registered, err := r.lookupKey(id)
	if err != nil {
		return "", err
	}
	if r.inWrite { // the entry may be this transaction's own, not committed
		return string(registered), nil
	}
	return r.s.ids.put(id, registered), nil
}

// lookupKey reads id's ids entry (a RawRead slice, valid in the transaction).
func (r *ReadTxn) lookupKey(id NodeID) ([]byte, error) {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(id))
	v, err := r.txn.Get(r.s.db.ids, k[:])
	if lmdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: node id %016x", ErrNotFound, uint64(id))
	}
	if err != nil {
		return nil, classifyLMDB(dbIDs, bytes.Clone(k[:]), err)
	}
	registered, perr := parseIDsValue(v)
	if perr != nil {
		return nil, &CorruptionError{dbIDs, bytes.Clone(k[:]), perr.Error()}
	}
	return registered, nil
}

// idOf hashes key and checks it against the ids keyspace: known reports
// whether the key was ever written; a different key under its id is a
// collision.
func (r *ReadTxn) idOf(key string) (id NodeID, known bool, err error) {
	id = r.s.hash(key)
	existing, err := r.keyOf(id)
	if errors.Is(err, ErrNotFound) {
		return id, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if existing != key {
		return 0, false, r.s.collisionOrCorruption(id, key, existing)
	}
	return id, true, nil
}

// collisionOrCorruption tells a true collision (the registered key really
// hashes to id) from a damaged ids entry.
func (s *Store) collisionOrCorruption(id NodeID, key, existing string) error {
	if s.hash(existing) != id {
		return &CorruptionError{dbIDs, nodeKey(id), fmt.Sprintf("registered key %q does not hash to the id", existing)}
	}
	return &CollisionError{ID: id, Key: key, Existing: existing}
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

// histAt finds the newest hist version of an entity at or below view.
func (r *ReadTxn) histAt(kind byte, entity []byte, view Revision) ([]byte, []byte, bool, error) {
	cur, err := r.txn.OpenCursor(r.s.db.hist)
	if err != nil {
		return nil, nil, false, err
	}
	defer cur.Close()
	prefix := append([]byte{kind}, entity...)
	var k, v []byte
	if view == math.MaxUint64 {
		k, v, err = cur.Get(append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), nil, lmdb.SetRange)
	} else {
		k, v, err = cur.Get(histKey(kind, entity, view+1), nil, lmdb.SetRange)
	}
	switch {
	case err == nil:
		k, v, err = cur.Get(nil, nil, lmdb.Prev)
	case lmdb.IsNotFound(err):
		k, v, err = cur.Get(nil, nil, lmdb.Last)
	}
	if lmdb.IsNotFound(err) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	if len(k) != len(prefix)+8 || !bytes.HasPrefix(k, prefix) {
		return nil, nil, false, nil
	}
	return k, v, true, nil
}

// nodeAt reads the version of node id visible at view into rec. found is
// false for no version or a tombstone.
func (r *ReadTxn) nodeAt(id NodeID, view Revision, rec *nodeRec) (bool, error) {
	k := nodeKey(id)
	v, err := r.txn.Get(r.s.db.n, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, classifyLMDB(dbNodes, k, err)
	}
	return r.nodeVersionAt(k, v, view, rec)
}

func (r *ReadTxn) nodeVersionAt(k, v []byte, view Revision, rec *nodeRec) (bool, error) {
	if err := r.s.decodeRecord(dbNodes, k, v, rec.decodeBody); err != nil {
		return false, err
	}
	if rec.rev > view {
		hk, hv, ok, err := r.histAt(histNode, k, view)
		if err != nil || !ok {
			return false, err
		}
		if err := r.s.decodeRecord(dbHist, hk, hv, rec.decodeBody); err != nil {
			return false, err
		}
	}
	return !rec.tombstone(), nil
}

func (r *ReadTxn) edgeAt(src NodeID, rel RelID, dst NodeID, view Revision, rec *edgeRec) (bool, error) {
	k := edgeKey(src, rel, dst)
	_, _, found, err := r.currentEdge(src, rel, dst, rec)
	if err != nil || !found {
		return false, err
	}
	if rec.rev > view {
		hk, hv, ok, err := r.histAt(histEdge, k, view)
		if err != nil || !ok {
			return false, err
		}
		if err := r.s.decodeRecord(dbHist, hk, hv, rec.decodeBody); err != nil {
			return false, err
		}
	}
	return !rec.tombstone(), nil
}

func (r *ReadTxn) kvAt(scope, ns, key string, view Revision, rec *kvRec) (bool, error) {
	k := kvKey(scope, ns, key)
	v, err := r.txn.Get(r.s.db.kv, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, classifyLMDB(dbKV, k, err)
	}
	return r.kvVersionAt(k, v, scope, ns, key, view, rec)
}

func (r *ReadTxn) kvVersionAt(k, v []byte, scope, ns, key string, view Revision, rec *kvRec) (bool, error) {
	if err := r.s.decodeRecord(dbKV, k, v, rec.decodeBody); err != nil {
		return false, err
	}
	if rec.rev > view {
		hk, hv, ok, err := r.histAt(histKV, kvEntity(scope, ns, key), view)
		if err != nil || !ok {
			return false, err
		}
		if err := r.s.decodeRecord(dbHist, hk, hv, rec.decodeBody); err != nil {
			return false, err
		}
	}
	return !rec.tombstone(), nil
}

// Relations lists every relation in id order.
func (r *ReadTxn) Relations() ([]Relation, error) {
	cur, err := r.txn.OpenCursor(r.s.db.rel)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	var rels []Relation
	for op := uint(lmdb.First); ; op = lmdb.Next {
		k, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			return rels, nil
		}
		if err != nil {
			return nil, err
		}
		if len(k) != 4 || binary.BigEndian.Uint32(k) == 0 {
			return nil, &CorruptionError{dbRel, bytes.Clone(k), "bad relation id"}
		}
		rel, err := decodeRel(RelID(binary.BigEndian.Uint32(k)), v)
		if err == nil {
			err = r.checkRelName(rel)
		}
		if err != nil {
			return nil, &CorruptionError{dbRel, bytes.Clone(k), err.Error()}
		}
		rels = append(rels, rel)
	}
}

// RelationByName resolves a relation name; an unknown name is an
// *UnknownRelationError suggesting the nearest known name.
func (r *ReadTxn) RelationByName(name string) (Relation, error) {
	if rel, ok := r.s.cachedRel(0, name); ok {
		return rel, nil
	}
	v, err := r.txn.Get(r.s.db.relname, []byte(name))
	if lmdb.IsNotFound(err) || (err == nil && name == "") {
		return Relation{}, r.unknownRelation(name)
	}
	if err != nil {
		return Relation{}, err
	}
	id, perr := parseRelNameValue(v)
	if perr != nil {
		return Relation{}, &CorruptionError{dbRelName, []byte(name), perr.Error()}
	}
	rel, err := r.RelationByID(id)
	if errors.Is(err, ErrNotFound) {
		return Relation{}, &CorruptionError{dbRelName, []byte(name), fmt.Sprintf("names missing relation id %d", id)}
	}
	if err == nil && rel.Name != name {
		return Relation{}, &CorruptionError{dbRelName, []byte(name), fmt.Sprintf("names relation %d called %q", rel.ID, rel.Name)}
	}
	return rel, err
}

func (r *ReadTxn) unknownRelation(name string) error {
	rels, err := r.Relations()
	if err != nil {
		return err
	}
	names := make([]string, len(rels))
	for i, rel := range rels {
		names[i] = rel.Name
	}
	return &UnknownRelationError{Name: name, Suggestion: suggest.Nearest(name, names)}
}

// RelationByID resolves a relation id (ErrNotFound if unknown).
func (r *ReadTxn) RelationByID(id RelID) (Relation, error) {
	if rel, ok := r.s.cachedRel(id, ""); ok {
		return rel, nil
	}
	k := relKey(id)
	v, err := r.txn.Get(r.s.db.rel, k)
	if lmdb.IsNotFound(err) {
		return Relation{}, fmt.Errorf("%w: relation id %d", ErrNotFound, id)
	}
	if err != nil {
		return Relation{}, classifyLMDB(dbRel, k, err)
	}
	rel, err := decodeRel(id, v)
	if err == nil {
		err = r.checkRelName(rel)
	}
	if err != nil {
		return Relation{}, &CorruptionError{dbRel, k, err.Error()}
	}
	if !r.inWrite {
		r.s.cacheRel(rel) // committed: relations never change once written
	}
	return rel, nil
}

// checkRelName verifies that relname maps rel's name back to its id (the
// two keyspaces are mirror images; a damaged name fails here).
func (r *ReadTxn) checkRelName(rel Relation) error {
	v, err := r.txn.Get(r.s.db.relname, []byte(rel.Name))
	var id RelID
	if err == nil {
		id, err = parseRelNameValue(v)
	}
	if err != nil || id != rel.ID {
		return fmt.Errorf("name %q is not mapped back to id %d by relname", rel.Name, rel.ID)
	}
	return nil
}

func (s *Store) cachedRel(id RelID, name string) (Relation, bool) {
	if id != 0 {
		if t := s.relTable.Load(); t != nil && int(id) < len(*t) && (*t)[id].ID == id {
			return (*t)[id], true
		}
	}
	s.relMu.Lock()
	defer s.relMu.Unlock()
	if id != 0 {
		rel, ok := s.rels.byID[id]
		return rel, ok
	}
	rel, ok := s.rels.byName[name]
	return rel, ok
}

func (s *Store) cacheRel(rel Relation) {
	s.relMu.Lock()
	defer s.relMu.Unlock()
	if s.rels.byID == nil {
		s.rels = relCache{byID: map[RelID]Relation{}, byName: map[string]Relation{}}
	}
	s.rels.byID[rel.ID] = rel
	s.rels.byName[rel.Name] = rel
	// Readers index relTable without the lock: publish a new copy.
	var t []Relation
	if old := s.relTable.Load(); old != nil {
		t = *old
	}
	t = append(make([]Relation, 0, max(len(t), int(rel.ID)+1)), t...)
	for len(t) <= int(rel.ID) {
		t = append(t, Relation{})
	}
	t[rel.ID] = rel
	s.relTable.Store(&t)
	if uint32(rel.ID) > s.maxRel.Load() {
		s.maxRel.Store(uint32(rel.ID))
	}
}

// validRel reports whether id names a relation, consulting the store only
// for ids above the largest one seen (ids are dense and never removed).
func (r *ReadTxn) validRel(id uint32) bool {
	if id != 0 && id <= r.s.maxRel.Load() {
		return true
	}
	_, err := r.RelationByID(RelID(id))
	return err == nil && id != 0
}

// GetNode returns the node's version visible at the view.
func (r *ReadTxn) GetNode(key string, at At) (Node, error) {
	id, known, err := r.idOf(key)
	if err != nil {
		return Node{}, err
	}
	n, err := r.getNode(id, key, known, at)
	found := err == nil
	r.emitRead("read", "n:"+key, "node", n.Rev, func(e *event) {
		e.Found = &found
		e.NodeType = n.Type
		if !at.IsLatest() {
			e.AtRev = uint64(r.resolvedOrZero(at))
		}
	})
	return n, err
}

func (r *ReadTxn) resolvedOrZero(at At) Revision {
	rev, _ := r.Resolve(at)
	return rev
}

func (r *ReadTxn) getNode(id NodeID, key string, known bool, at At) (Node, error) {
	view, err := r.view(at)
	if err != nil {
		return Node{}, err
	}
	if !known {
		return Node{}, fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	var rec nodeRec
	ok, err := r.nodeAt(id, view, &rec)
	if err != nil {
		return Node{}, err
	}
	if !ok {
		return Node{}, fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	return rec.node(id, key), nil
}

// GetNodeByID is GetNode by id.
func (r *ReadTxn) GetNodeByID(id NodeID, at At) (Node, error) {
	key, err := r.keyOf(id)
	if errors.Is(err, ErrNotFound) {
		if _, verr := r.view(at); verr != nil {
			return Node{}, verr
		}
		return Node{}, err
	}
	if err != nil {
		return Node{}, err
	}
	return r.getNode(id, key, true, at)
}

// seenRev is the revision a read at view saw (for telemetry).
func (r *ReadTxn) seenRev(view Revision) Revision {
	if view == viewLatest {
		return r.Revision()
	}
	return view
}

// ScanNodes calls fn for every live node at the view, in ascending NodeID order.
func (r *ReadTxn) ScanNodes(at At, fn func(Node) error) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	cur, err := r.txn.OpenCursor(r.s.db.n)
	if err != nil {
		return err
	}
	defer cur.Close()
	for op := uint(lmdb.First); ; op = lmdb.Next {
		k, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(k) != 8 {
			return &CorruptionError{dbNodes, bytes.Clone(k), "key is not 8 bytes"}
		}
		var rec nodeRec
		ok, err := r.nodeVersionAt(k, v, view, &rec)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		id := NodeID(binary.BigEndian.Uint64(k))
		key, err := r.keyOf(id)
		if errors.Is(err, ErrNotFound) {
			return &CorruptionError{dbNodes, bytes.Clone(k), "node has no ids entry"}
		}
		if err != nil {
			return err
		}
		if err := fn(rec.node(id, key)); err != nil {
			return err
		}
	}
}

func (r *ReadTxn) cursor(out bool) (*lmdb.Cursor, func(), error) {
	dbi := r.s.db.in
	slot := &r.inCur
	if out {
		dbi, slot = r.s.db.out, &r.outCur
	}
	if r.inWrite {
		if err := r.w.flushAdj(); err != nil {
			return nil, nil, err
		}
		c, err := r.txn.OpenCursor(dbi)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	if r.pooled != nil {
		c, err := r.pooled.cursor(out, dbi)
		return c, func() {}, err
	}
	if *slot == nil {
		c, err := r.txn.OpenCursor(dbi)
		if err != nil {
			return nil, nil, err
		}
		*slot = c
	}
	return *slot, func() {}, nil
}

// scanAdj walks node's chunks in one adjacency keyspace: one SetRange to
// locate (plus one Prev when filtering by relation), then O(k).
func (r *ReadTxn) scanAdj(out bool, node NodeID, rel RelID, view Revision, fn func(EdgeRef) bool) error {
	dbName := dbIn
	if out {
		dbName = dbOut
	}
	cur, done, err := r.cursor(out)
	if err != nil {
		return err
	}
	defer done()
	var start [20]byte
	binary.BigEndian.PutUint64(start[:], uint64(node))
	binary.BigEndian.PutUint32(start[8:], uint32(rel))
	k, v, err := cur.Get(start[:], nil, lmdb.SetRange)
	if err != nil && !lmdb.IsNotFound(err) {
		return err
	}
	if rel != 0 && !(err == nil && bytes.Equal(k, start[:])) {
		// The chunk before may hold the relation's first entries.
		op := uint(lmdb.Prev)
		if err != nil {
			op = lmdb.Last
		}
		pk, pv, perr := cur.Get(nil, nil, op)
		switch {
		case perr == nil && sameNode(pk, node):
			k, v, err = pk, pv, nil
		case perr == nil || lmdb.IsNotFound(perr):
			k, v, err = cur.Get(start[:], nil, lmdb.SetRange)
			if err != nil && !lmdb.IsNotFound(err) {
				return err
			}
		default:
			return perr
		}
	}
	if lmdb.IsNotFound(err) {
		return nil
	}
	vis := adjacency.Visible{View: uint64(view)}
	var it adjacency.Iterator
	emit := func(e adjacency.Entry) bool {
		return fn(EdgeRef{Peer: NodeID(e.Peer), Rel: RelID(e.Rel), Rev: Revision(e.Rev), Weight: e.Weight})
	}
	var last adjacency.Entry
	maxRel := r.s.maxRel.Load() // ids at or below are known relations
	for sameNode(k, node) {
		it.Reset(v)
		if !it.Next() {
			msg := "empty chunk"
			if err := it.Err(); err != nil {
				msg = err.Error()
			}
			return &CorruptionError{dbName, bytes.Clone(k), msg}
		}
		e := it.Entry()
		if err := checkChunkStart(dbName, k, e, last); err != nil {
			return err
		}
		for {
			if rel == 0 || e.Rel == uint32(rel) {
				if e.Rel > maxRel && !r.validRel(e.Rel) {
					return &CorruptionError{dbName, bytes.Clone(k), fmt.Sprintf("invalid relation id %d", e.Rel)}
				}
				if got, ok := vis.Push(e); ok && !emit(got) {
					return nil
				}
			} else if e.Rel > uint32(rel) {
				goto flush
			}
			if !it.Next() {
				break
			}
			e = it.Entry()
		}
		if err := it.Err(); err != nil {
			return &CorruptionError{dbName, bytes.Clone(k), err.Error()}
		}
		last = e
		k, v, err = cur.Get(nil, nil, lmdb.Next)
		if lmdb.IsNotFound(err) {
			break
		}
		if err != nil {
			return err
		}
	}
flush:
	if got, ok := vis.Flush(); ok {
		emit(got)
	}
	return nil
}

// checkChunkStart verifies a chunk's first entry against the chunk's key and
// against the last entry of the node's previous chunk (zero if none): a
// damaged peer or relation there is caught before it is returned.
func checkChunkStart(dbName string, k []byte, first, prevLast adjacency.Entry) error {
	_, rel, peer, _ := parseAdjKey(k)
	if first.Rel != uint32(rel) || first.Peer != uint64(peer) {
		return &CorruptionError{dbName, bytes.Clone(k), "first entry does not match the chunk key"}
	}
	if prevLast.Rel != 0 && (!prevLast.Less(first) || prevLast.SameEdge(first)) {
		return &CorruptionError{dbName, bytes.Clone(k), "chunk out of order with the previous chunk"}
	}
	return nil
}

// ScanOut calls fn for every live out-edge of src at the view, in (rel,
// dst) order, without allocating per entry. rel 0 means every relation.
// Returning false from fn stops the scan.
func (r *ReadTxn) ScanOut(src NodeID, rel RelID, at At, fn func(EdgeRef) bool) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	return r.scanAdj(true, src, rel, view, fn)
}

// ScanIn is ScanOut over in-edges (EdgeRef.Peer is the source).
func (r *ReadTxn) ScanIn(dst NodeID, rel RelID, at At, fn func(EdgeRef) bool) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	return r.scanAdj(false, dst, rel, view, fn)
}

// ScanEdges calls fn for every live edge at the view in (src, rel, dst) order.
func (r *ReadTxn) ScanEdges(at At, fn func(Edge) error) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	if r.inWrite {
		if err := r.w.flushAdj(); err != nil {
			return err
		}
	}
	cur, err := r.txn.OpenCursor(r.s.db.out)
	if err != nil {
		return err
	}
	defer cur.Close()
	vis := adjacency.Visible{View: uint64(view)}
	var it adjacency.Iterator
	var node NodeID
	var last adjacency.Entry
	emit := func(e adjacency.Entry) error {
		return fn(Edge{Src: node, Rel: RelID(e.Rel), Dst: NodeID(e.Peer), Rev: Revision(e.Rev), Weight: e.Weight})
	}
	for op := uint(lmdb.First); ; op = lmdb.Next {
		k, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			break
		}
		if err != nil {
			return err
		}
		n, _, _, ok := parseAdjKey(k)
		if !ok {
			return &CorruptionError{dbOut, bytes.Clone(k), "key is not 20 bytes"}
		}
		if n != node {
			if got, ok := vis.Flush(); ok {
				if err := emit(got); err != nil {
					return err
				}
			}
			node = n
			last = adjacency.Entry{}
		}
		it.Reset(v)
		first := true
		for it.Next() {
			e := it.Entry()
			if first {
				if err := checkChunkStart(dbOut, k, e, last); err != nil {
					return err
				}
				first = false
			}
			last = e
			if !r.validRel(e.Rel) {
				return &CorruptionError{dbOut, bytes.Clone(k), fmt.Sprintf("invalid relation id %d", e.Rel)}
			}
			if got, ok := vis.Push(e); ok {
				if err := emit(got); err != nil {
					return err
				}
			}
		}
		if err := it.Err(); err != nil {
			return &CorruptionError{dbOut, bytes.Clone(k), err.Error()}
		}
	}
	if got, ok := vis.Flush(); ok {
		return emit(got)
	}
	return nil
}

func (r *ReadTxn) relFilter(rel string) (RelID, error) {
	if rel == "" {
		return 0, nil
	}
	x, err := r.RelationByName(rel)
	return x.ID, err
}

// GetOut and GetIn are the allocating conveniences over ScanOut/ScanIn,
// taking canonical keys and a relation name ("" = all relations).
func (r *ReadTxn) GetOut(src, rel string, at At) ([]Edge, error) {
	return r.getAdj(true, src, rel, at)
}

func (r *ReadTxn) GetIn(dst, rel string, at At) ([]Edge, error) {
	return r.getAdj(false, dst, rel, at)
}

func (r *ReadTxn) getAdj(out bool, key, rel string, at At) ([]Edge, error) {
	relID, err := r.relFilter(rel)
	if err != nil {
		return nil, err
	}
	id, known, err := r.idOf(key)
	if err != nil {
		return nil, err
	}
	view, err := r.view(at)
	if err != nil {
		return nil, err
	}
	var edges []Edge
	if known {
		err = r.scanAdj(out, id, relID, view, func(e EdgeRef) bool {
			if out {
				edges = append(edges, Edge{Src: id, Dst: e.Peer, Rel: e.Rel, Rev: e.Rev, Weight: e.Weight})
			} else {
				edges = append(edges, Edge{Src: e.Peer, Dst: id, Rel: e.Rel, Rev: e.Rev, Weight: e.Weight})
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	query := "get_in"
	if out {
		query = "get_out"
	}
	n := len(edges)
	r.emitRead("query", "n:"+key, "edge", 0, func(e *event) {
		e.Rev = uint64(r.seenRev(view))
		e.Query, e.Rel, e.Results = query, rel, &n
		if !at.IsLatest() {
			e.AtRev = uint64(view)
		}
	})
	return edges, nil
}

// GetEdge returns the e: record of the live edge at the view.
func (r *ReadTxn) GetEdge(src, rel, dst string, at At) (EdgeRecord, error) {
	x, err := r.RelationByName(rel)
	if err != nil {
		return EdgeRecord{}, err
	}
	srcID, knownSrc, err := r.idOf(src)
	if err != nil {
		return EdgeRecord{}, err
	}
	dstID, knownDst, err := r.idOf(dst)
	if err != nil {
		return EdgeRecord{}, err
	}
	view, err := r.view(at)
	if err != nil {
		return EdgeRecord{}, err
	}
	var rec edgeRec
	found := false
	if knownSrc && knownDst {
		found, err = r.edgeAt(srcID, x.ID, dstID, view, &rec)
		if err != nil {
			return EdgeRecord{}, err
		}
	}
	r.emitRead("read", "e:"+src+":"+rel+":"+dst, "edge", rec.rev, func(e *event) { e.Found = &found; e.Rel = rel })
	if !found {
		return EdgeRecord{}, fmt.Errorf("%w: edge %s -%s-> %s", ErrNotFound, src, rel, dst)
	}
	return EdgeRecord{
		Edge:    Edge{Src: srcID, Dst: dstID, Rel: x.ID, Rev: rec.rev, Weight: rec.weight},
		Payload: clonePayload(rec.payload), Scope: rec.scope, RunID: rec.run, TaskID: rec.task,
		CreatedTS: nsTime(rec.createdTS), UpdatedTS: nsTime(rec.updatedTS), CreatedRev: rec.createdRev,
	}, nil
}

// GetKV returns the kv entry's version visible at the view.
func (r *ReadTxn) GetKV(scope, ns, key string, at At) (KV, error) {
	view, err := r.view(at)
	if err != nil {
		return KV{}, err
	}
	var rec kvRec
	found := false
	if validKVKey(scope, ns, key) == nil {
		found, err = r.kvAt(scope, ns, key, view, &rec)
		if err != nil {
			return KV{}, err
		}
	}
	r.emitRead("read", "kv:"+scope+":"+ns+":"+key, "kv", rec.rev, func(e *event) { e.Found = &found })
	if !found {
		return KV{}, fmt.Errorf("%w: kv %s/%s/%s", ErrNotFound, scope, ns, key)
	}
	return rec.kv(scope, ns, key), nil
}

func (rec *kvRec) kv(scope, ns, key string) KV {
	return KV{Scope: scope, Namespace: ns, Key: key, Payload: clonePayload(rec.payload),
		RunID: rec.run, TaskID: rec.task, TS: nsTime(rec.ts), Rev: rec.rev, Valid: rec.valid.api()}
}

// ListKV returns the live entries of scope/ns at the view, ordered by key.
func (r *ReadTxn) ListKV(scope, ns string, at At) ([]KV, error) {
	view, err := r.view(at)
	if err != nil {
		return nil, err
	}
	cur, err := r.txn.OpenCursor(r.s.db.kv)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	prefix := kvPrefix(scope, ns)
	var out []KV
	k, v, err := cur.Get(prefix, nil, lmdb.SetRange)
	for ; err == nil && bytes.HasPrefix(k, prefix); k, v, err = cur.Get(nil, nil, lmdb.Next) {
		key := string(k[len(prefix):])
		var rec kvRec
		ok, err := r.kvVersionAt(k, v, scope, ns, key, view, &rec)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, rec.kv(scope, ns, key))
		}
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return nil, classifyLMDB(dbKV, nil, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	n := len(out)
	r.emitRead("query", "kv:"+scope+":"+ns, "kv", 0, func(e *event) {
		e.Query, e.Results, e.Rev = "list_kv", &n, uint64(r.seenRev(view))
	})
	return out, nil
}

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
	cur, err := r.txn.OpenCursor(r.s.db.log)
	if err != nil {
		return err
	}
	defer cur.Close()
	count := 0
	k, v, err := cur.Get(u64be(first), nil, lmdb.SetRange)
	for ; err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
		rec, derr := r.s.decodeLog(k, v)
		if derr != nil {
			return derr
		}
		for _, op := range rec.ops {
			if f.RunID != "" && op.RunID != f.RunID || f.TaskID != "" && op.TaskID != f.TaskID {
				continue
			}
			count++
			if err := fn(op); err != nil {
				return err
			}
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
	rev             Revision
	ts              uint64
	scope, run, tsk string
	ops             []Op
}

func (s *Store) decodeLog(k, v []byte) (logRecord, error) {
	bad := func(msg string) error { return &CorruptionError{dbLog, bytes.Clone(k), msg} }
	if len(k) != 8 {
		return logRecord{}, bad("key is not 8 bytes")
	}
	v, err := unsealValue(v)
	if err != nil {
		return logRecord{}, bad(err.Error())
	}
	if len(v) < 9 || (v[0] != fmtPlain && v[0] != fmtZstd) {
		return logRecord{}, bad("bad header")
	}
	rec := logRecord{rev: Revision(binary.BigEndian.Uint64(k)), ts: binary.BigEndian.Uint64(v[1:9])}
	d := decoder{b: v, off: 9}
	rec.scope, rec.run, rec.tsk = d.str(), d.str(), d.str()
	nops := d.uvarint()
	if d.err != nil {
		return logRecord{}, bad(d.err.Error())
	}
	opsBytes := v[d.off:]
	if v[0] == fmtZstd {
		n, w := binary.Uvarint(opsBytes)
		if w <= 0 || n > 1<<30 {
			return logRecord{}, bad("bad compressed length")
		}
		body, err := s.unzstd(opsBytes[w:], n)
		if err != nil {
			return logRecord{}, bad(fmt.Sprintf("bad compressed ops: %v", err))
		}
		opsBytes = body
	}
	if nops > uint64(len(opsBytes)) {
		return logRecord{}, bad("op count exceeds value")
	}
	od := decoder{b: opsBytes}
	ts := nsTime(rec.ts)
	// Every op takes at least minOpBytes (kind byte and three string
	// lengths), so this bounds what a damaged count can make us allocate.
	const minOpBytes = 4
	rec.ops = make([]Op, 0, min(nops, uint64(len(opsBytes)/minOpBytes)))
	scope, run, task := rec.scope, rec.run, rec.tsk // the previous op's, shared when equal
	for range nops {
		op := Op{Rev: rec.rev, TS: ts, Kind: OpKind(od.u8())}
		scope, run, task = od.strLike(scope), od.strLike(run), od.strLike(task)
		op.Scope, op.RunID, op.TaskID = scope, run, task
		switch op.Kind {
		case OpPutNode, opPutNodeValid:
			op.NodeKey, op.NodeType = od.str(), od.str()
			op.Payload = nilIfEmpty(od.bytes())
			if op.Kind == opPutNodeValid {
				op.Kind, op.Valid = OpPutNode, decodeLogValidity(&od).api()
			}
		case OpDelNode:
			op.NodeKey = od.str()
		case OpPutEdge:
			op.Src, op.Rel, op.Dst = od.str(), od.str(), od.str()
			op.Weight = od.f32()
			op.Payload = nilIfEmpty(od.bytes())
		case OpDelEdge:
			op.Src, op.Rel, op.Dst = od.str(), od.str(), od.str()
		case OpPutKV, opPutKVValid:
			op.Namespace, op.Key = od.str(), od.str()
			op.Payload = nilIfEmpty(od.bytes())
			if op.Kind == opPutKVValid {
				op.Kind, op.Valid = OpPutKV, decodeLogValidity(&od).api()
			}
		case OpDelKV:
			op.Namespace, op.Key = od.str(), od.str()
		case OpAddRel:
			op.Rel = od.str()
			od.u32be()
			od.u8()
			op.Weight = od.f32()
		default:
			return logRecord{}, bad(fmt.Sprintf("unknown op kind %d", op.Kind))
		}
		if od.err != nil {
			return logRecord{}, bad(od.err.Error())
		}
		rec.ops = append(rec.ops, op)
	}
	od.end()
	if od.err != nil {
		return logRecord{}, bad(od.err.Error())
	}
	return rec, nil
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}
