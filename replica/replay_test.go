package replica_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
	"github.com/memctl/memctl/roles"
)

// TestEveryOpKindReplays: one machine writes every kind of operation (and
// a bulk load, the ingest and import path); a second catches up; both hold
// the same log bytes and logical state at every revision, and the
// relation the first added has the same id, weight, flags and role.
func TestEveryOpKindReplays(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	addr := ts.addr(t, "kinds")
	a := newMachine(t, filepath.Join(dir, "a"), addr, replica.Options{MaxData: 512})
	valid := lmdbstore.Validity{From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	steps := []func(tx *lmdbstore.WriteTxn) error{
		func(tx *lmdbstore.WriteTxn) error {
			_, err := tx.AddRelation(lmdbstore.Relation{Name: "reviews", DefaultWeight: 0.25, Bidirectional: true, Role: roles.Usage})
			return err
		},
		func(tx *lmdbstore.WriteTxn) error {
			if err := tx.PutNode(lmdbstore.NodePut{Key: "decision:a", Payload: []byte(`{"x":1}`), Valid: valid, Scope: "s", RunID: "r", TaskID: "t"}); err != nil {
				return err
			}
			if err := tx.PutNode(lmdbstore.NodePut{Key: "decision:b"}); err != nil {
				return err
			}
			if err := tx.PutEdge(lmdbstore.EdgePut{Src: "decision:a", Rel: "reviews", Dst: "decision:b"}); err != nil {
				return err
			}
			return tx.PutEdge(lmdbstore.EdgePut{Src: "decision:b", Rel: "reviews", Dst: "decision:a", Weight: 2, Payload: []byte(`{"why":"x"}`)})
		},
		func(tx *lmdbstore.WriteTxn) error {
			return tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: "ops", Key: "k", Payload: []byte(`{"v":1}`), Valid: valid})
		},
		func(tx *lmdbstore.WriteTxn) error { return tx.Supersede("decision:a", "decision:b") },
		func(tx *lmdbstore.WriteTxn) error { return tx.DeleteEdge("decision:b", "reviews", "decision:a") },
		func(tx *lmdbstore.WriteTxn) error { return tx.DeleteKV("repo", "ops", "k") },
		func(tx *lmdbstore.WriteTxn) error { return tx.DeleteNode("decision:b") },
		// Every kind in one record over 4096 bytes of ops: format 03.
		func(tx *lmdbstore.WriteTxn) error {
			if _, err := tx.AddRelation(lmdbstore.Relation{Name: "cites", DefaultWeight: 0.75, Inhibitory: true}); err != nil {
				return err
			}
			for i := range 40 {
				k := fmt.Sprintf("decision:k%d", i)
				if err := tx.PutNode(lmdbstore.NodePut{Key: k, Payload: []byte(fmt.Sprintf(`{"i":%d}`, i)), Valid: valid, RunID: "big"}); err != nil {
					return err
				}
				if err := tx.PutEdge(lmdbstore.EdgePut{Src: k, Rel: "cites", Dst: "decision:k0", Weight: float32(i%3) + 0.5, Payload: []byte(`{"why":"y"}`)}); err != nil {
					return err
				}
				if err := tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: "ops", Key: k, Payload: []byte(`"v"`), Valid: valid}); err != nil {
					return err
				}
				if i%4 == 0 {
					if err := tx.DeleteKV("repo", "ops", k); err != nil {
						return err
					}
					if err := tx.DeleteEdge(k, "cites", "decision:k0"); err != nil {
						return err
					}
				}
			}
			return tx.DeleteNode("decision:k1")
		},
	}
	for i, f := range steps {
		if _, err := a.s.Update(lmdbstore.WriteMeta{Scope: "team", RunID: fmt.Sprintf("run%d", i), TaskID: "replay"}, f); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	bulk := a.s.NewBulk(lmdbstore.WriteMeta{RunID: "bulk"})
	for i := range 300 {
		if err := bulk.PutNode(lmdbstore.NodePut{Key: fmt.Sprintf("file:f%d.go", i), Payload: []byte(fmt.Sprintf(`{"n":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
		if err := bulk.PutEdge(lmdbstore.EdgePut{Src: fmt.Sprintf("file:f%d.go", i), Rel: "imports", Dst: fmt.Sprintf("file:f%d.go", (i*7+1)%300)}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := bulk.Commit(); err != nil || c.Rev != lmdbstore.Revision(len(steps)+1) {
		t.Fatalf("bulk: %+v %v", c, err)
	}
	recs := logOf(t, a.s)
	if f := recs[len(steps)-1][0]; f != 3 {
		t.Fatalf("the every-kind transaction's log record has format %d, want 3 (key table)", f)
	}
	b := newMachine(t, filepath.Join(dir, "b"), addr, replica.Options{})
	assertReplicas(t, []*machine{a, b})
	for _, m := range []*machine{a, b} {
		var rel lmdbstore.Relation
		if err := m.s.View(func(r *lmdbstore.ReadTxn) error {
			var err error
			rel, err = r.RelationByName("reviews")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		want := lmdbstore.Relation{ID: rel.ID, Name: "reviews", DefaultWeight: 0.25, Bidirectional: true, Role: roles.Usage, CreatedRev: 1}
		if rel != want || rel.ID == 0 {
			t.Fatalf("%s: relation %+v, want %+v", m.s.Path(), rel, want)
		}
	}
}

// TestBulkFastPathReplays: a bulk load into an empty store (the fast path
// that appends every keyspace, as import and a first ingest do) replays
// through the ordinary write path to the same log and state.
func TestBulkFastPathReplays(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	addr := ts.addr(t, "bulk")
	a := newMachine(t, filepath.Join(dir, "a"), addr, replica.Options{})
	bulk := a.s.NewBulk(lmdbstore.WriteMeta{RunID: "ingest"})
	for i := range 2000 {
		k := fmt.Sprintf("sym:p.F%d", i)
		if err := bulk.PutNode(lmdbstore.NodePut{Key: k, Payload: []byte(fmt.Sprintf(`{"line":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
		if err := bulk.PutEdge(lmdbstore.EdgePut{Src: k, Rel: "calls", Dst: fmt.Sprintf("sym:p.F%d", (i*13+5)%2000), Weight: float32(1 + i%3)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bulk.Commit(); err != nil {
		t.Fatal(err)
	}
	if !bulk.Appended {
		t.Fatal("the bulk load did not take the fast path")
	}
	if f := logOf(t, a.s)[0][0]; f != 3 {
		t.Fatalf("the bulk load's log record has format %d, want 3 (key table)", f)
	}
	b := newMachine(t, filepath.Join(dir, "b"), addr, replica.Options{})
	assertReplicas(t, []*machine{a, b})
}
