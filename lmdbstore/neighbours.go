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

// keyScratch is resolveKeys' output: a scan's own (chunkCursor), so a
// Neighbours nested in another's callback does not overwrite it, and
// KeysOf's (neighbourScratch).
type keyScratch struct {
	keys []string
	hit  []bool
}

// neighbourScratch is KeysOf's reusable state (one per pooled read
// transaction).
type neighbourScratch struct {
	ents []adjacency.Entry // the ids as entries
	keyScratch
}

// Neighbours calls fn for every live out-edge (out) or in-edge of node at
// the view, in (relation id, peer id) order, with the peer's canonical key
// and the relation's name; rel 0 means every relation. Keys and names are
// immutable strings, safe to keep. Returning false from fn stops.
//
// Keys come from the store's committed-ids cache (keycache.go) when there;
// the rest are read from ids, a chunk's worth at a time as the scan hands
// them over, and cached, so a long-lived process pays no lookup for a key
// it has seen and a fresh one pays one per distinct peer.
func (r *ReadTxn) Neighbours(out bool, node NodeID, rel RelID, at At, fn func(Neighbour) bool) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	// A node's list is sorted by relation: the name is looked up once per
	// run of equal relations, not once per neighbour.
	var name string
	var nameOf uint32
	var ferr error
	err = r.scanChunks(out, node, rel, view, func(es []adjacency.Entry, sc *keyScratch) bool {
		if ferr = r.resolveKeys(sc, es); ferr != nil {
			return false
		}
		for i := range es {
			e := &es[i]
			if e.Rel != nameOf {
				if name, ferr = r.relName(RelID(e.Rel)); ferr != nil {
					return false
				}
				nameOf = e.Rel
			}
			if !fn(Neighbour{Peer: NodeID(e.Peer), Key: sc.keys[i], Rel: RelID(e.Rel), RelName: name, Rev: Revision(e.Rev), Weight: e.Weight}) {
				return false
			}
		}
		return true
	})
	if err == nil {
		err = ferr
	}
	return err
}

// KeysOf resolves the canonical keys of ids (any id ever written as a node
// or an edge endpoint) into keys (len(keys) ≥ len(ids)), as Neighbours
// does: cached ones first, the rest from ids in one pass.
func (r *ReadTxn) KeysOf(ids []NodeID, keys []string) error {
	sc := r.scratch()
	sc.ents = sc.ents[:0]
	for _, id := range ids {
		sc.ents = append(sc.ents, adjacency.Entry{Peer: uint64(id)})
	}
	if err := r.resolveKeys(&sc.keyScratch, sc.ents); err != nil {
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

// resolveKeys fills sc.keys with the key of every peer of es.
func (r *ReadTxn) resolveKeys(sc *keyScratch, es []adjacency.Entry) error {
	n := len(es)
	if cap(sc.keys) < n {
		sc.keys = make([]string, n, n+n/4)
		sc.hit = make([]bool, n, n+n/4)
	}
	sc.keys, sc.hit = sc.keys[:n], sc.hit[:n]
	miss := r.s.ids.getMany(es, sc.keys, sc.hit)
	if miss == 0 {
		return nil
	}
	var k [8]byte
	for i := range es {
		if sc.hit[i] {
			continue
		}
		id := NodeID(es[i].Peer)
		binary.BigEndian.PutUint64(k[:], uint64(id))
		v, err := r.txn().Get(r.s.db.ids, k[:])
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
	if rel := r.s.tabledRel(id); rel != nil {
		return rel.Name, nil // without copying the whole Relation
	}
	rel, err := r.RelationByID(id)
	if err != nil {
		return "", fmt.Errorf("relation %d: %w", id, err)
	}
	return rel.Name, nil
}
