package lmdbstore

// The out and in keyspaces (SPEC.md §2, chunks §3): packed adjacency lists,
// mirror images of each other.
//
//	out key: src id u64 BE ‖ rel u32 BE ‖ dst u64 BE of the chunk's first entry
//	in key:  dst id u64 BE ‖ rel u32 BE ‖ src u64 BE of the chunk's first entry
//	value:   adjacency chunk (package adjacency; ends with its crc)
//
// Every version of an edge lies in one chunk. Inserts within a write
// transaction are buffered per node (adjbuf.go).

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// adjKey is the key of an adjacency chunk: the node, then the (rel, peer)
// of the chunk's first entry.
func adjKey(node NodeID, rel RelID, peer NodeID) []byte { return edgeKey(node, rel, peer) }

func parseAdjKey(k []byte) (node NodeID, rel RelID, peer NodeID, ok bool) {
	if len(k) != 20 {
		return 0, 0, 0, false
	}
	return NodeID(binary.BigEndian.Uint64(k)), RelID(binary.BigEndian.Uint32(k[8:])), NodeID(binary.BigEndian.Uint64(k[12:])), true
}

func sameNode(k []byte, node NodeID) bool {
	return len(k) == 20 && binary.BigEndian.Uint64(k) == uint64(node)
}

// cursor returns the adjacency cursor a scan uses: the transaction's own
// (pooled or kept in r), or a new one the scan closes when done (temp) —
// in a write transaction, and for a scan nested in another scan's
// callback, which must not move the outer scan's cursor or overwrite its
// batch.
func (r *ReadTxn) cursor(out bool) (c *chunkCursor, temp bool, err error) {
	dbi := r.s.db.in
	slot := &r.inCur
	if out {
		dbi, slot = r.s.db.out, &r.outCur
	}
	if r.inWrite {
		if err := r.w.flushAdj(); err != nil {
			return nil, false, err
		}
	} else if r.pooled != nil {
		c, err = r.pooled.cursor(out, dbi)
	} else if *slot != nil {
		c = *slot
	} else {
		c, err = openChunkCursor(r.txn(), dbi)
		*slot = c
	}
	if err != nil || (c != nil && !c.busy) {
		return c, false, err
	}
	c, err = openChunkCursor(r.txn(), dbi)
	return c, true, err
}

// scanAdj calls fn for every live entry of node's list in one adjacency
// keyspace at the view (see scanChunks).
func (r *ReadTxn) scanAdj(out bool, node NodeID, rel RelID, view Revision, fn func(EdgeRef) bool) error {
	return r.scanChunks(out, node, rel, view, func(es []adjacency.Entry, _ *keyScratch) bool {
		for i := range es {
			if !fn(edgeRef(&es[i])) {
				return false
			}
		}
		return true
	})
}

func edgeRef(e *adjacency.Entry) EdgeRef {
	return EdgeRef{Peer: NodeID(e.Peer), Rel: RelID(e.Rel), Rev: Revision(e.Rev), Weight: e.Weight}
}

// scanChunks walks node's chunks in one adjacency keyspace, a batch of
// chunks per cgo call (chunkscan.go): one seek (plus one step back when
// filtering by relation), then O(k). Each chunk is decoded whole and
// filtered to what the view sees (an edge's versions never span two
// chunks, and checkChunkStart holds the stored lists to that), and fn gets
// each chunk's visible entries of relation rel (0: all) in order, in a
// slice valid during the call, with the scan's key scratch (Neighbours).
// Returning false from fn stops.
func (r *ReadTxn) scanChunks(out bool, node NodeID, rel RelID, view Revision, fn func([]adjacency.Entry, *keyScratch) bool) error {
	dbName := dbIn
	if out {
		dbName = dbOut
	}
	cur, temp, err := r.cursor(out)
	if err != nil {
		return err
	}
	if temp {
		defer cur.close()
	} else {
		cur.busy = true
		defer func() { cur.busy = false }()
	}
	// A pooled transaction still stale from acquire (this scan is the
	// View's first read) is refreshed in the seek's cgo call.
	var refresh *pooledRead
	if p := r.pooled; p != nil && p.stale {
		if p.h.txn != 0 && !temp {
			refresh = p
		} else if err := p.live(); err != nil {
			return err
		}
	}
	err = cur.seek(node, rel, refresh)
	if refresh != nil {
		if !cur.refreshedTxn() {
			refresh.stale, refresh.renewErr = false, err
			return err
		}
		refresh.refreshedInC(cur.renewedTxn())
		if err == nil {
			cur.renew = false
		}
	}
	if err != nil {
		return err
	}
	var last adjacency.Entry
	maxRel := r.s.maxRel.Load() // ids at or below are known relations
	for {
		for i, n := 0, cur.len(); i < n; i++ {
			k, v := cur.chunk(i)
			es, err := adjacency.Decode(v, cur.entries[:0])
			cur.entries = es
			if err == nil && len(es) == 0 {
				err = errors.New("empty chunk")
			}
			if err != nil {
				return &CorruptionError{dbName, bytes.Clone(k), err.Error()}
			}
			if err := checkChunkStart(dbName, k, es[0], last); err != nil {
				return err
			}
			last = es[len(es)-1]
			past := false // the chunk runs past the relation: the last one to read
			if rel != 0 {
				lo, _ := slices.BinarySearchFunc(es, uint32(rel), func(e adjacency.Entry, rel uint32) int { return cmp.Compare(e.Rel, rel) })
				hi := lo
				for hi < len(es) && es[hi].Rel == uint32(rel) {
					hi++
				}
				es, past = es[lo:hi], hi < len(es)
			}
			if len(es) > 0 && es[len(es)-1].Rel > maxRel { // sorted: the last has the largest
				for j := range es {
					if es[j].Rel > maxRel && !r.validRel(es[j].Rel) {
						return &CorruptionError{dbName, bytes.Clone(k), fmt.Sprintf("invalid relation id %d", es[j].Rel)}
					}
				}
			}
			if es = adjacency.VisibleIn(es, uint64(view)); len(es) > 0 && !fn(es, &cur.keys) || past {
				return nil
			}
		}
		if !cur.more() {
			return nil
		}
		if err := cur.next(); err != nil {
			return err
		}
	}
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
