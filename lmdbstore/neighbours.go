package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// Neighbour is one live edge of a node as a user sees it: the adjacency
// entry with the peer's canonical key and the relation's name.
type Neighbour struct {
	Peer    NodeID // the destination of an out-edge, the source of an in-edge
	Key     string // the peer's canonical key
	Rel     RelID
	RelName string
	Rev     Revision
	Weight  float32
}

// neighbourScratch is the reusable state of Neighbours (one per pooled
// read transaction).
type neighbourScratch struct {
	refs []EdgeRef
	keys []string
	hit  []bool
}

// Neighbours calls fn for every live out-edge (out) or in-edge of node at
// the view, in (relation id, peer id) order, with the peer's canonical key
// and the relation's name; rel 0 means every relation. Keys and names are
// immutable strings, safe to keep. Returning false from fn stops.
//
// Keys come from the store's committed-ids cache (keycache.go) when there;
// the rest are read from ids in one pass after the adjacency scan and
// cached, so a long-lived process pays no lookup for a key it has seen and
// a fresh one pays one per distinct peer.
func (r *ReadTxn) Neighbours(out bool, node NodeID, rel RelID, at At, fn func(Neighbour) bool) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	sc := r.scratch()
	sc.refs = sc.refs[:0]
	if err := r.scanChunks(out, node, rel, view, func(es []adjacency.Entry) bool {
		for i := range es {
			sc.refs = append(sc.refs, edgeRef(&es[i]))
		}
		return true
	}); err != nil {
		return err
	}
	if err := r.resolveKeys(sc); err != nil {
		return err
	}
	// A node's list is sorted by relation: the name is looked up once per
	// run of equal relations, not once per neighbour.
	var name string
	for i, e := range sc.refs {
		if i == 0 || e.Rel != sc.refs[i-1].Rel {
			if name, err = r.relName(e.Rel); err != nil {
				return err
			}
		}
		if !fn(Neighbour{Peer: e.Peer, Key: sc.keys[i], Rel: e.Rel, RelName: name, Rev: e.Rev, Weight: e.Weight}) {
			return nil
		}
	}
	return nil
}

// KeysOf resolves the canonical keys of ids (any id ever written as a node
// or an edge endpoint) into keys (len(keys) ≥ len(ids)), as Neighbours
// does: cached ones first, the rest from ids in one pass.
func (r *ReadTxn) KeysOf(ids []NodeID, keys []string) error {
	sc := r.scratch()
	sc.refs = sc.refs[:0]
	for _, id := range ids {
		sc.refs = append(sc.refs, EdgeRef{Peer: id})
	}
	if err := r.resolveKeys(sc); err != nil {
		return err
	}
	copy(keys, sc.keys[:len(ids)])
	return nil
}

func (r *ReadTxn) scratch() *neighbourScratch {
	if r.pooled != nil {
		return &r.pooled.nb
	}
	if r.nb == nil {
		r.nb = &neighbourScratch{}
	}
	return r.nb
}

// resolveKeys fills sc.keys with the key of every sc.refs peer.
func (r *ReadTxn) resolveKeys(sc *neighbourScratch) error {
	n := len(sc.refs)
	if cap(sc.keys) < n {
		sc.keys = make([]string, n, n+n/4)
		sc.hit = make([]bool, n, n+n/4)
	}
	sc.keys, sc.hit = sc.keys[:n], sc.hit[:n]
	miss := r.s.ids.getMany(sc.refs, sc.keys, sc.hit)
	if miss == 0 {
		return nil
	}
	var k [8]byte
	for i := range sc.refs {
		if sc.hit[i] {
			continue
		}
		id := sc.refs[i].Peer
		binary.BigEndian.PutUint64(k[:], uint64(id))
		v, err := r.txn.Get(r.s.db.ids, k[:])
		if lmdb.IsNotFound(err) {
			return &CorruptionError{dbIDs, bytes.Clone(k[:]), "adjacency peer has no ids entry"}
		}
		if err != nil {
			return classifyLMDB(dbIDs, bytes.Clone(k[:]), err)
		}
		registered, perr := parseIDsValue(v)
		if perr != nil {
			return &CorruptionError{dbIDs, bytes.Clone(k[:]), perr.Error()}
		}
		if r.inWrite {
			sc.keys[i] = string(registered)
		} else {
			sc.keys[i] = r.s.ids.put(id, registered)
		}
	}
	return nil
}

// relName is the name of a relation id seen in adjacency.
func (r *ReadTxn) relName(id RelID) (string, error) {
	rel, err := r.RelationByID(id)
	if err != nil {
		return "", fmt.Errorf("relation %d: %w", id, err)
	}
	return rel.Name, nil
}
