package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
	"github.com/memctl/memctl/roles"
)

// CheckReport lists every problem Check found. Problems are integrity
// violations (exit 3); Warnings are not.
type CheckReport struct {
	Problems []string
	Warnings []string
	// MissingNodes lists canonical keys referenced by live edges that have no
	// live node (allowed, reported).
	MissingNodes []string
}

// Tombstone-accumulation warning thresholds (SPEC.md §4): warn when dead
// adjacency entries (superseded versions and newest-version tombstones)
// reach this share of all entries, and there are at least minDeadWarn.
const (
	deadWarnRatio = 0.25
	minDeadWarn   = 64
	maxProblems   = 200 // problems listed one by one; the rest are counted
)

// Check walks every keyspace and reports every violation it finds.
func (s *Store) Check() (CheckReport, error) {
	c := checker{s: s}
	err := s.view(func(txn *lmdb.Txn) error {
		c.txn = txn
		return c.run()
	})
	if c.stopped { // the damage is already a problem
		c.rep.Problems = append(c.rep.Problems, "check stopped there: LMDB failed the read transaction, later keyspaces were not checked")
		err = nil
	}
	if c.dropped > 0 {
		c.rep.Problems = append(c.rep.Problems, fmt.Sprintf("... and %d more problems", c.dropped))
	}
	return c.rep, err
}

// Stats summarises the store. It reads meta, rel, n, kv, out and in (not
// the log or history); an integrity problem it meets is an ErrCorrupt error
// (counts read past damage would be wrong), warnings are reported.
// Adjacency counters cover both lists, as Compact's do.
func (s *Store) Stats() (Stats, error) {
	c := checker{s: s, statsOnly: true}
	err := s.view(func(txn *lmdb.Txn) error {
		c.txn = txn
		return c.run()
	})
	if err != nil {
		return Stats{}, err
	}
	st := c.stats
	st.MissingNodes = len(c.rep.MissingNodes)
	st.Warnings = c.rep.Warnings
	if n := len(c.rep.Problems) + c.dropped; n > 0 {
		// Counts read past damage would be wrong answers: fail instead.
		return Stats{}, fmt.Errorf("%w: %s (%d integrity problems; run memctl check)", ErrCorrupt, c.rep.Problems[0], n)
	}
	if info, err := s.env.Info(); err == nil {
		st.MapSize = info.MapSize
	}
	if st.Keyspaces, err = s.Space(); err != nil {
		return Stats{}, err
	}
	if fi, err := os.Stat(filepath.Join(s.path, "data.mdb")); err == nil {
		st.FileSize = fi.Size()
	}
	inUse := int64(InUse(st.Keyspaces))
	if st.FileSize >= s.vacuumHintMin && 2*st.FileSize > 3*inUse {
		st.Warnings = append(st.Warnings, fmt.Sprintf(
			"data.mdb is %.1f MiB but its keyspaces use %.1f MiB (LMDB keeps the pages past transactions freed); memctl vacuum --to DIR writes a dense copy",
			float64(st.FileSize)/(1<<20), float64(inUse)/(1<<20)))
	}
	return st, nil
}

// vacuumHintFile: Stats suggests vacuum when data.mdb is at least this
// large and more than 1.5 times the pages its keyspaces use (a third of
// the file free: 21 MiB or more).
const vacuumHintFile = 64 << 20

// adjTuple is one adjacency entry with its owning node.
type adjTuple struct {
	node, peer uint64
	rev        uint64
	rel        uint32
	flags      uint8
	weight     float32
}

func (a adjTuple) less(b adjTuple) bool {
	if a.node != b.node {
		return a.node < b.node
	}
	if a.rel != b.rel {
		return a.rel < b.rel
	}
	if a.peer != b.peer {
		return a.peer < b.peer
	}
	return a.rev < b.rev
}

type checker struct {
	s       *Store
	txn     *lmdb.Txn
	rep     CheckReport
	stats   Stats
	dropped int
	// statsOnly skips the cross-keyspace checks; adj then counts live
	// edges and missing nodes as it goes instead of collecting entries.
	statsOnly bool
	// stopped: LMDB failed the transaction on damage; the walk ended there.
	stopped bool
	missing map[uint64]bool

	schema, rev, ts, horizon, nextRel, replRev uint64
	logMeta                                    map[uint64]revMeta // rev → time and provenance of its log record
	liveNodes                                  map[NodeID]bool
	digests                                    *adjDigests // out's and in's (checkadj.go)
}

func (c *checker) problem(err error) {
	if len(c.rep.Problems) >= maxProblems {
		c.dropped++
		return
	}
	c.rep.Problems = append(c.rep.Problems, err.Error())
}

func (c *checker) corrupt(db string, k []byte, format string, args ...any) {
	c.problem(&CorruptionError{db, bytes.Clone(k), fmt.Sprintf(format, args...)})
}

// each iterates a keyspace; fn's errors are problems. Damage LMDB reports
// (or a fault on a damaged page) is a problem naming the keyspace and the
// last key read: the walk of that keyspace stops there and Check goes on
// with the others. Other LMDB errors abort.
func (c *checker) each(dbi lmdb.DBI, fn func(k, v []byte)) error {
	name := c.s.db.name(dbi)
	cur, err := c.txn.OpenCursor(dbi)
	if err != nil {
		return err
	}
	defer cur.Close()
	var last []byte
	err = guardFaults(name, nil, func() error {
		k, v, err := cur.Get(nil, nil, lmdb.First)
		for ; err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
			last = k
			fn(k, v)
		}
		return err
	})
	if lmdb.IsNotFound(err) {
		return nil
	}
	if isDamageErrno(err) {
		// LMDB marks the transaction failed: nothing more can be read in it.
		ce := &CorruptionError{name, bytes.Clone(last), "LMDB: " + err.Error()}
		c.problem(ce)
		c.stopped = true
		return ce
	}
	var ce *CorruptionError
	if errors.As(err, &ce) {
		if ce.Key == nil {
			ce.Key = bytes.Clone(last)
		}
		c.problem(ce)
		return nil
	}
	return err
}

func (c *checker) run() error {
	steps := []func() error{c.meta, c.relations, c.ids, c.nodes, c.kv, c.log, c.tsIndex, c.revs,
		func() error { return c.adj(c.s.db.out, dbOut) },
		func() error { return c.adj(c.s.db.in, dbIn) },
		c.symmetry, c.edges, c.hist}
	if c.statsOnly {
		// Stats: counts only, from meta, rel, n, kv, out and in.
		steps = []func() error{c.meta, c.relations, c.nodes, c.kv,
			func() error { return c.adj(c.s.db.out, dbOut) },
			func() error { return c.adj(c.s.db.in, dbIn) }}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	c.finish()
	return nil
}

// finish sets what run's steps found out as a whole: the revisions, the
// tombstone warning, the missing nodes in order.
func (c *checker) finish() {
	c.stats.Revision = Revision(c.rev)
	c.stats.Horizon = Revision(c.horizon)
	dead := c.stats.Tombstones + c.stats.Superseded
	if dead >= minDeadWarn && float64(dead) >= deadWarnRatio*float64(c.stats.AdjacencyEntries) {
		c.rep.Warnings = append(c.rep.Warnings, fmt.Sprintf(
			"tombstone accumulation: %d of %d adjacency entries are superseded or deleted (%d tombstones); "+
				"set a retention (memctl compact --retain N) to let compaction drop them",
			dead, c.stats.AdjacencyEntries, c.stats.Tombstones))
	}
	sort.Strings(c.rep.MissingNodes)
}

func (c *checker) meta() error {
	known := map[string]*uint64{metaSchema: &c.schema, metaCreated: nil, metaRev: &c.rev, metaTS: &c.ts,
		metaRetain: nil, metaHorizon: &c.horizon, metaNextRel: &c.nextRel, metaReplPos: nil, metaReplRev: &c.replRev}
	optional := map[string]bool{metaReplPos: true, metaReplRev: true} // a bound store's (replica.go)
	seen := map[string]bool{}
	err := c.each(c.s.db.meta, func(k, v []byte) {
		dst, ok := known[string(k)]
		if !ok {
			c.corrupt(dbMeta, k, "unknown meta key")
			return
		}
		seen[string(k)] = true
		x, err := parseU64Value(v)
		if err != nil {
			c.corrupt(dbMeta, k, "%v", err)
			return
		}
		if dst != nil {
			*dst = x
		}
	})
	for k := range known {
		if !seen[k] && !optional[k] {
			c.corrupt(dbMeta, []byte(k), "missing")
		}
	}
	if seen[metaReplPos] != seen[metaReplRev] {
		c.corrupt(dbMeta, []byte(metaReplRev), "repl_pos and repl_rev must be present together")
	}
	if c.replRev > c.rev {
		c.corrupt(dbMeta, []byte(metaReplRev), "replicated revision %d beyond revision %d", c.replRev, c.rev)
	}
	if c.horizon > c.rev+1 {
		c.corrupt(dbMeta, []byte(metaHorizon), "horizon %d beyond revision %d", c.horizon, c.rev)
	}
	return err
}

func (c *checker) relations() error {
	names := map[string]RelID{}
	err := c.each(c.s.db.rel, func(k, v []byte) {
		if len(k) != 4 {
			c.corrupt(dbRel, k, "key is not 4 bytes")
			return
		}
		id := RelID(binary.BigEndian.Uint32(k))
		rel, err := decodeRel(id, v)
		if err != nil {
			c.corrupt(dbRel, k, "%v", err)
			return
		}
		if id == 0 || uint64(id) >= c.nextRel {
			c.corrupt(dbRel, k, "relation id %d outside 1..%d", id, c.nextRel-1)
		}
		builtin := int(id) <= len(builtinRelations)
		if builtin != (rel.CreatedRev == 0) || uint64(rel.CreatedRev) > c.rev {
			c.corrupt(dbRel, k, "relation %q created at revision %d (built-ins at 0, others in 1..%d)", rel.Name, rel.CreatedRev, c.rev)
		}
		if want, _ := roles.Known(rel.Name); builtin && rel.Role != want {
			c.corrupt(dbRel, k, "built-in relation %q has role %v, want %v", rel.Name, rel.Role, want)
		}
		names[rel.Name] = id
		c.stats.Relations++
	})
	if err != nil {
		return err
	}
	n := 0
	err = c.each(c.s.db.relname, func(k, v []byte) {
		n++
		got, err := parseRelNameValue(v)
		if err != nil {
			c.corrupt(dbRelName, k, "%s", err.Error())
			return
		}
		if id, ok := names[string(k)]; !ok || id != got {
			c.corrupt(dbRelName, k, "does not match the rel keyspace")
		}
	})
	if n != len(names) {
		c.problem(fmt.Errorf("%w: relname has %d names, rel has %d relations", ErrCorrupt, n, len(names)))
	}
	if c.stats.Relations != int(c.nextRel)-1 && c.nextRel > 0 {
		c.problem(fmt.Errorf("%w: %d relations but next relation id is %d", ErrCorrupt, c.stats.Relations, c.nextRel))
	}
	return err
}

func (c *checker) ids() error {
	return c.each(c.s.db.ids, func(k, v []byte) {
		if len(k) != 8 {
			c.corrupt(dbIDs, k, "key is not 8 bytes")
			return
		}
		key, err := parseIDsValue(v)
		if err != nil {
			c.corrupt(dbIDs, k, "%s", err.Error())
			return
		}
		if got := c.s.hash(string(key)); uint64(got) != binary.BigEndian.Uint64(k) {
			c.corrupt(dbIDs, k, "key %q hashes to %016x", key, uint64(got))
		}
	})
}

func (c *checker) hasID(id uint64) bool {
	_, err := c.txn.Get(c.s.db.ids, u64be(id))
	return err == nil
}

func (c *checker) nodes() error {
	c.liveNodes = map[NodeID]bool{}
	return c.each(c.s.db.n, func(k, v []byte) {
		if len(k) != 8 {
			c.corrupt(dbNodes, k, "key is not 8 bytes")
			return
		}
		var rec nodeRec
		if err := c.s.decodeRecord(dbNodes, k, v, rec.decodeBody); err != nil {
			c.problem(err)
			return
		}
		if uint64(rec.rev) > c.rev || rec.createdRev > rec.rev {
			c.corrupt(dbNodes, k, "revision %d (created %d) beyond latest %d", rec.rev, rec.createdRev, c.rev)
		}
		id := binary.BigEndian.Uint64(k)
		if !c.hasID(id) {
			c.corrupt(dbNodes, k, "node has no ids entry")
		}
		if !rec.tombstone() {
			c.liveNodes[NodeID(id)] = true
			c.stats.Nodes++
		}
	})
}

func (c *checker) kv() error {
	return c.each(c.s.db.kv, func(k, v []byte) {
		scope, ns, key, err := parseKVKey(k)
		if err != nil || validKVKey(scope, ns, key) != nil {
			c.corrupt(dbKV, k, "bad key")
			return
		}
		var rec kvRec
		if err := c.s.decodeRecord(dbKV, k, v, rec.decodeBody); err != nil {
			c.problem(err)
			return
		}
		if uint64(rec.rev) > c.rev {
			c.corrupt(dbKV, k, "revision %d beyond latest %d", rec.rev, c.rev)
		}
		if !rec.tombstone() {
			c.stats.KVs++
		}
	})
}

func (c *checker) log() error {
	expect := uint64(1)
	var lastTS uint64
	c.logMeta = map[uint64]revMeta{}
	err := c.each(c.s.db.log, func(k, v []byte) {
		nops := 0
		rec, err := c.s.scanLog(k, v, func(Op, byte) error { nops++; return nil })
		if err != nil {
			c.problem(err)
			if len(k) == 8 {
				expect = binary.BigEndian.Uint64(k) + 1
			}
			return
		}
		if uint64(rec.rev) != expect {
			c.corrupt(dbLog, k, "revision %d follows %d (gap or duplicate)", rec.rev, expect-1)
		}
		expect = uint64(rec.rev) + 1
		if rec.format == fmtKeyed && c.schema < schemaKeyedLog {
			c.corrupt(dbLog, k, "format-03 record in a schema-%d store (format 03 needs schema %d)", c.schema, schemaKeyedLog)
		}
		if rec.ts <= lastTS {
			c.corrupt(dbLog, k, "commit time %d not after the previous %d", rec.ts, lastTS)
		}
		lastTS = rec.ts
		if nops == 0 {
			c.corrupt(dbLog, k, "record with no operations")
		}
		c.logMeta[uint64(rec.rev)] = revMeta{ts: rec.ts, scope: rec.scope, run: rec.run, task: rec.tsk}
	})
	if expect-1 != c.rev {
		c.problem(fmt.Errorf("%w: log ends at revision %d, meta says %d", ErrCorrupt, expect-1, c.rev))
	}
	if lastTS != c.ts {
		c.problem(fmt.Errorf("%w: last commit time %d, meta says %d", ErrCorrupt, lastTS, c.ts))
	}
	return err
}

func (c *checker) tsIndex() error {
	n := 0
	err := c.each(c.s.db.ts, func(k, v []byte) {
		n++
		rev, err := parseU64Value(v)
		if err != nil || len(k) != 8 {
			c.corrupt(dbTS, k, "bad entry")
			return
		}
		if m, ok := c.logMeta[rev]; !ok || m.ts != binary.BigEndian.Uint64(k) {
			c.corrupt(dbTS, k, "points at revision %d whose log record has another time", rev)
		}
	})
	if n != int(c.rev) {
		c.problem(fmt.Errorf("%w: time index has %d entries for %d revisions", ErrCorrupt, n, c.rev))
	}
	return err
}

// revs verifies the revs keyspace: one entry per revision, equal to its log
// record's header.
func (c *checker) revs() error {
	n := 0
	err := c.each(c.s.db.revs, func(k, v []byte) {
		n++
		m, err := parseRevsValue(v)
		if err != nil || len(k) != 8 {
			c.corrupt(dbRevs, k, "bad entry")
			return
		}
		if want, ok := c.logMeta[binary.BigEndian.Uint64(k)]; !ok || want != m {
			c.corrupt(dbRevs, k, "does not match the log record of its revision")
		}
	})
	if n != int(c.rev) {
		c.problem(fmt.Errorf("%w: revs has %d entries for %d revisions", ErrCorrupt, n, c.rev))
	}
	return err
}

// adj verifies one adjacency keyspace and adds its edges to the list's
// digests (checkadj.go); with statsOnly, it counts the live edges instead.
func (c *checker) adj(dbi lmdb.DBI, dbName string) error {
	var prev adjTuple
	havePrev := false
	var entries []adjacency.Entry
	var edges *adjEdges
	if !c.statsOnly {
		edges = c.digestEdges(dbi)
		defer edges.flush()
	}
	return c.each(dbi, func(k, v []byte) {
		node, rel, peer, ok := parseAdjKey(k)
		if !ok {
			c.corrupt(dbName, k, "key is not 20 bytes")
			return
		}
		c.stats.AdjacencyChunks++ // both lists, as Compact counts them
		var err error
		entries, err = adjacency.Decode(v, entries[:0])
		if err == nil && len(entries) == 0 {
			err = errors.New("empty chunk")
		}
		if err != nil {
			c.corrupt(dbName, k, "%v", err)
			return
		}
		if entries[0].Rel != uint32(rel) || entries[0].Peer != uint64(peer) {
			c.corrupt(dbName, k, "key does not match the chunk's first entry (rel %d, peer %016x)", entries[0].Rel, entries[0].Peer)
		}
		if havePrev && prev.node == uint64(node) {
			if e := entries[0]; prev.rel == e.Rel && prev.peer == e.Peer {
				c.corrupt(dbName, k, "edge split across chunks")
			}
		}
		if !c.hasID(uint64(node)) {
			c.corrupt(dbName, k, "node %016x has no ids entry", uint64(node))
		}
		for _, e := range entries {
			if e.Rel == 0 || uint64(e.Rel) >= c.nextRel {
				c.corrupt(dbName, k, "invalid relation id %d", e.Rel)
			}
			if e.Rev == 0 || e.Rev > c.rev {
				c.corrupt(dbName, k, "entry revision %d outside 1..%d", e.Rev, c.rev)
			}
			if edges != nil {
				edges.add(tupleOf(uint64(node), e))
			}
		}
		if edges == nil && dbi == c.s.db.out { // statsOnly: count live edges (edges never span chunks)
			for i, e := range entries {
				if (i+1 < len(entries) && entries[i+1].SameEdge(e)) || e.Tombstone() {
					continue
				}
				c.noteLive(uint64(node), e.Peer)
			}
		}
		sup, tomb := adjacency.Dead(entries)
		c.stats.AdjacencyEntries += len(entries)
		c.stats.Superseded += sup
		c.stats.Tombstones += tomb
		last := entries[len(entries)-1]
		prev, havePrev = adjTuple{node: uint64(node), rel: last.Rel, peer: last.Peer}, true
	})
}

// noteLive counts one live edge and records its endpoints that have no
// live node.
func (c *checker) noteLive(src, dst uint64) {
	c.stats.Edges++
	if c.missing == nil {
		c.missing = map[uint64]bool{}
	}
	for _, id := range []uint64{src, dst} {
		if !c.liveNodes[NodeID(id)] && !c.missing[id] {
			c.missing[id] = true
			key, err := (&ReadTxn{s: c.s, lt: c.txn}).keyOf(NodeID(id))
			if err != nil {
				c.corrupt(dbIDs, u64be(id), "edge endpoint has no ids entry")
				continue
			}
			c.rep.MissingNodes = append(c.rep.MissingNodes, key)
		}
	}
}

// hist checks every history version decodes and belongs to an entity whose
// current record is newer.
func (c *checker) hist() error {
	return c.each(c.s.db.hist, func(k, v []byte) {
		if len(k) < 10 {
			c.corrupt(dbHist, k, "key too short")
			return
		}
		entity := k[1 : len(k)-8]
		rev := Revision(binary.BigEndian.Uint64(k[len(k)-8:]))
		dbi, key, ok := c.s.latestRecordKey(k[0], entity)
		if !ok {
			c.corrupt(dbHist, k, "bad kind or entity")
			return
		}
		var decode func([]byte) error
		switch k[0] {
		case histNode:
			var r nodeRec
			decode = func(b []byte) error {
				if err := r.decodeBody(b); err != nil {
					return err
				}
				return checkRev(r.rev, rev)
			}
		case histEdge:
			var r edgeRec
			decode = func(b []byte) error {
				if err := r.decodeBody(b); err != nil {
					return err
				}
				return checkRev(r.rev, rev)
			}
		default:
			var r kvRec
			decode = func(b []byte) error {
				if err := r.decodeBody(b); err != nil {
					return err
				}
				return checkRev(r.rev, rev)
			}
		}
		if err := c.s.decodeRecord(dbHist, k, v, decode); err != nil {
			c.problem(err)
			return
		}
		latest, found, err := c.s.latestRev(c.txn, k[0], dbi, key)
		if err != nil {
			c.problem(err)
			return
		}
		if !found {
			c.corrupt(dbHist, k, "history of an entity with no current record")
			return
		}
		if latest <= rev {
			c.corrupt(dbHist, k, "history version %d not older than the current %d", rev, latest)
		}
	})
}

func checkRev(got, want Revision) error {
	if got != want {
		return fmt.Errorf("record revision %d under key revision %d", got, want)
	}
	return nil
}
