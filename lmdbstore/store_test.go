package lmdbstore

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type simpleEdge struct {
	Src, Rel, Dst string
	Rev           Revision
	Weight        float32
}

func readEdges(t testing.TB, r *ReadTxn, es []Edge) []simpleEdge {
	t.Helper()
	var out []simpleEdge
	for _, e := range es {
		src, err := r.KeyOf(e.Src)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := r.KeyOf(e.Dst)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := r.RelationByID(e.Rel)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, simpleEdge{src, rel.Name, dst, e.Rev, e.Weight})
	}
	return out
}

func TestPutGetBasics(t *testing.T) {
	s := newStore(t, Options{})
	c1 := mustUpdate(t, s, WriteMeta{Scope: "repo", RunID: "r1", TaskID: "t1"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:a.go", Payload: json.RawMessage(`{"lines":3}`)}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "file:a.go", Rel: "defines", Dst: "sym:a.F"}); err != nil {
			return err
		}
		return tx.PutEdge(EdgePut{Src: "file:a.go", Rel: "imports", Dst: "file:b.go", Weight: 0.5})
	})
	if c1.Rev != 1 || c1.Ops != 3 {
		t.Fatalf("commit = %+v", c1)
	}
	c2 := mustUpdate(t, s, WriteMeta{RunID: "r2"}, func(tx *WriteTxn) error {
		return tx.DeleteEdge("file:a.go", "defines", "sym:a.F")
	})
	if c2.Rev != 2 {
		t.Fatalf("commit = %+v", c2)
	}
	if c, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error { return nil }); err != nil || c.Rev != 0 {
		t.Fatalf("empty update = %+v, %v", c, err)
	}
	err := s.View(func(r *ReadTxn) error {
		n, err := r.GetNode("file:a.go", At{})
		if err != nil {
			return err
		}
		want := Node{ID: IDOf("file:a.go"), Key: "file:a.go", Type: "file", Payload: json.RawMessage(`{"lines":3}`),
			Scope: "repo", RunID: "r1", TaskID: "t1", CreatedTS: c1.Time, UpdatedTS: c1.Time, CreatedRev: 1, Rev: 1}
		if diff := cmp.Diff(want, n); diff != "" {
			t.Errorf("GetNode (-want +got):\n%s", diff)
		}
		out, err := r.GetOut("file:a.go", "", At{})
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]simpleEdge{{"file:a.go", "imports", "file:b.go", 1, 0.5}}, readEdges(t, r, out)); diff != "" {
			t.Errorf("GetOut latest (-want +got):\n%s", diff)
		}
		out, err = r.GetOut("file:a.go", "", AtRevision(1))
		if err != nil {
			return err
		}
		// ordered by relation id: defines (1) before imports (4)
		want1 := []simpleEdge{{"file:a.go", "defines", "sym:a.F", 1, 1}, {"file:a.go", "imports", "file:b.go", 1, 0.5}}
		if diff := cmp.Diff(want1, readEdges(t, r, out)); diff != "" {
			t.Errorf("GetOut at 1 (-want +got):\n%s", diff)
		}
		in, err := r.GetIn("sym:a.F", "defines", AtRevision(1))
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]simpleEdge{{"file:a.go", "defines", "sym:a.F", 1, 1}}, readEdges(t, r, in)); diff != "" {
			t.Errorf("GetIn at 1 (-want +got):\n%s", diff)
		}
		rev, err := r.Resolve(AtTime(c1.Time))
		if err != nil || rev != 1 {
			t.Errorf("Resolve(AtTime(c1)) = %d, %v", rev, err)
		}
		_, err = r.Resolve(AtTime(c1.Time.Add(-1)))
		wantErr(t, err, ErrNotFound)
		_, err = r.Resolve(AtRevision(3))
		wantErr(t, err, ErrNotFound)
		var ops []Op
		if err := r.DiffSince(AtRevision(0), DiffFilter{RunID: "r2"}, func(op Op) error { ops = append(ops, op); return nil }); err != nil {
			return err
		}
		wantOps := []Op{{Rev: 2, TS: c2.Time, Kind: OpDelEdge, RunID: "r2", Src: "file:a.go", Rel: "defines", Dst: "sym:a.F"}}
		if diff := cmp.Diff(wantOps, ops); diff != "" {
			t.Errorf("DiffSince (-want +got):\n%s", diff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUnknownRelationSuggests(t *testing.T) {
	s := newStore(t, Options{})
	_, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutEdge(EdgePut{Src: "a", Rel: "imprts", Dst: "b"})
	})
	var ue *UnknownRelationError
	if !errors.As(err, &ue) || ue.Suggestion != "imports" || !errors.Is(err, ErrInvalid) {
		t.Fatalf("error = %v, want unknown relation suggesting imports", err)
	}
}
