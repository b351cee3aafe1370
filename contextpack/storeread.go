package contextpack

// Small reads over the store's raw scans: they emit no telemetry (a pack
// makes hundreds of reads; it reports itself as one query) and allocate
// little.

import (
	"errors"

	"github.com/memctl/memctl/lmdbstore"
)

func isNotFound(err error) bool { return errors.Is(err, lmdbstore.ErrNotFound) }

// nodeID is the id of key when the store ever registered it (as a node or
// an edge endpoint); a different key under its id is a collision error.
func nodeID(r *lmdbstore.ReadTxn, key string) (lmdbstore.NodeID, bool, error) {
	id := lmdbstore.IDOf(key)
	k, err := r.KeyOf(id)
	if isNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if k != key {
		return 0, false, &lmdbstore.CollisionError{ID: id, Key: key, Existing: k}
	}
	return id, true, nil
}

// relID resolves a relation name; ok is false when the store has none by
// that name.
func relID(r *lmdbstore.ReadTxn, name string) (lmdbstore.RelID, bool, error) {
	rel, err := r.RelationByName(name)
	if errors.Is(err, lmdbstore.ErrUnknownRelation) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return rel.ID, true, nil
}

// liveNode reads node key at the view; ok is false when it is not live.
func liveNode(r *lmdbstore.ReadTxn, key string, at lmdbstore.At) (lmdbstore.Node, bool, error) {
	id, known, err := nodeID(r, key)
	if err != nil || !known {
		return lmdbstore.Node{}, false, err
	}
	n, err := r.GetNodeByID(id, at)
	if isNotFound(err) {
		return lmdbstore.Node{}, false, nil
	}
	if err != nil {
		return lmdbstore.Node{}, false, err
	}
	return n, true, nil
}

// edgesOf returns the live edges of key in one direction through relation
// rel (peers as ids, with the revision that wrote each).
func edgesOf(r *lmdbstore.ReadTxn, key string, rel string, out bool, at lmdbstore.At) ([]lmdbstore.EdgeRef, error) {
	id, known, err := nodeID(r, key)
	if err != nil || !known {
		return nil, err
	}
	rid, ok, err := relID(r, rel)
	if err != nil || !ok {
		return nil, err
	}
	var es []lmdbstore.EdgeRef
	collect := func(e lmdbstore.EdgeRef) bool { es = append(es, e); return true }
	if out {
		err = r.ScanOut(id, rid, at, collect)
	} else {
		err = r.ScanIn(id, rid, at, collect)
	}
	return es, err
}
