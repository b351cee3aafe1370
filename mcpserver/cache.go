package mcpserver

// Caches of what never changes once committed. An ids entry maps a node id
// to its key forever, a relation id keeps its name forever, and a committed
// revision keeps its commit time forever (SPEC.md §2: ids, rel, log and ts
// are never rewritten or pruned), so an entry read from any committed state
// stays true and needs no invalidation. Each map is bounded: when full it
// starts over.
//
// Fill them only from read transactions (Store.View), never from a write
// transaction's Reader: what a write transaction sees may still be rolled
// back (a relation it registered, an id it introduced).

import (
	"sync"
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

const maxCached = 1 << 16

type immutables struct {
	mu    sync.Mutex
	keys  map[lmdbstore.NodeID]string
	rels  map[lmdbstore.RelID]string
	times map[lmdbstore.Revision]time.Time
}

func (c *immutables) init() {
	c.keys = make(map[lmdbstore.NodeID]string)
	c.rels = make(map[lmdbstore.RelID]string)
	c.times = make(map[lmdbstore.Revision]time.Time)
}

// key is the canonical key of id.
func (c *immutables) key(r *lmdbstore.ReadTxn, id lmdbstore.NodeID) (string, error) {
	c.mu.Lock()
	k, ok := c.keys[id]
	c.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := r.KeyOf(id)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if len(c.keys) >= maxCached {
		clear(c.keys)
	}
	c.keys[id] = k
	c.mu.Unlock()
	return k, nil
}

// rel is the name of relation id.
func (c *immutables) rel(r *lmdbstore.ReadTxn, id lmdbstore.RelID) (string, error) {
	c.mu.Lock()
	name, ok := c.rels[id]
	c.mu.Unlock()
	if ok {
		return name, nil
	}
	rel, err := r.RelationByID(id)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if len(c.rels) >= maxCached {
		clear(c.rels)
	}
	c.rels[id] = rel.Name
	c.mu.Unlock()
	return rel.Name, nil
}

// time is the commit time of the committed revision rev.
func (c *immutables) time(r *lmdbstore.ReadTxn, rev lmdbstore.Revision) (time.Time, error) {
	c.mu.Lock()
	t, ok := c.times[rev]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := r.RevisionTime(rev)
	if err != nil {
		return time.Time{}, err
	}
	c.mu.Lock()
	if len(c.times) >= maxCached {
		clear(c.times)
	}
	c.times[rev] = t
	c.mu.Unlock()
	return t, nil
}
