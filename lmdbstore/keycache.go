package lmdbstore

import (
	"sync"
	"unsafe"

	"github.com/memctl/memctl/adjacency"
)

// keyCache maps node ids to their canonical keys for ids entries known to
// be committed. An ids entry is written once and never changed or deleted,
// so a cached pair stays true for the life of the store: reads resolve
// neighbours' keys from it without an LMDB lookup, and write transactions
// skip the ids lookup for keys they find here.
//
// Keys live back to back in an append-only arena; the index maps an id to
// the key's offset and length (no pointers, so the garbage collector does
// not scan it). Strings handed out alias the arena: bytes once appended are
// never written again, and a string keeps its arena alive after the cache
// has moved on to a new one, so they are safe to keep.
//
// The index is an open-addressing table with linear probing (idTable):
// node ids are hashes of keys, so an id's low bits are already spread and
// a lookup is one probe into one cache line, where a Go map costs about
// twice as much per neighbour on a hub's in-list (BENCHMARKS.md, Peers).
//
// The cache is bounded: when an insert would pass maxCachedIDs entries or
// maxArenaBytes, it starts over empty.
type keyCache struct {
	mu    sync.RWMutex
	index idTable
	arena []byte
}

// idSlot is one slot of an idTable: x is offset << 16 | length (keys are
// at most maxNodeKeyLen < 1<<16 bytes, and never empty, so x == 0 marks a
// free slot).
type idSlot struct {
	id NodeID
	x  uint64
}

// idTable maps ids to arena positions: a power-of-two array of slots,
// at most half full, probed linearly from the id's mixed bits.
type idTable struct {
	slots []idSlot
	n     int
}

// home is the first slot probed for id.
func (t *idTable) home(id NodeID) int {
	// Ids are hashes already; the multiply guards against ids that are
	// not (tests, crafted stores) clustering in the low bits.
	return int((uint64(id) * 0x9e3779b97f4a7c15 >> 32) & uint64(len(t.slots)-1))
}

func (t *idTable) get(id NodeID) (uint64, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.x == 0 {
			return 0, false
		}
		if s.id == id {
			return s.x, true
		}
	}
}

// set adds id (not present) with position x, growing the table first when
// it would pass half full.
func (t *idTable) set(id NodeID, x uint64) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]idSlot, max(1024, 2*len(old)))
		t.n = 0
		for _, s := range old {
			if s.x != 0 {
				t.set(s.id, s.x)
			}
		}
	}
	mask := len(t.slots) - 1
	i := t.home(id)
	for t.slots[i].x != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = idSlot{id, x}
	t.n++
}

// len is the number of ids held.
func (t *idTable) len() int { return t.n }

const (
	maxCachedIDs  = 1 << 21
	maxArenaBytes = 128 << 20
)

// get returns id's cached key.
func (c *keyCache) get(id NodeID) (string, bool) {
	c.mu.RLock()
	x, ok := c.index.get(id)
	arena := c.arena
	c.mu.RUnlock()
	if !ok {
		return "", false
	}
	return arenaString(arena, x), true
}

func arenaString(arena []byte, x uint64) string {
	n := int(x & 0xffff)
	if n == 0 {
		return ""
	}
	return unsafe.String(&arena[x>>16], n)
}

// getMany fills keys[i] with the key of every es[i].Peer in the cache and
// sets hit[i]; it returns how many were missing.
func (c *keyCache) getMany(es []adjacency.Entry, keys []string, hit []bool) int {
	miss := 0
	c.mu.RLock()
	arena := c.arena
	for i := range es {
		x, ok := c.index.get(NodeID(es[i].Peer))
		hit[i] = ok
		if ok {
			keys[i] = arenaString(arena, x)
		} else {
			miss++
		}
	}
	c.mu.RUnlock()
	return miss
}

// has reports whether id is cached with key key.
func (c *keyCache) has(id NodeID, key string) bool {
	k, ok := c.get(id)
	return ok && k == key
}

// put caches id's committed key and returns the cached copy (an arena
// string, safe to keep).
func (c *keyCache) put(id NodeID, key []byte) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.putLocked(id, key)
}

func (c *keyCache) putLocked(id NodeID, key []byte) string {
	if x, ok := c.index.get(id); ok {
		return arenaString(c.arena, x)
	}
	if len(key) == 0 || len(key) >= 1<<16 {
		return string(key) // never: keys are 1 to maxNodeKeyLen bytes
	}
	if c.arena == nil || c.index.len() >= maxCachedIDs || len(c.arena)+len(key) > maxArenaBytes {
		c.index = idTable{}
		c.arena = make([]byte, 0, 64<<10)
	}
	off := len(c.arena)
	c.arena = append(c.arena, key...)
	x := uint64(off)<<16 | uint64(len(key))
	c.index.set(id, x)
	return arenaString(c.arena, x)
}

// addCommitted records the ids a committed write transaction found already
// stored (ids, keyed in keys). Ids it registered itself are left out: a
// bulk load registers many that are never written again, and caching them
// costs more than the lookups it would save.
func (c *keyCache) addCommitted(ids []NodeID, keys map[NodeID]string) {
	if len(ids) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.putLocked(id, unsafe.Slice(unsafe.StringData(keys[id]), len(keys[id])))
	}
}
