package lmdbstore

// The ids keyspace (SPEC.md §2): node id back to its canonical key.
//
//	key:   node id u64 BE (IDOf of the key)
//	value: 01 ‖ canonical key bytes ‖ crc
//
// Entries never change; a second key with the same id is a collision that
// fails the whole transaction. Committed entries are cached (keycache.go).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/PowerDNS/lmdb-go/lmdb"
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

// KeyOf returns the canonical key registered for id (any id ever written as
// a node or an edge endpoint). An id with no ids entry is ErrNotFound,
// unless the store holds a node record or an adjacency list under it:
// every such id was registered first, so its entry was lost to damage (a
// damaged key byte in an ids page sends the lookup astray) and the error
// is a CorruptionError, never "not found".
func (r *ReadTxn) KeyOf(id NodeID) (string, error) {
	k, err := r.keyOf(id)
	if !errors.Is(err, ErrNotFound) {
		return k, err
	}
	used, uerr := r.idInUse(id)
	if uerr != nil {
		return "", uerr
	}
	if used {
		return "", &CorruptionError{dbIDs, nodeKey(id), "no ids entry for an id the store holds records under (a damaged ids page)"}
	}
	return "", err
}

// idInUse reports whether the store holds a node record or an out- or
// in-adjacency chunk under id.
func (r *ReadTxn) idInUse(id NodeID) (bool, error) {
	k := nodeKey(id)
	_, err := r.txn().Get(r.s.db.n, k)
	if err == nil {
		return true, nil
	}
	if !lmdb.IsNotFound(err) {
		return false, classifyLMDB(dbNodes, k, err)
	}
	for _, ks := range []struct {
		name string
		dbi  lmdb.DBI
	}{{dbOut, r.s.db.out}, {dbIn, r.s.db.in}} {
		cur, err := r.txn().OpenCursor(ks.dbi)
		if err != nil {
			return false, classifyLMDB(ks.name, k, err)
		}
		ck, _, err := cur.Get(k, nil, lmdb.SetRange)
		cur.Close()
		if err == nil && bytes.HasPrefix(ck, k) {
			return true, nil
		}
		if err != nil && !lmdb.IsNotFound(err) {
			return false, classifyLMDB(ks.name, k, err)
		}
	}
	return false, nil
}

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
	v, err := r.txn().Get(r.s.db.ids, k[:])
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
	existing, err := r.KeyOf(id) // an id the store uses but cannot name is corruption
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
