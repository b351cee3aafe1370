package lmdbstore

// A bulk load's node keys, interned: each distinct key as given is
// redacted, validated as an edge endpoint and hashed once, however many
// operations name it (a load names each node key about 16 times as an
// endpoint). Operations hold a key's index; at Commit the keys are ordered
// by id, collisions found, and every index mapped to its rank (the key's
// position among the load's distinct ids), which is all the fast path
// sorts and groups by. A caller feeding the load from several goroutines
// (batch --bulk) prepares keys against a read-only copy of the table
// (KeyView): looked up there, or redacted, off the load's goroutine.

import (
	"maps"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// KeyRef names a node key registered with Bulk.Key.
type KeyRef uint32

// bulkKeys is the key table of one Bulk. Its per-key lists (the keys'
// references, in keys, and their first uses) spill as the load's other
// lists do, and its index past a million keys (bulkKeyIndex).
type bulkKeys struct {
	idx  bulkKeyIndex // key as given → index
	keys keyArena     // redacted key, by index
	// first is, by index, the operation that first named the key (an
	// error's position), notUsed if none.
	first chunked[uint32]
	// secretsOf holds the number of secrets redacted in a key, counted
	// again at each use (as WriteTxn counts), of the keys that held one
	// (few), by index.
	secretsOf map[uint32]int32
	// rawOf holds the key as given of the keys whose redacted form
	// differs (few: those holding a secret), by index.
	rawOf map[uint32]string
	// redactedSome: some key's redacted form differs from the key as
	// given (else the redacted keys are as distinct as the given ones).
	redactedSome bool
	reads        int // lookups and adds (tick)
	// unindexed: the index was dropped (dropIndex) and not built again.
	unindexed bool
	spillDir  string // where the lists and the index spill (spillTo)
}

// spillTo makes the keys, their lists and the index spill to unnamed
// files in dir.
func (k *bulkKeys) spillTo(dir string) {
	k.spillDir = dir
	k.keys.spillTo(dir, keysResident)
	k.first.spillTo(dir, firstResident)
	k.idx.spillTo(dir)
}

// firstResident is how many chunks of first uses (65,536 keys each, 256
// KiB) a load keeps in the process's memory before it spills them.
const firstResident = 8

// notUsed: no operation names the key (it is not stored).
const notUsed = ^uint32(0)

// lookup is the index of the key as given, if registered. Every
// keyEvictReads lookups and adds it takes the spilled keys' pages out of
// the process's memory (keyArena.evict): a load's lookups read keys at
// random.
func (k *bulkKeys) lookup(raw string) (uint32, bool) {
	k.tick()
	k.index()
	return k.idx.find(raw, k.rawAt)
}

// dropIndex lets the collector take the index (a large load's is 14 to
// 21 bytes a key): Commit looks no key up. An operation added after a
// Commit that failed finds it built again (index).
func (k *bulkKeys) dropIndex() {
	k.idx.release()
	k.unindexed = true
}

// index builds the index again from the keys, if it was dropped.
func (k *bulkKeys) index() {
	if !k.unindexed {
		return
	}
	k.unindexed = false
	if k.spillDir != "" {
		k.idx.spillTo(k.spillDir)
	}
	k.idx.grow(k.len())
	for i := range uint32(k.len()) {
		if i%keyEvictReads == 0 {
			k.keys.evict()
		}
		k.idx.insert(k.rawAt(i), i)
	}
}

// tick counts a lookup or an add, evicting the spilled keys' pages every
// keyEvictReads.
func (k *bulkKeys) tick() {
	if k.reads++; k.reads%keyEvictReads == 0 {
		k.keys.evict()
		k.first.evict()
	}
}

// keyEvictReads is how many key lookups and adds a load makes between
// evictions of its spilled keys' pages: the pages they read stay under
// 64 MiB however many keys spill (a lookup reads about one key, an add
// none), and far under in practice (most lookups are of recent keys).
const keyEvictReads = 16384

// rawAt is key i as given.
func (k *bulkKeys) rawAt(i uint32) string { return rawAt(&k.keys, k.rawOf, i) }

// at is key i (redacted).
func (k *bulkKeys) at(i uint32) string { return k.keys.at(i) }

// len is the number of keys.
func (k *bulkKeys) len() int { return k.keys.len() }

// rawAt is key i as given, of keys and their rawOf.
func rawAt(keys *keyArena, rawOf map[uint32]string, i uint32) string {
	if rawOf != nil {
		if raw, ok := rawOf[i]; ok {
			return raw
		}
	}
	return keys.at(i)
}

// add registers a key as given with its redacted form and the number of
// secrets that replaced.
func (k *bulkKeys) add(raw, red string, n int) uint32 {
	// Copies (into the arena, and of a key as given that redaction
	// changed): the caller's strings may be views of a larger buffer (a
	// chunk of batch input) that the load must not keep alive.
	k.tick()
	k.index()
	i := k.keys.add(red)
	if red != raw {
		k.redactedSome = true
		if k.rawOf == nil {
			k.rawOf = make(map[uint32]string)
		}
		k.rawOf[i] = strings.Clone(raw)
	}
	k.first.add(notUsed)
	if n != 0 {
		if k.secretsOf == nil {
			k.secretsOf = make(map[uint32]int32)
		}
		k.secretsOf[i] = int32(n)
	}
	k.idx.insert(raw, i)
	return i
}

// grow makes room for n more keys.
func (k *bulkKeys) grow(n int) {
	k.index()
	k.idx.grow(k.len() + n)
}

// use records that operation op names key i.
func (k *bulkKeys) use(i uint32, op int) {
	if f := k.first.at(int(i)); *f == notUsed {
		*f = uint32(op)
	}
}

// firstUse is the operation that first named key i, notUsed if none.
func (k *bulkKeys) firstUse(i uint32) uint32 { return *k.first.at(int(i)) }

// secrets is how many secrets the redaction of key i replaced.
func (k *bulkKeys) secrets(i uint32) int { return int(k.secretsOf[i]) } // a nil map reads 0

// KeyView is the keys a Bulk had registered when the view was taken
// (Bulk.KeyView), for preparing operations on other goroutines: it is
// never written, so Prepare is safe for concurrent use.
type KeyView struct {
	b     *Bulk
	idx   bulkKeyIndex      // a copy of b.keys.idx
	keys  keyArena          // b.keys.keys as they were (keyArena.view)
	rawOf map[uint32]string // a copy of b.keys.rawOf
	red   redaction         // b's Redactor; its memo and count unused
}

// find is raw's index when the view holds it.
func (v *KeyView) find(raw string) (uint32, bool) {
	return v.idx.find(raw, func(i uint32) string { return rawAt(&v.keys, v.rawOf, i) })
}

// PreparedKey is a node key as KeyView.Prepare left it: its index when
// the view held it, else its redacted form. The zero value (with only
// raw) is a key not prepared; a key prepared by another load's view counts
// as not prepared.
type PreparedKey struct {
	raw   string
	b     *Bulk // the load whose view prepared it
	found bool  // the view held it: ref is its index
	ref   uint32
	red   string // else: raw redacted, and how many secrets that replaced
	n     int
}

// Prepare is raw as an operation of the view's load will name it: its
// reference when the view holds it, else raw redacted (what the load
// would do on its own goroutine). Safe for concurrent use.
func (v *KeyView) Prepare(raw string) PreparedKey {
	if i, ok := v.find(raw); ok {
		return PreparedKey{raw: raw, b: v.b, found: true, ref: i}
	}
	red, n := v.red.scan(raw)
	return PreparedKey{raw: raw, b: v.b, red: red, n: n}
}

// Find is raw's reference when the view holds it, else raw not prepared
// (the load looks it up, and redacts it if new, itself). Safe for
// concurrent use.
func (v *KeyView) Find(raw string) PreparedKey {
	if i, ok := v.find(raw); ok {
		return PreparedKey{raw: raw, b: v.b, found: true, ref: i}
	}
	return PreparedKey{raw: raw}
}

// Prepared is the key registered as ref (Key, Keys) prepared, so that
// PutNodePrepared of that key looks nothing up; a ref out of range is a key
// not prepared.
func (b *Bulk) Prepared(ref KeyRef, raw string) PreparedKey {
	if int(ref) >= b.keys.len() {
		return PreparedKey{raw: raw}
	}
	return PreparedKey{raw: raw, b: b, found: true, ref: uint32(ref)}
}

// Found reports whether the view held the key (else it was redacted).
func (k PreparedKey) Found() bool { return k.found }

// redacted is k's redacted form and secret count: as prepared, else
// scanned now.
func (b *Bulk) redacted(k PreparedKey) (string, int) {
	if k.b == b {
		return k.red, k.n
	}
	return b.red.scan(k.raw)
}

// KeyView is a view of the keys registered so far. It is taken again only
// once the keys grew by half (and 1,024) since the last view, so that a
// caller may ask after every few operations: the copies of the key table
// add up to about twice the last one.
func (b *Bulk) KeyView() *KeyView {
	n := b.keys.len()
	if b.view != nil && n-b.viewKeys < max(1024, b.viewKeys/2) {
		return b.view
	}
	b.keys.index()
	b.view, b.viewKeys = &KeyView{b: b, idx: b.keys.idx.clone(), keys: b.keys.keys.view(), rawOf: maps.Clone(b.keys.rawOf), red: redaction{r: b.red.r}}, n
	return b.view
}

// preparedRef is the index of k when it is registered: as prepared (a
// reference from b's own view), else looked up.
func (b *Bulk) preparedRef(k PreparedKey) (uint32, bool) {
	if k.b == b && k.found {
		return k.ref, true
	}
	return b.keys.lookup(k.raw)
}

// keyRanks is the key table resolved at Commit.
type keyRanks struct {
	rank []uint32 // by key index: the rank of its id
	ids  []NodeID // by rank, ascending
	keys []uint32 // by rank: the key's index
}

// resolveKeys hashes every key some operation names (on every core),
// orders them by id and ranks them; two different keys with one id are a
// collision, reported at the operation the ordinary path would refuse (the
// first to name the second key). The ids and key indices are sorted
// together, and what the ranks keep is compacted in place: 16 bytes a key
// at most (the ranks by key, and the pairs), not a list of ids by key
// beside an order and its copies.
func (b *Bulk) resolveKeys() (*keyRanks, error) {
	k := &b.keys
	n := k.len()
	order := make([]uint32, 0, n) // the keys some operation names
	for i := range n {
		if i%evictOps == 0 {
			k.first.evict() // read in order: the pages read go as the pass goes
		}
		if k.firstUse(uint32(i)) != notUsed {
			order = append(order, uint32(i))
		}
	}
	ids := make([]NodeID, len(order))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(order)/4096))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w * len(order) / workers; j < (w+1)*len(order)/workers; j++ {
				if j%evictOps == 0 {
					k.keys.evict() // read in order: the pages read go as the pass goes
				}
				ids[j] = b.s.hash(k.at(order[j]))
			}
		}()
	}
	wg.Wait()
	sort.Sort(idOrder{ids, order})
	// Only keys that share an id read their first uses (which may be
	// spilled): the key named first owns the id (of two named first by
	// one edge operation, its source); any other is a collision.
	r := &keyRanks{rank: make([]uint32, n)}
	bad := -1 // the colliding key first named
	var existing string
	before := func(x uint32, y int) bool { // x was named before y (bad)
		fx, fy := k.firstUse(x), k.firstUse(uint32(y))
		if fx != fy {
			return fx < fy
		}
		// One edge operation names both first: its source comes before
		// its destination, as the ordinary path puts them.
		if op := b.op(int(fx)); op&bulkEdgeBit != 0 {
			if src := b.edges.at(int(op &^ bulkEdgeBit)).src; src == x || src == uint32(y) {
				return src == x
			}
		}
		return int(x) < y
	}
	d := 0 // ranks given: ids[:d] and order[:d] are the ranks' ids and keys
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && ids[j] == ids[i] {
			j++
		}
		first := order[i]
		for _, x := range order[i+1 : j] {
			if before(x, int(first)) {
				first = x
			}
		}
		for _, x := range order[i:j] {
			r.rank[x] = uint32(d)
			if x != first && k.at(x) != k.at(first) && (bad < 0 || before(x, bad)) {
				bad, existing = int(x), k.at(first)
			}
		}
		ids[d], order[d] = ids[i], first
		d++
		i = j
	}
	r.ids, r.keys = ids[:d:d], order[:d:d]
	if bad >= 0 {
		// Copies: the error outlives the load (a spilled key is a view of
		// a mapping: keyArena).
		return nil, &BulkOpError{Op: int(k.firstUse(uint32(bad))), Err: &CollisionError{ID: b.s.hash(k.at(uint32(bad))), Key: strings.Clone(k.at(uint32(bad))), Existing: strings.Clone(existing)}}
	}
	return r, nil
}

// idOrder sorts ids and the key indices beside them by id, then index.
type idOrder struct {
	ids []NodeID
	idx []uint32
}

func (o idOrder) Len() int { return len(o.ids) }
func (o idOrder) Less(i, j int) bool {
	return o.ids[i] < o.ids[j] || o.ids[i] == o.ids[j] && o.idx[i] < o.idx[j]
}
func (o idOrder) Swap(i, j int) {
	o.ids[i], o.ids[j] = o.ids[j], o.ids[i]
	o.idx[i], o.idx[j] = o.idx[j], o.idx[i]
}
