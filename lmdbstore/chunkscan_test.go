package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
)

// The C scan hard-codes lmdb.h's values; they must be lmdb-go's.
func TestChunkScanConstantsMatchLMDB(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"MDB_LAST", cOpLast, int(lmdb.Last)},
		{"MDB_NEXT", cOpNext, int(lmdb.Next)},
		{"MDB_PREV", cOpPrev, int(lmdb.Prev)},
		{"MDB_SET_RANGE", cOpSetRange, int(lmdb.SetRange)},
		{"MDB_NOTFOUND", cNotFound, int(lmdb.NotFound)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d in chunkscan.go, lmdb-go says %d", c.name, c.got, c.want)
		}
	}
}

// TestScanAcrossChunkBatches reads a hub whose in-list spans several of
// the C scan's batches (chunks of 3 entries, more than 2 × chunkBatch
// chunks), with and without a relation filter, at the latest and an older
// revision, after deletes, in read and write transactions, and with a
// scan of the same list nested in the callback of another. The expected
// lists are built from the writes, not read back.
func TestScanAcrossChunkBatches(t *testing.T) {
	s := newStore(t, Options{})
	s.setChunkMaxForTest(3)
	rels := []string{"calls", "imports", "tests"}
	const perRel = 40
	src := func(rel string, i int) string { return fmt.Sprintf("sym:%s-%02d", rel, i) }
	// Two neighbours in id order would bound the hub's list on both
	// sides; other nodes with in-lists do that here.
	c1 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for _, rel := range rels {
			for i := 0; i < perRel; i += 2 {
				if err := tx.PutEdge(EdgePut{Src: src(rel, i), Rel: rel, Dst: "hub"}); err != nil {
					return err
				}
				if err := tx.PutEdge(EdgePut{Src: "hub", Rel: rel, Dst: src(rel, i)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for _, rel := range rels {
			for i := 1; i < perRel; i += 2 {
				if err := tx.PutEdge(EdgePut{Src: src(rel, i), Rel: rel, Dst: "hub"}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	deleted := map[string]bool{}
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for _, rel := range rels {
			for i := 0; i < perRel; i += 5 {
				deleted[src(rel, i)] = true
				if err := tx.DeleteEdge(src(rel, i), rel, "hub"); err != nil {
					return err
				}
			}
		}
		return nil
	})

	// want: "rel src" of the hub's in-edges, in the store's order (rel
	// id, then source id).
	want := func(rel string, atFirst bool) []string {
		var out []string
		for _, r := range rels {
			if rel != "" && r != rel {
				continue
			}
			for i := 0; i < perRel; i++ {
				if atFirst && i%2 == 1 || !atFirst && deleted[src(r, i)] {
					continue
				}
				out = append(out, r+" "+src(r, i))
			}
		}
		return out
	}
	order := func(r *ReadTxn, got []string) []string {
		ids := map[string]RelID{}
		for _, rel := range rels {
			x, err := r.RelationByName(rel)
			if err != nil {
				t.Fatal(err)
			}
			ids[rel] = x.ID
		}
		slices.SortFunc(got, func(a, b string) int {
			var ra, sa, rb, sb string
			fmt.Sscan(a, &ra, &sa)
			fmt.Sscan(b, &rb, &sb)
			if ids[ra] != ids[rb] {
				return int(ids[ra]) - int(ids[rb])
			}
			if IDOf(sa) < IDOf(sb) {
				return -1
			}
			return 1
		})
		return got
	}

	err := s.View(func(r *ReadTxn) error {
		if n := countChunks(t, r, "hub"); n <= 2*chunkBatch {
			t.Fatalf("the hub's in-list has %d chunks, want more than %d", n, 2*chunkBatch)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, r *ReadTxn) {
		for _, rel := range append([]string{""}, rels...) {
			for _, at := range []At{{}, AtRevision(c1.Rev)} {
				got := neighbourEdges(t, r, false, "hub", rel, at)
				gotS := make([]string, len(got))
				for i, e := range got {
					gotS[i] = e.Rel + " " + e.Src
				}
				exp := order(r, want(rel, !at.IsLatest()))
				if d := cmp.Diff(exp, gotS); d != "" {
					t.Errorf("in-list of hub, rel %q, at %v (-want +got):\n%s", rel, at, d)
				}
			}
		}
	}
	t.Run("read txn", func(t *testing.T) {
		if err := s.View(func(r *ReadTxn) error { read(t, r); return nil }); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("largest relation id", func(t *testing.T) {
		// No relation has it: nothing, and no slice past its bounds.
		err := s.View(func(r *ReadTxn) error {
			n := 0
			err := r.ScanIn(IDOf("hub"), RelID(math.MaxUint32), At{}, func(EdgeRef) bool { n++; return true })
			if n != 0 {
				t.Errorf("ScanIn with relation %d returned %d edges", uint32(math.MaxUint32), n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("write txn", func(t *testing.T) {
		mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			read(t, tx.Reader())
			return tx.PutEdge(EdgePut{Src: "x", Rel: "calls", Dst: "y"})
		})
	})
	t.Run("nested", func(t *testing.T) {
		err := s.View(func(r *ReadTxn) error {
			var outer []NodeID
			inner := 0
			err := r.ScanIn(IDOf("hub"), 0, At{}, func(e EdgeRef) bool {
				outer = append(outer, e.Peer)
				if len(outer) == 40 { // past the first batch, before the last
					if err := r.ScanIn(IDOf("hub"), 0, At{}, func(EdgeRef) bool { inner++; return true }); err != nil {
						t.Error(err)
					}
				}
				return true
			})
			if n := len(want("", false)); len(outer) != n || inner != n {
				t.Errorf("nested scans returned %d (outer) and %d (inner) edges, want %d each", len(outer), inner, n)
			}
			if err != nil {
				return err
			}
			// Neighbours inside Neighbours: the outer keys stay right.
			seen := 0
			err = r.Neighbours(false, IDOf("hub"), 0, At{}, func(n Neighbour) bool {
				seen++
				if IDOf(n.Key) != n.Peer {
					t.Errorf("outer Neighbours: key %q does not hash to peer %016x", n.Key, uint64(n.Peer))
				}
				if seen == 40 {
					if got := neighbourEdges(t, r, true, n.Key, "", At{}); len(got) != 1 || got[0].Dst != "hub" {
						t.Errorf("%s has out-edges %v in the nested read, want the one to hub", n.Key, got)
					}
					if got := neighbourEdges(t, r, false, "hub", "", At{}); len(got) != len(outer) {
						t.Errorf("nested Neighbours of hub: %d edges, want %d", len(got), len(outer))
					}
				}
				return true
			})
			if seen != len(outer) {
				t.Errorf("outer Neighbours: %d edges, want %d", seen, len(outer))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// countChunks counts key's in-list chunks with a cursor of its own.
func countChunks(t *testing.T, r *ReadTxn, key string) int {
	t.Helper()
	c, err := r.txn().OpenCursor(r.s.db.in)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var prefix [8]byte
	binary.BigEndian.PutUint64(prefix[:], uint64(IDOf(key)))
	n := 0
	for k, _, err := c.Get(prefix[:], nil, lmdb.SetRange); err == nil && bytes.HasPrefix(k, prefix[:]); k, _, err = c.Get(nil, nil, lmdb.Next) {
		n++
	}
	return n
}
