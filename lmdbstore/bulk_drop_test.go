package lmdbstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestBulkDropDangling: a load with DropDangling gives, byte for byte, the
// store one Update gives with only the edge operations whose both
// endpoints some node operation of the load names (the filter written
// here, apart from the load), on the fast path and the replay path; it
// counts what it dropped and, as the ordinary log does, what changed.
func TestBulkDropDangling(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 29))
			ops := randomBulkOps(rng, 300+int(seed)*200)
			prefill := seed%3 == 2 // the replay path
			opts := Options{}
			if seed%2 == 0 {
				opts.Redactor = fakeRedactor{}
			}
			named := map[string]bool{}
			for _, op := range ops {
				if op.node != nil {
					named[op.node.Key] = true
				}
			}
			var kept []bulkOp
			dropped := 0
			for _, op := range ops {
				if op.edge != nil && (!named[op.edge.Src] || !named[op.edge.Dst]) {
					dropped++
					continue
				}
				kept = append(kept, op)
			}
			if dropped == 0 || dropped == len(ops)-len(named) {
				t.Fatalf("workload drops %d edges: want some dropped and some kept", dropped)
			}
			ordinary, bulk := newStore(t, opts), newStore(t, opts)
			for _, s := range []*Store{ordinary, bulk} {
				mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
					_, err := tx.AddRelation(Relation{Name: "heavy", DefaultWeight: 2})
					return err
				})
				if prefill {
					putEdge(t, s, "sym:1", "calls", "sym:2")
				}
			}
			meta := WriteMeta{Scope: "repo", RunID: "r1"}
			c1 := mustUpdate(t, ordinary, meta, func(tx *WriteTxn) error { return putOps(tx, kept) })
			b := bulk.NewBulk(meta)
			b.DropDangling()
			for _, op := range ops {
				var err error
				if op.node != nil {
					err = b.PutNode(*op.node)
				} else {
					err = b.PutEdge(*op.edge)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			c2, err := b.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if b.Appended == prefill {
				t.Errorf("fast path %v with a prefilled store %v", b.Appended, prefill)
			}
			if c1 != c2 {
				t.Fatalf("commits differ: update %+v, bulk %+v", c1, c2)
			}
			if b.Dropped != dropped {
				t.Errorf("dropped %d edge operations, want %d", b.Dropped, dropped)
			}
			var logged struct{ Nodes, Edges int }
			if err := ordinary.View(func(r *ReadTxn) error {
				return r.DiffSince(AtRevision(c1.Rev-1), DiffFilter{}, func(op Op) error {
					switch op.Kind {
					case OpPutNode:
						logged.Nodes++
					case OpPutEdge:
						logged.Edges++
					default:
						t.Errorf("unexpected op %v", op.Kind)
					}
					return nil
				})
			}); err != nil {
				t.Fatal(err)
			}
			if b.Changed != logged {
				t.Errorf("changed %+v, the ordinary log holds %+v", b.Changed, logged)
			}
			sameAsUpdate(t, ordinary, bulk)
			if rep, err := bulk.Check(); err != nil || len(rep.Problems) > 0 {
				t.Errorf("check: %v %v", err, rep.Problems)
			}
		})
	}
}

// TestBulkRequireEmpty: a load told RequireEmpty commits into an empty
// store, and refuses (ErrNotEmpty, nothing written: the revision and the
// node another writer put stay as they were) a store another writer put a
// node into after the load began; without RequireEmpty the same load
// commits there (through the ordinary path).
func TestBulkRequireEmpty(t *testing.T) {
	fill := func(b *Bulk) {
		t.Helper()
		if err := b.PutNode(NodePut{Key: "sym:a", Type: "symbol"}); err != nil {
			t.Fatal(err)
		}
		if err := b.PutEdge(EdgePut{Src: "sym:a", Rel: "calls", Dst: "sym:b"}); err != nil {
			t.Fatal(err)
		}
	}
	empty := newStore(t, Options{})
	b := empty.NewBulk(WriteMeta{})
	b.RequireEmpty()
	fill(b)
	if c, err := b.Commit(); err != nil || c.Rev != 1 {
		t.Fatalf("into an empty store: %+v, %v", c, err)
	}

	for _, require := range []bool{true, false} {
		s := newStore(t, Options{})
		b := s.NewBulk(WriteMeta{})
		if require {
			b.RequireEmpty()
		}
		fill(b)
		mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			return tx.PutNode(NodePut{Key: "sym:a", Type: "symbol", Payload: []byte(`{"by":"other"}`)})
		})
		c, err := b.Commit()
		var rev Revision
		var payload string
		if err := s.View(func(r *ReadTxn) error {
			rev = r.Revision()
			n, err := r.GetNode("sym:a", At{})
			payload = string(n.Payload)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		switch {
		case require && (!errors.Is(err, ErrNotEmpty) || c.Rev != 0 || rev != 1 || payload != `{"by":"other"}`):
			t.Errorf("RequireEmpty into a store written meanwhile: %+v, %v; revision %d, payload %s", c, err, rev, payload)
		case !require && (err != nil || c.Rev != 2 || rev != 2):
			t.Errorf("without RequireEmpty: %+v, %v; revision %d", c, err, rev)
		}
	}
}
