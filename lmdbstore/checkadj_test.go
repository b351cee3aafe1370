package lmdbstore

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/adjacency"
)

// wholeListsCheck is what Check's adjacency cross-checks are measured
// against: Check as it was before checkadj.go, with both lists collected
// whole and normalized, compared entry by entry (compareMirrors, the one
// part shared), then every edge's newest entry taken from the whole out
// list and merged with the e records. The other keyspaces' checks are
// Check's own.
func wholeListsCheck(s *Store) (CheckReport, error) {
	c := checker{s: s}
	var out, in []adjTuple
	collect := func(dbi lmdb.DBI, dst *[]adjTuple) func() error {
		return func() error {
			if err := c.adj(dbi, c.s.db.name(dbi)); err != nil { // its problems
				return err
			}
			cur, err := c.txn.OpenCursor(dbi)
			if err != nil {
				return err
			}
			defer cur.Close()
			for k, v, err := cur.Get(nil, nil, lmdb.First); err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
				node, _, _, ok := parseAdjKey(k)
				if !ok {
					continue
				}
				entries, err := adjacency.Decode(v, nil)
				if err != nil {
					continue
				}
				for _, e := range entries {
					*dst = append(*dst, adjTuple{node: uint64(node), peer: e.Peer, rev: e.Rev, rel: e.Rel, flags: e.Flags &^ adjacency.FlagWeight, weight: e.Weight})
				}
			}
			return nil
		}
	}
	symmetry := func() error {
		out = normalize(out, c.horizon)
		in = normalize(in, c.horizon)
		c.compareMirrors(out, in)
		return nil
	}
	edges := func() error {
		var newest []adjTuple
		for i, t := range out {
			if i+1 < len(out) && out[i+1].node == t.node && out[i+1].rel == t.rel && out[i+1].peer == t.peer {
				continue
			}
			newest = append(newest, t)
		}
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
			c.noteLive(t.node, t.peer)
		}
		i := 0
		err := c.each(c.s.db.e, func(k, v []byte) {
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
			for i < len(newest) && newest[i].less(key) {
				without(newest[i])
				i++
			}
			if i < len(newest) && newest[i].node == key.node && newest[i].rel == key.rel && newest[i].peer == key.peer {
				t := newest[i]
				i++
				tomb := t.flags&adjacency.FlagTombstone != 0
				if Revision(t.rev) != rec.rev || tomb != rec.tombstone() || (!tomb && t.weight != rec.weight) {
					c.corrupt(dbEdges, k, "record (rev %d, deleted %v, weight %v) disagrees with its newest adjacency entry (rev %d, deleted %v, weight %v)",
						rec.rev, rec.tombstone(), rec.weight, t.rev, tomb, t.weight)
				}
				if !tomb {
					c.noteLive(t.node, t.peer)
				}
				return
			}
			if !rec.tombstone() || uint64(rec.rev) > c.horizon {
				c.corrupt(dbEdges, k, "e record without adjacency entries")
			}
		})
		for ; i < len(newest); i++ {
			without(newest[i])
		}
		return err
	}
	err := s.view(func(txn *lmdb.Txn) error {
		c.txn = txn
		for _, step := range []func() error{c.meta, c.relations, c.ids, c.nodes, c.kv, c.log, c.tsIndex, c.revs,
			collect(s.db.out, &out), collect(s.db.in, &in), symmetry, edges, c.hist} {
			if err := step(); err != nil {
				return err
			}
		}
		c.finish()
		return nil
	})
	if c.dropped > 0 {
		c.rep.Problems = append(c.rep.Problems, fmt.Sprintf("... and %d more problems", c.dropped))
	}
	return c.rep, err
}

// Check's adjacency cross-checks report what comparing the whole lists
// reports (wholeListsCheck), on random stores, some compacted to a horizon,
// with random damage to out, in and e: an entry dropped, added, given
// another weight, revision or tombstone flag, a chunk deleted or made
// undecodable, an e record deleted.
func TestCheckAdjMatchesWholeLists(t *testing.T) {
	trials := 150
	if testing.Short() || raceEnabled {
		trials = 30 // make test's non-race pass runs all (FULLSIZE_TESTS)
	}
	damaged := 0
	for trial := range trials {
		r := rand.New(rand.NewSource(int64(trial)))
		s, err := Init(t.TempDir(), Options{Clock: testClock(), MapSize: 64 << 20, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		rels := []string{"calls", "imports", "tests"}
		nodes := 5 + r.Intn(30)
		name := func() string { return fmt.Sprint("n", r.Intn(nodes)) }
		var live [][3]string // edges put and not deleted since
		for range 3 + r.Intn(12) {
			mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
				for range 1 + r.Intn(20) {
					if len(live) > 0 && r.Intn(5) == 0 {
						i := r.Intn(len(live))
						e := live[i]
						live = slices.Delete(live, i, i+1)
						if err := tx.DeleteEdge(e[0], e[1], e[2]); err != nil {
							return err
						}
						continue
					}
					src, rel, dst := name(), rels[r.Intn(len(rels))], name()
					if !slices.Contains(live, [3]string{src, rel, dst}) {
						live = append(live, [3]string{src, rel, dst})
					}
					var w float32
					if r.Intn(3) == 0 {
						w = float32(1+r.Intn(4)) / 2
					}
					if err := tx.PutEdge(EdgePut{Src: src, Rel: rel, Dst: dst, Weight: w}); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if r.Intn(3) == 0 {
			if err := s.SetRetention(uint64(1 + r.Intn(4))); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Compact(); err != nil {
				t.Fatal(err)
			}
		}
		want, err := wholeListsCheck(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Problems) > 0 {
			t.Fatalf("trial %d: the store is damaged before the test damages it: %q", trial, want.Problems)
		}
		n := r.Intn(5)
		for range n {
			damageAdj(t, s, r)
		}
		want, err = wholeListsCheck(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Check()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("trial %d (%d damages): Check differs from comparing the whole lists (-whole +Check):\n%s", trial, n, diff)
		}
		if len(got.Problems) > 0 {
			damaged++
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if damaged < trials/2 {
		t.Errorf("only %d of %d trials had problems to report: the damage is too weak to test anything", damaged, trials)
	}
}

// damageAdj makes one random change to out, in or e, below the checksums.
func damageAdj(t *testing.T, s *Store, r *rand.Rand) {
	t.Helper()
	_, err := s.update(func(txn *lmdb.Txn) error {
		dbi := []lmdb.DBI{s.db.out, s.db.in, s.db.e}[r.Intn(3)]
		var keys [][]byte
		cur, err := txn.OpenCursor(dbi)
		if err != nil {
			return err
		}
		for k, _, err := cur.Get(nil, nil, lmdb.First); err == nil; k, _, err = cur.Get(nil, nil, lmdb.Next) {
			keys = append(keys, slices.Clone(k))
		}
		cur.Close()
		if len(keys) == 0 {
			return nil
		}
		k := keys[r.Intn(len(keys))]
		if dbi == s.db.e {
			return txn.Del(dbi, k, nil)
		}
		v, err := txn.Get(dbi, k)
		if err != nil {
			return err
		}
		entries, err := adjacency.Decode(v, nil)
		if err != nil {
			return txn.Del(dbi, k, nil) // damaged before: it goes
		}
		i := r.Intn(len(entries))
		switch r.Intn(7) {
		case 0: // the chunk goes
			return txn.Del(dbi, k, nil)
		case 1: // undecodable
			b := slices.Clone(v)
			b[r.Intn(len(b))] ^= 0x40
			return txn.Put(dbi, k, b, 0)
		case 2: // one entry goes
			entries = slices.Delete(entries, i, i+1)
		case 3: // a newer version of an entry's edge, in this list only
			e := entries[i]
			e.Rev += uint64(1 + r.Intn(3))
			entries = append(entries, e)
		case 4:
			entries[i].Weight += 0.5
		case 5:
			entries[i].Flags ^= adjacency.FlagTombstone
		case 6: // another revision
			entries[i].Rev += uint64(1 + r.Intn(2))
		}
		slices.SortFunc(entries, func(a, b adjacency.Entry) int {
			if a.Less(b) {
				return -1
			}
			if b.Less(a) {
				return 1
			}
			return 0
		})
		entries = slices.CompactFunc(entries, func(a, b adjacency.Entry) bool { return !a.Less(b) && !b.Less(a) })
		if err := txn.Del(dbi, k, nil); err != nil {
			return err
		}
		if len(entries) == 0 {
			return nil
		}
		node, _, _, _ := parseAdjKey(k)
		return txn.Put(dbi, adjKey(node, RelID(entries[0].Rel), NodeID(entries[0].Peer)), adjacency.Encode(nil, entries), 0)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A weight changed in one list is reported whichever of its bits change:
// 0.5 and 2.0 differ only in the exponent's top bits.
func TestCheckFindsWeightOfOneList(t *testing.T) {
	s, err := Init(t.TempDir(), Options{Clock: testClock(), MapSize: 64 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close() // the damage stays: not newStore's Check at cleanup
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "b", Weight: 0.5})
	})
	k := adjKey(IDOf("b"), 3, IDOf("a"))
	if _, err := s.update(func(txn *lmdb.Txn) error {
		v, err := txn.Get(s.db.in, k)
		if err != nil {
			return err
		}
		entries, err := adjacency.Decode(v, nil)
		if err != nil {
			return err
		}
		entries[0].Weight = 2
		return txn.Put(s.db.in, k, adjacency.Encode(nil, entries), 0)
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Check()
	if err != nil {
		t.Fatal(err)
	}
	want, err := wholeListsCheck(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "differs from its out mirror") {
		t.Fatalf("problems = %q", rep.Problems)
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("Check differs from comparing the whole lists (-whole +Check):\n%s", diff)
	}
}
