package ops

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/lmdbstore"
)

func testStore(t *testing.T) *lmdbstore.Store {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestListEdgesOrderAndPages: edges come in (relation, peer key) order
// whatever their insertion order; pages cut that order; payloads are read
// for the page.
func TestListEdgesOrderAndPages(t *testing.T) {
	s := testStore(t)
	_, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		for _, e := range []lmdbstore.EdgePut{
			{Src: "a", Rel: "imports", Dst: "b"},
			{Src: "a", Rel: "calls", Dst: "d", Payload: json.RawMessage(`{"n":1}`)},
			{Src: "a", Rel: "calls", Dst: "c"},
			{Src: "x", Rel: "calls", Dst: "c"},
		} {
			if err := tx.PutEdge(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Src, Rel, Dst, Payload string }
	rows := func(l EdgeList) []row {
		var out []row
		for _, e := range l.Edges {
			out = append(out, row{e.Src, e.Rel, e.Dst, string(e.Payload)})
		}
		return out
	}
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		all, err := ListEdges(r, EdgesRequest{Key: "a", AnyStatus: true})
		if err != nil {
			return err
		}
		want := []row{{"a", "calls", "c", ""}, {"a", "calls", "d", `{"n":1}`}, {"a", "imports", "b", ""}}
		if d := cmp.Diff(want, rows(all)); d != "" || all.Total != 3 || all.NextOffset != 0 {
			t.Errorf("out-edges of a (total %d, next %d):\n%s", all.Total, all.NextOffset, d)
		}
		page, err := ListEdges(r, EdgesRequest{Key: "a", AnyStatus: true, Limit: 1, Offset: 1})
		if err != nil {
			return err
		}
		if d := cmp.Diff(want[1:2], rows(page)); d != "" || page.Total != 3 || page.NextOffset != 2 {
			t.Errorf("page 2 of 1 (total %d, next %d):\n%s", page.Total, page.NextOffset, d)
		}
		in, err := ListEdges(r, EdgesRequest{Key: "c", In: true, Rel: "calls", AnyStatus: true})
		if err != nil {
			return err
		}
		if d := cmp.Diff([]row{{"a", "calls", "c", ""}, {"x", "calls", "c", ""}}, rows(in)); d != "" {
			t.Errorf("in-edges of c:\n%s", d)
		}
		if _, err := ListEdges(r, EdgesRequest{Key: "a", Limit: -1}); err == nil {
			t.Error("limit -1 accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
