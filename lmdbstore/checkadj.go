package lmdbstore

// check's adjacency cross-checks (SPEC §2 "Check"): `out` and `in` are
// mirror images, and every `e` record agrees with its edge's newest entry.
//
// Neither list is held whole (24M edges made 48M entries of 40 bytes, plus
// a sorted copy: 5.4 GB). An edge is the run of entries with the same node,
// relation and peer in a list's walk order, normalized to the horizon
// (normalize); each edge falls in one of (at most) checkBuckets buckets by a hash of
// (src, rel, dst). The walk of each list adds every entry of an edge
// (mirrored for `in`) to its bucket's digest: the count, sum and xor of a
// hash of the whole entry (endpoints, relation, revision, flags, weight).
// Buckets whose digests agree hold the same entries in both lists; only
// the edges of buckets that disagree are collected, from a second walk of
// both lists, and compared entry by entry, so a store with a few damaged
// entries reports exactly what comparing the whole lists reports. The `e`
// records are walked beside a second cursor over `out` (both in
// (src, rel, dst) order), which yields each edge's newest normalized entry.

import (
	"hash/maphash"
	"math"
	"slices"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// checkBuckets is how many buckets the edges fall in at most; a store
// with fewer adjacency chunks (in its larger list) has a bucket a chunk,
// and at least minCheckBuckets (powers of two): a small store's check
// does not set up 3 MB of digests.
const (
	checkBuckets    = 1 << 16
	minCheckBuckets = 1 << 6
)

// adjDigest sums up the entries of one bucket of one list.
type adjDigest struct{ n, sum, xor uint64 }

// adjDigests are both lists' digests, by bucket, and the hash seeds.
type adjDigests struct {
	out, in        []adjDigest
	mask           uint64 // buckets - 1
	edge, entry    maphash.Seed
	mismatched     int
	mismatchBucket []bool
}

// newAdjDigests sets up the digests of lists of at most chunks chunks.
func newAdjDigests(chunks uint64) *adjDigests {
	n := uint64(minCheckBuckets)
	for n < chunks && n < checkBuckets {
		n *= 2
	}
	return &adjDigests{
		out: make([]adjDigest, n), in: make([]adjDigest, n), mask: n - 1,
		edge: maphash.MakeSeed(), entry: maphash.MakeSeed(),
	}
}

// bucket is the bucket of edge src -rel-> dst.
func (d *adjDigests) bucket(src uint64, rel uint32, dst uint64) int {
	return int(maphash.Comparable(d.edge, [3]uint64{src, uint64(rel), dst}) & d.mask)
}

// add adds an edge's entries, in `out`'s orientation, to digests ds.
func (d *adjDigests) add(ds []adjDigest, ts []adjTuple) {
	t0 := ts[0]
	b := &ds[d.bucket(t0.node, t0.rel, t0.peer)]
	for _, t := range ts {
		h := maphash.Comparable(d.entry, [5]uint64{t.node, t.peer, t.rev,
			uint64(t.rel) | uint64(t.flags)<<32, uint64(math.Float32bits(t.weight))})
		b.n++
		b.sum += h
		b.xor ^= h
	}
}

// compare marks the buckets whose two digests differ.
func (d *adjDigests) compare() {
	d.mismatchBucket = make([]bool, len(d.out))
	for i := range d.out {
		if d.out[i] != d.in[i] {
			d.mismatchBucket[i] = true
			d.mismatched++
		}
	}
}

// normalize drops, in place, what compaction at the horizon would drop
// (adjacency.Compact's rule on each edge). The two lists of an edge may be
// compacted at different times, so they are compared in this form: any two
// histories that agree at every readable view normalize alike.
func normalize(ts []adjTuple, horizon uint64) []adjTuple {
	if horizon == 0 {
		return ts
	}
	out := ts[:0]
	for i := 0; i < len(ts); {
		j := i + 1
		for j < len(ts) && ts[j].node == ts[i].node && ts[j].rel == ts[i].rel && ts[j].peer == ts[i].peer {
			j++
		}
		from := i
		for k := i; k < j; k++ {
			if ts[k].rev <= horizon {
				from = k
				if ts[k].flags&adjacency.FlagTombstone != 0 {
					from = k + 1
				}
			}
		}
		out = append(out, ts[from:j]...)
		i = j
	}
	return out
}

// digestEdges gathers list dbi's entries into edges for its digests (set
// up at the first list, sized to the larger list's chunks).
func (c *checker) digestEdges(dbi lmdb.DBI) *adjEdges {
	if c.digests == nil {
		var chunks uint64
		for _, l := range []lmdb.DBI{c.s.db.out, c.s.db.in} {
			if st, err := c.txn.Stat(l); err == nil {
				chunks = max(chunks, st.Entries)
			}
		}
		c.digests = newAdjDigests(chunks)
	}
	d, isIn := c.digests, dbi == c.s.db.in
	return &adjEdges{horizon: c.horizon, fn: func(ts []adjTuple) {
		if isIn {
			for i := range ts {
				ts[i] = ts[i].mirrored()
			}
			d.add(d.in, ts)
			return
		}
		d.add(d.out, ts)
	}}
}

// mirrored is t with its endpoints swapped (an `in` entry as its `out`
// mirror, and back).
func (t adjTuple) mirrored() adjTuple {
	t.node, t.peer = t.peer, t.node
	return t
}

// adjEdges gathers a list's entries, in walk order, into edges and hands
// each, normalized to the horizon, to fn (which may keep it only for the
// call).
type adjEdges struct {
	horizon uint64
	cur     []adjTuple
	fn      func([]adjTuple)
}

func (g *adjEdges) add(t adjTuple) {
	if len(g.cur) > 0 {
		if f := g.cur[0]; f.node != t.node || f.rel != t.rel || f.peer != t.peer {
			g.flush()
		}
	}
	g.cur = append(g.cur, t)
}

func (g *adjEdges) flush() {
	if len(g.cur) == 0 {
		return
	}
	if ts := normalize(g.cur, g.horizon); len(ts) > 0 {
		g.fn(ts)
	}
	g.cur = g.cur[:0]
}

// tupleOf is entry e of node's chunk as a tuple.
func tupleOf(node uint64, e adjacency.Entry) adjTuple {
	return adjTuple{node: node, peer: e.Peer, rev: e.Rev, rel: e.Rel, flags: e.Flags &^ adjacency.FlagWeight, weight: e.Weight}
}

// chunkEntries decodes an adjacency chunk for the second walks: a chunk
// the first walk reported (a bad key, undecodable, empty) yields nothing,
// as it added nothing to the digests.
func chunkEntries(k, v []byte, dst []adjacency.Entry) (uint64, []adjacency.Entry) {
	node, _, _, ok := parseAdjKey(k)
	if !ok {
		return 0, dst[:0]
	}
	entries, err := adjacency.Decode(v, dst[:0])
	if err != nil {
		return 0, dst[:0]
	}
	return uint64(node), entries
}

// symmetry compares the buckets of `out` and `in` whose digests differ,
// entry by entry: every entry without its mirror, and every pair that
// differs in flags or weight, is a problem.
func (c *checker) symmetry() error {
	d := c.digests
	d.compare()
	if d.mismatched == 0 {
		return nil
	}
	out, err := c.collect(c.s.db.out, false)
	if err != nil {
		return err
	}
	in, err := c.collect(c.s.db.in, true)
	if err != nil {
		return err
	}
	c.compareMirrors(out, in)
	return nil
}

// compareMirrors compares out's normalized entries with in's, entry by
// entry: every entry without its mirror, and every pair that differs in
// flags or weight, is a problem.
func (c *checker) compareMirrors(out, in []adjTuple) {
	// Both in `in`'s orientation and order.
	mirrored := make([]adjTuple, len(out))
	for i, t := range out {
		mirrored[i] = t.mirrored()
	}
	cmpTuples := func(a, b adjTuple) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	}
	slices.SortFunc(mirrored, cmpTuples)
	slices.SortStableFunc(in, cmpTuples)
	i, j := 0, 0
	for i < len(mirrored) || j < len(in) {
		switch {
		case j >= len(in) || (i < len(mirrored) && mirrored[i].less(in[j])):
			t := mirrored[i]
			c.corrupt(dbIn, adjKey(NodeID(t.node), RelID(t.rel), NodeID(t.peer)), "missing mirror of out entry %016x -%d-> %016x rev %d", t.peer, t.rel, t.node, t.rev)
			i++
		case i >= len(mirrored) || in[j].less(mirrored[i]):
			t := in[j]
			c.corrupt(dbOut, adjKey(NodeID(t.peer), RelID(t.rel), NodeID(t.node)), "missing mirror of in entry %016x -%d-> %016x rev %d", t.peer, t.rel, t.node, t.rev)
			j++
		default:
			if mirrored[i].flags != in[j].flags || mirrored[i].weight != in[j].weight {
				t := in[j]
				c.corrupt(dbIn, adjKey(NodeID(t.node), RelID(t.rel), NodeID(t.peer)), "entry rev %d differs from its out mirror", t.rev)
			}
			i++
			j++
		}
	}
}

// collect walks list dbi again and returns the normalized entries of the
// edges in mismatched buckets, in walk order.
func (c *checker) collect(dbi lmdb.DBI, isIn bool) ([]adjTuple, error) {
	d := c.digests
	var got []adjTuple
	g := adjEdges{horizon: c.horizon, fn: func(ts []adjTuple) {
		src, dst := ts[0].node, ts[0].peer
		if isIn {
			src, dst = dst, src
		}
		if d.mismatchBucket[d.bucket(src, ts[0].rel, dst)] {
			got = append(got, ts...)
		}
	}}
	var entries []adjacency.Entry
	err := c.each(dbi, func(k, v []byte) {
		var node uint64
		node, entries = chunkEntries(k, v, entries)
		for _, e := range entries {
			g.add(tupleOf(node, e))
		}
	})
	g.flush()
	return got, err
}

// newestOut reads `out` with its own cursor, in (src, rel, dst) order, and
// yields each edge's newest entry after normalizing to the horizon (edges
// that normalize away yield nothing).
type newestOut struct {
	cur     *lmdb.Cursor
	g       adjEdges
	entries []adjacency.Entry
	ready   []adjTuple // newest entries found; ready[at:] not yet taken
	at      int
	started bool
	done    bool
	err     error
}

func (c *checker) newestOut() (*newestOut, error) {
	cur, err := c.txn.OpenCursor(c.s.db.out)
	if err != nil {
		return nil, err
	}
	r := &newestOut{cur: cur}
	r.g = adjEdges{horizon: c.horizon, fn: func(ts []adjTuple) { r.ready = append(r.ready, ts[len(ts)-1]) }}
	return r, nil
}

// peek returns the next newest entry without taking it; false at the end.
func (r *newestOut) peek() (adjTuple, bool) {
	for r.at == len(r.ready) && !r.done {
		r.ready, r.at = r.ready[:0], 0
		op := uint(lmdb.Next)
		if !r.started {
			op, r.started = lmdb.First, true
		}
		k, v, err := r.cur.Get(nil, nil, op)
		if err != nil {
			if !lmdb.IsNotFound(err) {
				r.err = err
			}
			r.done = true
			r.g.flush()
			break
		}
		var node uint64
		node, r.entries = chunkEntries(k, v, r.entries)
		for _, e := range r.entries {
			r.g.add(tupleOf(node, e))
		}
	}
	if r.at == len(r.ready) {
		return adjTuple{}, false
	}
	return r.ready[r.at], true
}

func (r *newestOut) take() { r.at++ }

// edges checks the e records against the newest adjacency entry of each
// edge, and finds missing endpoint nodes.
func (c *checker) edges() error {
	newest, err := c.newestOut()
	if err != nil {
		return err
	}
	defer newest.cur.Close()
	noteLive := func(t adjTuple) { c.noteLive(t.node, t.peer) }
	// without is an edge with no e record: implicit when its newest entry
	// is live (its revision must have a revs entry), else a tombstone whose
	// record compaction dropped (at or below the horizon).
	without := func(t adjTuple) {
		k := adjKey(NodeID(t.node), RelID(t.rel), NodeID(t.peer))
		if t.flags&adjacency.FlagTombstone != 0 {
			if t.rev > c.horizon {
				c.corrupt(dbOut, k, "deleted edge without an e record")
			}
			return
		}
		if _, ok := c.logMeta[t.rev]; !ok {
			c.corrupt(dbOut, k, "implicit edge record of revision %d, which has no log record", t.rev)
		}
		noteLive(t)
	}
	err = c.each(c.s.db.e, func(k, v []byte) {
		src, rel, dst, ok := parseAdjKey(k)
		if !ok {
			c.corrupt(dbEdges, k, "key is not 20 bytes")
			return
		}
		var rec edgeRec
		if err := c.s.decodeRecord(dbEdges, k, v, rec.decodeBody); err != nil {
			c.problem(err)
			return
		}
		key := adjTuple{node: uint64(src), rel: uint32(rel), peer: uint64(dst)}
		t, ok := newest.peek()
		for ; ok && t.less(key); t, ok = newest.peek() {
			without(t)
			newest.take()
		}
		if ok && t.node == key.node && t.rel == key.rel && t.peer == key.peer {
			newest.take()
			tomb := t.flags&adjacency.FlagTombstone != 0
			if Revision(t.rev) != rec.rev || tomb != rec.tombstone() || (!tomb && t.weight != rec.weight) {
				c.corrupt(dbEdges, k, "record (rev %d, deleted %v, weight %v) disagrees with its newest adjacency entry (rev %d, deleted %v, weight %v)",
					rec.rev, rec.tombstone(), rec.weight, t.rev, tomb, t.weight)
			}
			if !tomb {
				noteLive(t)
			}
			return
		}
		if !rec.tombstone() || uint64(rec.rev) > c.horizon {
			c.corrupt(dbEdges, k, "e record without adjacency entries")
		}
	})
	for t, ok := newest.peek(); ok; t, ok = newest.peek() {
		without(t)
		newest.take()
	}
	if err == nil {
		err = newest.err
	}
	return err
}
