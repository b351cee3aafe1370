package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// CompactStats reports what a compaction did.
type CompactStats struct {
	ChunksBefore, ChunksAfter   int
	EntriesBefore, EntriesAfter int
	// HistDropped counts the history versions and the tombstoned n/e/kv
	// records at or below the horizon that were removed.
	HistDropped int
}

// SetRetention keeps the last n revisions readable (0: keep all history).
// From the next commit or Compact on, the horizon is latest-n+1; history
// already dropped never comes back.
func (s *Store) SetRetention(n uint64) error {
	_, err := s.update(func(txn *lmdb.Txn) error {
		return txn.Put(s.db.meta, []byte(metaRetain), u64Value(n), 0)
	})
	return err
}

// Compact merges and prunes every adjacency list (and history older than
// the horizon), as one write transaction that commits no revision.
func (s *Store) Compact() (CompactStats, error) {
	var st CompactStats
	_, err := s.update(func(txn *lmdb.Txn) error {
		st = CompactStats{}
		rev, err := getU64(txn, s.db.meta, metaRev)
		if err != nil {
			return err
		}
		retain, err := getU64(txn, s.db.meta, metaRetain)
		if err != nil {
			return err
		}
		horizon, err := getU64(txn, s.db.meta, metaHorizon)
		if err != nil {
			return err
		}
		if retain > 0 && rev >= retain && rev-retain+1 > horizon {
			horizon = rev - retain + 1
			if err := txn.Put(s.db.meta, []byte(metaHorizon), u64Value(horizon), 0); err != nil {
				return err
			}
		}
		if err := s.compactAdj(txn, s.db.out, dbOut, Revision(horizon), &st); err != nil {
			return err
		}
		if err := s.compactAdj(txn, s.db.in, dbIn, Revision(horizon), &st); err != nil {
			return err
		}
		if horizon == 0 {
			return nil
		}
		if err := s.pruneHist(txn, Revision(horizon), &st); err != nil {
			return err
		}
		return s.dropTombstones(txn, Revision(horizon), &st)
	})
	return st, err
}

// compactAdj rewrites, node by node, every adjacency list that loses
// entries to the horizon or whose chunks can be packed into fewer.
func (s *Store) compactAdj(txn *lmdb.Txn, dbi lmdb.DBI, dbName string, horizon Revision, st *CompactStats) error {
	cur, err := txn.OpenCursor(dbi)
	if err != nil {
		return err
	}
	defer cur.Close()
	var entries []adjacency.Entry
	var keys [][]byte
	k, v, err := cur.Get(nil, nil, lmdb.First)
	for err == nil {
		node, _, _, ok := parseAdjKey(k)
		if !ok {
			return &CorruptionError{dbName, bytes.Clone(k), "key is not 20 bytes"}
		}
		entries, keys = entries[:0], keys[:0]
		for err == nil && sameNode(k, node) {
			keys = append(keys, bytes.Clone(k))
			var derr error
			entries, derr = adjacency.Decode(v, entries)
			if derr != nil {
				return &CorruptionError{dbName, bytes.Clone(k), derr.Error()}
			}
			k, v, err = cur.Get(nil, nil, lmdb.Next)
		}
		if err != nil && !lmdb.IsNotFound(err) {
			return err
		}
		before := len(entries)
		st.ChunksBefore += len(keys)
		st.EntriesBefore += before
		entries = adjacency.Compact(entries, uint64(horizon))
		parts := splitChunks(entries, s.chunkMax)
		st.ChunksAfter += len(parts)
		st.EntriesAfter += len(entries)
		if len(entries) == before && len(parts) == len(keys) {
			continue
		}
		for _, key := range keys {
			if err := txn.Del(dbi, key, nil); err != nil {
				return err
			}
		}
		for _, part := range parts {
			if err := txn.Put(dbi, adjKey(node, RelID(part[0].Rel), NodeID(part[0].Peer)), adjacency.Encode(nil, part), 0); err != nil {
				return err
			}
		}
		if uint64(node) == math.MaxUint64 {
			break
		}
		k, v, err = cur.Get(adjKey(node+1, 0, 0), nil, lmdb.SetRange)
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return err
	}
	return nil
}

// latestRecordKey maps a hist entity to its key in n, e or kv.
func (s *Store) latestRecordKey(kind byte, entity []byte) (lmdb.DBI, []byte, bool) {
	switch kind {
	case histNode:
		return s.db.n, entity, len(entity) == 8
	case histEdge:
		return s.db.e, entity, len(entity) == 20
	case histKV:
		d := decoder{b: entity}
		scope, ns, key := d.str(), d.str(), d.str()
		d.end()
		return s.db.kv, kvKey(scope, ns, key), d.err == nil
	}
	return 0, nil, false
}

// latestRev is the revision of the current record of a hist entity (key
// in dbi, from latestRecordKey); found is false when it has none. An
// edge's current record may be implicit (edgerec.go).
func (s *Store) latestRev(txn *lmdb.Txn, kind byte, dbi lmdb.DBI, key []byte) (Revision, bool, error) {
	v, err := txn.Get(dbi, key)
	if err == nil {
		rev, _, err := s.recordRev(dbHist, key, v)
		return rev, err == nil, err
	}
	if !lmdb.IsNotFound(err) {
		return 0, false, err
	}
	if kind != histEdge {
		return 0, false, nil
	}
	r := &ReadTxn{s: s, lt: txn}
	defer r.close()
	e, ok, err := r.newestOutEntry(NodeID(binary.BigEndian.Uint64(key)), RelID(binary.BigEndian.Uint32(key[8:])),
		NodeID(binary.BigEndian.Uint64(key[12:])))
	if err != nil || !ok || e.Tombstone() {
		return 0, false, err
	}
	return Revision(e.Rev), true, nil
}

// recordRev reads the revision of a record value (every record body starts
// with flags, then the revision as uvarint).
func (s *Store) recordRev(dbName string, k, v []byte) (Revision, bool, error) {
	body, err := s.decodeEnvelope(dbName, k, v)
	if err != nil {
		return 0, false, err
	}
	if len(body) < 2 {
		return 0, false, &CorruptionError{dbName, bytes.Clone(k), "record too short"}
	}
	rev, n := binary.Uvarint(body[1:])
	if n <= 0 {
		return 0, false, &CorruptionError{dbName, bytes.Clone(k), "bad revision"}
	}
	return Revision(rev), body[0]&recTombstone != 0, nil
}

// pruneHist drops every hist version that no view at or after the horizon
// can read: those whose next version has a revision <= horizon.
func (s *Store) pruneHist(txn *lmdb.Txn, horizon Revision, st *CompactStats) error {
	cur, err := txn.OpenCursor(s.db.hist)
	if err != nil {
		return err
	}
	defer cur.Close()
	var drop [][]byte
	var prevKey []byte
	var prevEntity []byte
	// decide settles the previous entry given the revision of the version
	// that followed it.
	decide := func(nextRev Revision) {
		if prevKey != nil && nextRev <= horizon {
			drop = append(drop, prevKey)
		}
	}
	latestRev := func(kind byte, entity []byte) (Revision, error) {
		dbi, key, ok := s.latestRecordKey(kind, entity)
		if !ok {
			return 0, &CorruptionError{dbHist, bytes.Clone(prevKey), "bad entity"}
		}
		rev, _, err := s.latestRev(txn, kind, dbi, key)
		return rev, err // 0 for an orphan: Check reports it; keep it
	}
	k, _, err := cur.Get(nil, nil, lmdb.First)
	for ; err == nil; k, _, err = cur.Get(nil, nil, lmdb.Next) {
		if len(k) < 10 {
			return &CorruptionError{dbHist, bytes.Clone(k), "key too short"}
		}
		entity := k[1 : len(k)-8]
		rev := Revision(binary.BigEndian.Uint64(k[len(k)-8:]))
		if prevKey != nil && prevKey[0] == k[0] && bytes.Equal(prevEntity, entity) {
			decide(rev)
		} else if prevKey != nil {
			lr, err := latestRev(prevKey[0], prevEntity)
			if err != nil {
				return err
			}
			if lr > 0 {
				decide(lr)
			}
		}
		prevKey = bytes.Clone(k)
		prevEntity = prevKey[1 : len(prevKey)-8]
	}
	if !lmdb.IsNotFound(err) {
		return err
	}
	if prevKey != nil {
		lr, err := latestRev(prevKey[0], prevEntity)
		if err != nil {
			return err
		}
		if lr > 0 {
			decide(lr)
		}
	}
	for _, key := range drop {
		if err := txn.Del(s.db.hist, key, nil); err != nil {
			return err
		}
	}
	st.HistDropped += len(drop)
	return nil
}

// dropTombstones removes tombstoned n, e and kv records at or below the
// horizon (their history is gone after pruneHist, and no readable view
// sees them).
func (s *Store) dropTombstones(txn *lmdb.Txn, horizon Revision, st *CompactStats) error {
	for _, x := range []struct {
		name string
		dbi  lmdb.DBI
	}{{dbNodes, s.db.n}, {dbEdges, s.db.e}, {dbKV, s.db.kv}} {
		var drop [][]byte
		cur, err := txn.OpenCursor(x.dbi)
		if err != nil {
			return err
		}
		k, v, err := cur.Get(nil, nil, lmdb.First)
		for ; err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
			rev, tomb, rerr := s.recordRev(x.name, k, v)
			if rerr != nil {
				cur.Close()
				return rerr
			}
			if tomb && rev <= horizon {
				drop = append(drop, bytes.Clone(k))
			}
		}
		cur.Close()
		if !lmdb.IsNotFound(err) {
			return err
		}
		for _, key := range drop {
			if err := txn.Del(x.dbi, key, nil); err != nil {
				return err
			}
		}
		st.HistDropped += len(drop)
	}
	return nil
}
