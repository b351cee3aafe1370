package lmdbstore

import (
	"bytes"
	"slices"
	"sort"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// adjBuf is a write transaction's write-back buffer for one node's
// adjacency list in one direction. A bulk load writes a source's out-edges
// one after another; instead of rewriting the same chunk once per edge,
// the node's chunks are held decoded in memory while consecutive inserts
// go to the same node, and written once when another node is touched,
// before any adjacency read inside the transaction, and before commit.
//
// Invariants:
//   - The buffer applies exactly the steps adjInsert would (same covering
//     chunk, same Insert, same inline compaction, same splits), so the
//     chunks it writes are byte-identical to the unbuffered path's.
//   - While active, chunks is the node's whole adjacency list in this
//     direction, in key order, and the store's chunks for the node are the
//     ones named by stored (unchanged until flush).
//   - A node is loaded only on its second consecutive insert (the first
//     goes through adjInsert) and only if it has at most maxBufChunks
//     chunks, so scattered inserts and hub lists cost nothing extra.
type adjBuf struct {
	out     bool
	node    NodeID
	active  bool
	last    NodeID // node of the previous unbuffered insert
	hasLast bool
	chunks  []bufChunk
	stored  [][]byte // keys of the node's chunks in the store when loaded
}

type bufChunk struct {
	entries []adjacency.Entry
	dirty   bool
}

// maxBufChunks bounds the chunks a buffered node may have.
const maxBufChunks = 4

func (b *adjBuf) dbi(tx *WriteTxn) (lmdb.DBI, string, **lmdb.Cursor) {
	if b.out {
		return tx.s.db.out, dbOut, &tx.outCur
	}
	return tx.s.db.in, dbIn, &tx.inCur
}

// add inserts e into node's adjacency list, buffered when node is the node
// of the previous insert.
func (tx *WriteTxn) adjAdd(b *adjBuf, node NodeID, e adjacency.Entry) error {
	if b.active && b.node == node {
		b.apply(tx, e)
		return nil
	}
	if err := tx.flushAdjBuf(b); err != nil {
		return err
	}
	if b.hasLast && b.last == node && !tx.s.adjDirect {
		ok, err := tx.loadAdjBuf(b, node)
		if err != nil {
			return err
		}
		if ok {
			b.apply(tx, e)
			return nil
		}
	}
	dbi, dbName, slot := b.dbi(tx)
	b.last, b.hasLast = node, true
	return tx.adjInsert(slot, dbi, dbName, node, e)
}

// loadAdjBuf reads node's chunks into b; ok is false (b unchanged) if the
// node has more than maxBufChunks chunks.
func (tx *WriteTxn) loadAdjBuf(b *adjBuf, node NodeID) (ok bool, err error) {
	dbi, dbName, slot := b.dbi(tx)
	if *slot == nil {
		c, err := tx.txn.OpenCursor(dbi)
		if err != nil {
			return false, err
		}
		*slot = c
	}
	cur := *slot
	b.chunks, b.stored = b.chunks[:0], b.stored[:0]
	k, v, err := cur.Get(adjKey(node, 0, 0), nil, lmdb.SetRange)
	for ; err == nil && sameNode(k, node); k, v, err = cur.Get(nil, nil, lmdb.Next) {
		if len(b.chunks) == maxBufChunks {
			return false, nil
		}
		entries, derr := adjacency.Decode(v, nil)
		if derr != nil {
			return false, &CorruptionError{dbName, bytes.Clone(k), derr.Error()}
		}
		b.chunks = append(b.chunks, bufChunk{entries: entries})
		b.stored = append(b.stored, bytes.Clone(k))
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return false, err
	}
	b.node, b.active = node, true
	return true, nil
}

// chunkLE reports whether the chunk starting with first has a key at or
// below the key of an entry e (keys order by relation, then peer).
func chunkLE(first, e adjacency.Entry) bool {
	return first.Rel < e.Rel || first.Rel == e.Rel && first.Peer <= e.Peer
}

// apply is adjInsert on the buffered chunks.
func (b *adjBuf) apply(tx *WriteTxn, e adjacency.Entry) {
	// The covering chunk: the last one whose key is at or below the
	// entry's, else the first (the entry goes before it), else a new one.
	i := 0
	for j := 1; j < len(b.chunks); j++ {
		if chunkLE(b.chunks[j].entries[0], e) {
			i = j
		}
	}
	if len(b.chunks) == 0 {
		b.chunks = append(b.chunks, bufChunk{})
	}
	entries := adjacency.Insert(b.chunks[i].entries, e)
	if tx.horizon > 0 {
		sup, tomb := adjacency.Dead(entries)
		if len(entries) > tx.s.chunkMax || float64(sup+tomb) >= adjacency.DeadRatioThreshold*float64(len(entries)) {
			entries = adjacency.Compact(entries, uint64(tx.horizon))
		}
	}
	parts := splitChunks(entries, tx.s.chunkMax)
	repl := make([]bufChunk, len(parts))
	for p, part := range parts {
		repl[p] = bufChunk{entries: slices.Clip(part), dirty: true}
	}
	b.chunks = slices.Replace(b.chunks, i, i+1, repl...)
}

// flushAdjBuf writes the buffered node's changed chunks and deletes the
// stored chunks whose key no longer starts one.
func (tx *WriteTxn) flushAdjBuf(b *adjBuf) error {
	if !b.active {
		return nil
	}
	b.active = false
	b.hasLast = false
	dbi, _, _ := b.dbi(tx)
	keys := make([][]byte, 0, len(b.chunks))
	for _, c := range b.chunks {
		k := adjKey(b.node, RelID(c.entries[0].Rel), NodeID(c.entries[0].Peer))
		keys = append(keys, k)
		if !c.dirty {
			continue
		}
		tx.encBuf = adjacency.Encode(tx.encBuf[:0], c.entries)
		if err := tx.txn.Put(dbi, k, tx.encBuf, 0); err != nil {
			return err
		}
	}
	for _, old := range b.stored {
		if !slices.ContainsFunc(keys, func(k []byte) bool { return bytes.Equal(k, old) }) {
			if err := tx.txn.Del(dbi, old, nil); err != nil {
				return err
			}
		}
	}
	b.chunks, b.stored = b.chunks[:0], b.stored[:0]
	return nil
}

// flushAdj writes both directions' buffers (before an adjacency read in
// the transaction and before commit). Errors are sticky.
func (tx *WriteTxn) flushAdj() error {
	for _, b := range []*adjBuf{&tx.outBuf, &tx.inBuf} {
		if err := tx.flushAdjBuf(b); err != nil {
			return tx.fail(err)
		}
	}
	return nil
}

// edgeAbsent reports whether the edge src -rel-> dst is known never to have
// been written: the out buffer holds src's whole list and has no entry for
// it, and no horizon was ever set (with horizon 0 adjacency lists keep
// every version of every edge, so an edge with an e record has an entry).
// false means "unknown".
func (tx *WriteTxn) edgeAbsent(src NodeID, rel RelID, dst NodeID) bool {
	b := &tx.outBuf
	if !b.active || b.node != src || tx.horizon != 0 || tx.r.horizon0 != 0 || tx.s.adjDirect {
		return false
	}
	probe := adjacency.Entry{Rel: uint32(rel), Peer: uint64(dst)}
	entries := b.chunkFor(probe)
	k := sort.Search(len(entries), func(k int) bool { return !entries[k].Less(probe) })
	return k == len(entries) || entries[k].Rel != probe.Rel || entries[k].Peer != probe.Peer
}
