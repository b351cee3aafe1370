package lmdbstore

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNoChangeWithValidityAndSupersede: for every operation kind (valid
// times and supersedes included), an operation that leaves
// the record as it is commits nothing; provenance alone does not count.
func TestNoChangeWithValidityAndSupersede(t *testing.T) {
	s := newStore(t, Options{})
	valid := Validity{From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	first := mustUpdate(t, s, WriteMeta{RunID: "r1"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "n:a", Payload: json.RawMessage(`{"b":1,"a":[1,2]}`), Valid: valid}); err != nil {
			return err
		}
		if err := tx.PutNode(NodePut{Key: "n:b"}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "n:a", Rel: "calls", Dst: "n:b", Payload: json.RawMessage(`{"x":"y"}`)}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "n:b", Rel: "calls", Dst: "n:a", Weight: 0.5}); err != nil {
			return err
		}
		if err := tx.PutKV(KVPut{Scope: "s", Namespace: "ns", Key: "k", Payload: json.RawMessage(`"v"`), Valid: valid}); err != nil {
			return err
		}
		return tx.Supersede("n:a", "n:b")
	})
	if first.Rev != 1 {
		t.Fatalf("first commit %+v", first)
	}
	same := []struct {
		name string
		op   func(tx *WriteTxn) error
	}{
		{"put_node, same payload re-spaced and reordered", func(tx *WriteTxn) error {
			return tx.PutNode(NodePut{Key: "n:a", Payload: json.RawMessage(` { "a" : [1, 2], "b":1 } `), Valid: valid, Scope: "other"})
		}},
		{"put_node, explicit type equal to the derived one", func(tx *WriteTxn) error {
			return tx.PutNode(NodePut{Key: "n:b", Type: "n", Payload: json.RawMessage(`null`), TaskID: "t9"})
		}},
		{"put_edge, same payload", func(tx *WriteTxn) error {
			return tx.PutEdge(EdgePut{Src: "n:a", Rel: "calls", Dst: "n:b", Payload: json.RawMessage(`{"x": "y"}`), RunID: "r2"})
		}},
		{"put_edge, explicit weight equal to the default", func(tx *WriteTxn) error {
			return tx.PutEdge(EdgePut{Src: "n:b", Rel: "calls", Dst: "n:a", Weight: 0.5})
		}},
		{"put_kv, same payload and validity", func(tx *WriteTxn) error {
			return tx.PutKV(KVPut{Scope: "s", Namespace: "ns", Key: "k", Payload: json.RawMessage(` "v" `), Valid: valid, RunID: "r3"})
		}},
		{"supersede again", func(tx *WriteTxn) error { return tx.Supersede("n:a", "n:b") }},
		{"delete of nothing", func(tx *WriteTxn) error {
			if err := tx.DeleteNode("n:zz"); !errors.Is(err, ErrNotFound) {
				return err
			}
			if err := tx.DeleteEdge("n:a", "imports", "n:b"); !errors.Is(err, ErrNotFound) {
				return err
			}
			if err := tx.DeleteKV("s", "ns", "zz"); !errors.Is(err, ErrNotFound) {
				return err
			}
			return nil
		}},
		{"add_rel of an existing relation", func(tx *WriteTxn) error {
			if _, err := tx.AddRelation(Relation{Name: "calls"}); !errors.Is(err, ErrInvalid) {
				return err
			}
			return nil
		}},
	}
	for _, c := range same {
		got := mustUpdate(t, s, WriteMeta{RunID: "again", TaskID: "again"}, c.op)
		if got.Rev != 0 || got.Ops != 0 {
			t.Errorf("%s: committed %+v, want nothing", c.name, got)
		}
	}
	// A mixed batch: every no-op above and one change is one revision with
	// one logged operation.
	mixed := mustUpdate(t, s, WriteMeta{RunID: "mixed"}, func(tx *WriteTxn) error {
		for _, c := range same {
			if err := c.op(tx); err != nil {
				return err
			}
		}
		return tx.PutKV(KVPut{Scope: "s", Namespace: "ns", Key: "k", Payload: json.RawMessage(`"changed"`), Valid: valid})
	})
	if mixed.Rev != 2 || mixed.Ops != 1 {
		t.Fatalf("mixed batch committed %+v, want rev 2 with 1 op", mixed)
	}
	var ops []Op
	if err := s.View(func(r *ReadTxn) error {
		return r.DiffSince(AtRevision(1), DiffFilter{}, func(op Op) error { ops = append(ops, op); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Kind != OpPutKV || string(ops[0].Payload) != `"changed"` || !ops[0].Valid.Equal(valid) {
		t.Fatalf("log after the mixed batch: %+v", ops)
	}
	// Changing validity alone is a change.
	if c := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutNode(NodePut{Key: "n:a", Payload: json.RawMessage(`{"a":[1,2],"b":1}`)})
	}); c.Rev != 3 {
		t.Fatalf("dropping the validity committed %+v, want rev 3", c)
	}
}

// TestValidityRefused: invalid valid-time intervals are refused.
func TestValidityRefused(t *testing.T) {
	s := newStore(t, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for _, v := range []Validity{
			{From: t0, Until: t0},
			{From: t0, Until: t0.Add(-time.Nanosecond)},
			{Until: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
		} {
			if err := tx.PutNode(NodePut{Key: "n:a", Valid: v}); !errors.Is(err, ErrInvalid) {
				t.Errorf("PutNode with validity %+v: %v, want ErrInvalid", v, err)
			}
			if err := tx.PutKV(KVPut{Scope: "s", Namespace: "n", Key: "k", Payload: json.RawMessage(`1`), Valid: v}); !errors.Is(err, ErrInvalid) {
				t.Errorf("PutKV with validity %+v: %v, want ErrInvalid", v, err)
			}
		}
		return nil
	})
}

// TestSupersedeWrites: what Supersede and supersedes/contradicts edges
// refuse, and what a superseded item's status says.
func TestSupersedeWrites(t *testing.T) {
	s := newStore(t, Options{})
	kvA := KVAddress("repo", "decisions", "a/b%c")
	if got := kvA; got != "kv:repo/decisions/a%2Fb%25c" {
		t.Fatalf("KVAddress = %q", got)
	}
	if sc, ns, k, ok := ParseKVAddress(kvA); !ok || sc != "repo" || ns != "decisions" || k != "a/b%c" {
		t.Fatalf("ParseKVAddress(%q) = %q %q %q %v", kvA, sc, ns, k, ok)
	}
	for _, bad := range []string{"kv:a/b", "kv:a/b/c/d", "kv:a//c", "kv:a/b/%2f", "kv:a/b/%zz", "file:x"} {
		if _, _, _, ok := ParseKVAddress(bad); ok {
			t.Errorf("ParseKVAddress(%q) accepted", bad)
		}
	}
	c1 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for _, k := range []string{"decision:v1", "decision:v2", "decision:v3"} {
			if err := tx.PutNode(NodePut{Key: k}); err != nil {
				return err
			}
		}
		return tx.PutKV(KVPut{Scope: "repo", Namespace: "decisions", Key: "a/b%c", Payload: json.RawMessage(`1`)})
	})
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		wantErr(t, tx.PutNode(NodePut{Key: "kv:repo/decisions/x"}), ErrInvalid)
		wantErr(t, tx.PutEdge(EdgePut{Src: "kv:nope", Rel: "calls", Dst: "x"}), ErrInvalid)
		wantErr(t, tx.Supersede("decision:v1", "decision:nope"), ErrNotFound)
		wantErr(t, tx.Supersede(KVAddress("repo", "decisions", "gone"), "decision:v1"), ErrNotFound)
		wantErr(t, tx.Supersede("decision:v1", "decision:v1"), ErrInvalid)
		wantErr(t, tx.PutEdge(EdgePut{Src: "x", Rel: "contradicts", Dst: "x"}), ErrInvalid)
		return nil
	})
	c2 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error { return tx.Supersede("decision:v1", "decision:v2") })
	c3 := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		if err := tx.Supersede("decision:v2", "decision:v3"); err != nil {
			return err
		}
		return tx.Supersede(kvA, "decision:v3")
	})
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		wantErr(t, tx.Supersede("decision:v3", "decision:v1"), ErrInvalid) // a cycle through v2
		return nil
	})
	err := s.View(func(r *ReadTxn) error {
		st, err := r.Status("decision:v1", At{}, time.Now())
		if err != nil {
			return err
		}
		want := Status{Valid: true, SupersededBy: []Supersession{{By: "decision:v2", Rev: c2.Rev, TS: c2.Time}}, Newest: "decision:v3"}
		if diff := cmp.Diff(want, st); diff != "" {
			t.Errorf("status of v1 (-want +got):\n%s", diff)
		}
		st, err = r.Status("decision:v1", AtRevision(c1.Rev), time.Now())
		if err != nil || st.Superseded() {
			t.Errorf("status of v1 before the supersede: %+v, %v", st, err)
		}
		st, err = r.Status(kvA, At{}, time.Now())
		if err != nil || st.Newest != "decision:v3" || len(st.SupersededBy) != 1 || st.SupersededBy[0].Rev != c3.Rev {
			t.Errorf("status of the kv entry: %+v, %v", st, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestValidityBounds: NextChange is the first bound after t at which
// Contains changes (checked against Contains minute by minute), and
// EarlierBound treats zero as no bound.
func TestValidityBounds(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	for _, v := range []Validity{{}, {From: h(1)}, {Until: h(2)}, {From: h(1), Until: h(3)}} {
		for at := h(-1); at.Before(h(4)); at = at.Add(30 * time.Minute) {
			// The first minute after at where Contains differs (zero: none
			// within five hours).
			var want time.Time
			for m := at.Add(time.Minute); m.Before(h(5)); m = m.Add(time.Minute) {
				if v.Contains(m) != v.Contains(at) {
					want = m
					break
				}
			}
			if got := v.NextChange(at); !got.Equal(want) {
				t.Errorf("%+v at %v: NextChange %v, want %v", v, at, got, want)
			}
		}
	}
	for _, c := range []struct{ a, b, want time.Time }{
		{time.Time{}, time.Time{}, time.Time{}},
		{h(1), time.Time{}, h(1)},
		{time.Time{}, h(2), h(2)},
		{h(1), h(2), h(1)},
		{h(2), h(1), h(1)},
	} {
		if got := EarlierBound(c.a, c.b); !got.Equal(c.want) {
			t.Errorf("EarlierBound(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
