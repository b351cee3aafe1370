package lmdbstore

// Implicit edge records (schema 3). Most edges are written once, with no
// payload, the relation's default weight and the transaction's provenance:
// everything their e record would say is already in their newest adjacency
// entry (revision, weight) and in the revs entry of that revision (time,
// scope, run, task). Such an edge has no e record; its record is read from
// those two places. Invariants:
//   - An edge's current version is implicit exactly when a writer of
//     schema 3 wrote it as a plain creation (tx.implicitEdge): a live put,
//     no payload, weight not given explicitly, created by that revision,
//     with the transaction's scope, run and task. Every other current
//     version (tombstones included) has an e record, as before.
//   - An e record is authoritative when present (schema-2 stores have one
//     for every edge, and they stay valid).
//   - Older versions are in hist as before: a writer that replaces an
//     implicit version copies its synthesized record there.
//   - Every version of one edge lies in one adjacency chunk (SPEC.md §3), so
//     the newest entry is found in one chunk.

import (
	"bytes"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// implicitEdge reports whether rec, about to be written by tx, is stored
// without an e record.
func (tx *WriteTxn) implicitEdge(rec *edgeRec) bool {
	return rec.flags == 0 && len(rec.payload) == 0 && rec.createdRev == tx.rev && rec.rev == tx.rev &&
		rec.scope == tx.meta.Scope && rec.run == tx.meta.RunID && rec.task == tx.meta.TaskID
}

// implicitEdgeRec is the record of an edge whose newest adjacency entry is
// e and which has no e record.
func (r *ReadTxn) implicitEdgeRec(e adjacency.Entry, rec *edgeRec) error {
	m, err := r.revMeta(Revision(e.Rev))
	if err != nil {
		return err
	}
	*rec = edgeRec{rev: Revision(e.Rev), createdRev: Revision(e.Rev), createdTS: m.ts, updatedTS: m.ts,
		weight: e.Weight, scope: m.scope, run: m.run, task: m.task}
	return nil
}

// currentEdge reads the current record of edge src -rel-> dst: its e record
// (explicit; raw is the stored value) or the implicit one. found is false
// when the edge has neither (never written, or a tombstone dropped by
// compaction).
func (r *ReadTxn) currentEdge(src NodeID, rel RelID, dst NodeID, rec *edgeRec) (raw []byte, explicit, found bool, err error) {
	k := edgeKey(src, rel, dst)
	v, err := r.txn().Get(r.s.db.e, k)
	if err == nil {
		if err := r.s.decodeRecord(dbEdges, k, v, rec.decodeBody); err != nil {
			return nil, false, false, err
		}
		return v, true, true, nil
	}
	if !lmdb.IsNotFound(err) {
		return nil, false, false, classifyLMDB(dbEdges, k, err)
	}
	e, ok, err := r.newestOutEntry(src, rel, dst)
	if err != nil || !ok || e.Tombstone() {
		return nil, false, false, err
	}
	if err := r.implicitEdgeRec(e, rec); err != nil {
		return nil, false, false, err
	}
	return nil, false, true, nil
}

// newestOutEntry returns the newest adjacency entry of the edge in src's
// out list. Inside a write transaction it reads the out buffer when that
// holds src's list and the stored chunks otherwise, without flushing.
func (r *ReadTxn) newestOutEntry(src NodeID, rel RelID, dst NodeID) (adjacency.Entry, bool, error) {
	probe := adjacency.Entry{Rel: uint32(rel), Peer: uint64(dst)}
	if r.inWrite {
		if b := &r.w.outBuf; b.active && b.node == src {
			e, ok := newestIn(b.chunkFor(probe), probe)
			return e, ok, nil
		}
	}
	var cur *lmdb.Cursor
	if r.inWrite {
		tx := r.w
		if tx.outCur == nil {
			c, err := tx.txn.OpenCursor(tx.s.db.out)
			if err != nil {
				return adjacency.Entry{}, false, err
			}
			tx.outCur = c
		}
		cur = tx.outCur
	} else {
		// A cursor of its own: a caller may be iterating with the
		// transaction's shared scan cursor.
		c, err := r.txn().OpenCursor(r.s.db.out)
		if err != nil {
			return adjacency.Entry{}, false, err
		}
		defer c.Close()
		cur = c
	}
	key := adjKey(src, rel, dst)
	k, v, err := cur.Get(key, nil, lmdb.SetRange)
	if err == nil && !bytes.Equal(k, key) || lmdb.IsNotFound(err) {
		// The covering chunk starts before the probe: the previous one.
		op := uint(lmdb.Prev)
		if err != nil {
			op = lmdb.Last
		}
		k, v, err = cur.Get(nil, nil, op)
		if err == nil && !sameNode(k, src) {
			return adjacency.Entry{}, false, nil
		}
	}
	if lmdb.IsNotFound(err) {
		return adjacency.Entry{}, false, nil
	}
	if err != nil {
		return adjacency.Entry{}, false, classifyLMDB(dbOut, key, err)
	}
	var it adjacency.Iterator
	var newest adjacency.Entry
	found := false
	for it.Reset(v); it.Next(); {
		e := it.Entry()
		if e.SameEdge(probe) {
			newest, found = e, true
		} else if probe.Less(e) {
			break
		}
	}
	if err := it.Err(); err != nil {
		return adjacency.Entry{}, false, &CorruptionError{dbOut, bytes.Clone(k), err.Error()}
	}
	return newest, found, nil
}

// chunkFor returns the buffered chunk whose range covers probe.
func (b *adjBuf) chunkFor(probe adjacency.Entry) []adjacency.Entry {
	if len(b.chunks) == 0 {
		return nil
	}
	i := 0
	for j := 1; j < len(b.chunks); j++ {
		if chunkLE(b.chunks[j].entries[0], probe) {
			i = j
		}
	}
	return b.chunks[i].entries
}

// newestIn is the newest entry of probe's edge in one chunk's entries.
func newestIn(entries []adjacency.Entry, probe adjacency.Entry) (adjacency.Entry, bool) {
	var newest adjacency.Entry
	found := false
	for _, e := range entries {
		if e.SameEdge(probe) {
			newest, found = e, true
		}
	}
	return newest, found
}
