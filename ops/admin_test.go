package ops

import (
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

// TestCheckListsAtMost: the count of missing nodes is every one; the list
// is cut at listed (the MCP server's 100), or complete (the CLI's -1).
func TestCheckListsAtMost(t *testing.T) {
	s := testStore(t)
	_, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutEdge(lmdbstore.EdgePut{Src: "a:1", Rel: "calls", Dst: "a:2"})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ listed, want int }{{1, 1}, {-1, 2}, {0, 0}} {
		rep, err := Check(s, tc.listed)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK || rep.MissingNodes != 2 || len(rep.MissingNodesListed) != tc.want || rep.Problems == nil || rep.Warnings == nil {
			t.Errorf("listed %d: %+v, want ok, 2 missing, %d listed, empty lists", tc.listed, rep, tc.want)
		}
	}
	st, err := Stats(s)
	if err != nil {
		t.Fatal(err)
	}
	if st.Edges != 1 || st.MissingNodes != 2 || st.Warnings == nil || len(st.Keyspaces) == 0 {
		t.Errorf("stats: %+v", st)
	}
}
