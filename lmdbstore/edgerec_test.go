package lmdbstore

import (
	"encoding/json"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
)

// hasERecord reports whether edge src -rel-> dst has a stored e record.
func hasERecord(t *testing.T, s *Store, src, rel, dst string) bool {
	t.Helper()
	var has bool
	err := s.View(func(r *ReadTxn) error {
		x, err := r.RelationByName(rel)
		if err != nil {
			return err
		}
		_, err = r.txn().Get(s.db.e, edgeKey(IDOf(src), x.ID, IDOf(dst)))
		if lmdb.IsNotFound(err) {
			return nil
		}
		has = err == nil
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return has
}

// edgeSeen is what GetEdge answers at one revision, as compared below.
type edgeSeen struct {
	Found              bool
	Rev, CreatedRev    Revision
	Weight             float32
	Payload            string
	Scope, Run, Task   string
	CreatedTS, Updated time.Time
}

func getEdge(t *testing.T, s *Store, src, rel, dst string, at At) edgeSeen {
	t.Helper()
	var got edgeSeen
	err := s.View(func(r *ReadTxn) error {
		e, err := r.GetEdge(src, rel, dst, at)
		if err != nil {
			return nil // not found at that revision
		}
		got = edgeSeen{true, e.Rev, e.CreatedRev, e.Weight, string(e.Payload), e.Scope, e.RunID, e.TaskID, e.CreatedTS, e.UpdatedTS}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestImplicitEdgeRecords: a plain creation (no payload, default weight,
// the transaction's provenance) stores no e record, yet every read answers
// with its full record (times and provenance from revs); any other version
// has a record; replacing an implicit version keeps it in hist exactly as
// it read; deleting and re-creating goes back to implicit; Check is clean
// throughout (newStore's cleanup).
func TestImplicitEdgeRecords(t *testing.T) {
	s := newStore(t, Options{})
	const a, b = "sym:a", "sym:b"
	meta := WriteMeta{Scope: "repo", RunID: "r1", TaskID: "t1"}
	put := func(m WriteMeta, p EdgePut) Commit {
		t.Helper()
		p.Src, p.Rel, p.Dst = a, "calls", b
		return mustUpdate(t, s, m, func(tx *WriteTxn) error { return tx.PutEdge(p) })
	}
	// rev 1: plain creation: implicit.
	c1 := put(meta, EdgePut{})
	if hasERecord(t, s, a, "calls", b) {
		t.Fatal("a plain creation stored an e record")
	}
	want1 := edgeSeen{true, 1, 1, 1, "", "repo", "r1", "t1", c1.Time, c1.Time}
	if d := cmp.Diff(want1, getEdge(t, s, a, "calls", b, At{})); d != "" {
		t.Errorf("implicit record (-want +got):\n%s", d)
	}
	// rev 2: another run re-puts it unchanged: no change, no revision.
	if c := put(WriteMeta{RunID: "r2"}, EdgePut{}); c.Rev != 0 {
		t.Errorf("an unchanged put of an implicit edge committed rev %d", c.Rev)
	}
	// rev 2: a new weight: explicit record, the implicit version in hist.
	c2 := put(WriteMeta{RunID: "r2"}, EdgePut{Weight: 0.75})
	if !hasERecord(t, s, a, "calls", b) {
		t.Fatal("an explicit weight stored no e record")
	}
	want2 := edgeSeen{true, 2, 1, 0.75, "", "", "r2", "", c1.Time, c2.Time}
	if d := cmp.Diff(want2, getEdge(t, s, a, "calls", b, At{})); d != "" {
		t.Errorf("after the weight change (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want1, getEdge(t, s, a, "calls", b, AtRevision(1))); d != "" {
		t.Errorf("the implicit version read back from hist (-want +got):\n%s", d)
	}
	// rev 3: delete; rev 4: re-created plain: implicit again.
	mustUpdate(t, s, meta, func(tx *WriteTxn) error { return tx.DeleteEdge(a, "calls", b) })
	c4 := put(meta, EdgePut{})
	if hasERecord(t, s, a, "calls", b) {
		t.Error("a re-creation after a delete kept the tombstone's e record")
	}
	want4 := edgeSeen{true, 4, 4, 1, "", "repo", "r1", "t1", c4.Time, c4.Time}
	if d := cmp.Diff(want4, getEdge(t, s, a, "calls", b, At{})); d != "" {
		t.Errorf("re-created (-want +got):\n%s", d)
	}
	if got := getEdge(t, s, a, "calls", b, AtRevision(3)); got.Found {
		t.Errorf("at the delete's revision the edge reads as %+v", got)
	}
	if d := cmp.Diff(want2, getEdge(t, s, a, "calls", b, AtRevision(2))); d != "" {
		t.Errorf("at revision 2 (-want +got):\n%s", d)
	}
	// rev 5: a payload makes it explicit; rev 6 in one transaction: with
	// a payload, then without, on a new edge: implicit at commit.
	put(meta, EdgePut{Payload: json.RawMessage(`{"why":"x"}`)})
	if !hasERecord(t, s, a, "calls", b) {
		t.Error("a payload stored no e record")
	}
	mustUpdate(t, s, meta, func(tx *WriteTxn) error {
		if err := tx.PutEdge(EdgePut{Src: b, Rel: "calls", Dst: a, Payload: json.RawMessage(`1`)}); err != nil {
			return err
		}
		return tx.PutEdge(EdgePut{Src: b, Rel: "calls", Dst: a})
	})
	if hasERecord(t, s, b, "calls", a) {
		t.Error("a creation whose payload was removed in the same transaction kept its e record")
	}
	// Provenance of its own (an op scope unlike the transaction's): explicit.
	mustUpdate(t, s, meta, func(tx *WriteTxn) error {
		return tx.PutEdge(EdgePut{Src: a, Rel: "calls", Dst: "sym:c", Scope: "other"})
	})
	if !hasERecord(t, s, a, "calls", "sym:c") {
		t.Error("an edge with its own scope stored no e record")
	}
	// Every version, oldest first, with the implicit ones synthesized.
	var revs []Revision
	err := s.View(func(r *ReadTxn) error {
		x, _ := r.RelationByName("calls")
		return r.EdgeVersions(IDOf(a), x.ID, IDOf(b), func(v Version) error {
			revs = append(revs, v.Rev)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Revision{1, 2, 3, 4, 5}, revs); d != "" {
		t.Errorf("versions (-want +got):\n%s", d)
	}
}

// TestBulkImplicitEdges: a bulk load stores the records the ordinary path
// stores (implicit for plain edges, explicit for the others). A weight
// equal to the relation's default (calls: 1) is stored as if not given.
func TestBulkImplicitEdges(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		s := newStore(t, Options{})
		edges := []EdgePut{
			{Src: "a", Rel: "calls", Dst: "b"},
			{Src: "a", Rel: "calls", Dst: "c", Weight: 0.5},
			{Src: "b", Rel: "calls", Dst: "c", Payload: json.RawMessage(`{"x":1}`)},
			{Src: "c", Rel: "calls", Dst: "a", RunID: "own"},
			{Src: "b", Rel: "calls", Dst: "a", Weight: 1},
		}
		if bulk {
			bl := s.NewBulk(WriteMeta{RunID: "load"})
			for _, e := range edges {
				if err := bl.PutEdge(e); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := bl.Commit(); err != nil {
				t.Fatal(err)
			}
			if !bl.Appended {
				t.Fatal("the bulk load did not take the fast path")
			}
		} else {
			mustUpdate(t, s, WriteMeta{RunID: "load"}, func(tx *WriteTxn) error {
				for _, e := range edges {
					if err := tx.PutEdge(e); err != nil {
						return err
					}
				}
				return nil
			})
		}
		var got []bool
		for _, e := range edges {
			got = append(got, hasERecord(t, s, e.Src, e.Rel, e.Dst))
		}
		if d := cmp.Diff([]bool{false, true, true, true, false}, got); d != "" {
			t.Errorf("bulk %v: e records (-want +got):\n%s", bulk, d)
		}
	}
}

// TestDamageErrnosOnWrites: errors LMDB returns only on damaged pages, met
// by a write or a commit (found by the page-damage suite: a node-size flip
// made mdb_del fail with MDB_PAGE_FULL, a header flip made the commit's
// pwrite fail with EFAULT), are corruption (exit 3), not unexpected.
func TestDamageErrnosOnWrites(t *testing.T) {
	s := newStore(t, Options{})
	for _, e := range []error{
		&lmdb.OpError{Op: "mdb_del", Errno: lmdb.PageFull},
		&lmdb.OpError{Op: "mdb_txn_commit", Errno: syscall.EFAULT},
	} {
		retry, err := s.recoverable(e)
		if retry || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: retry %v, %v; want ErrCorrupt", e, retry, err)
		}
	}
}
