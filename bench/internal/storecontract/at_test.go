// Package storecontract pins the store semantics the peer benchmark relies on:
// AtRevision(r) is the state right after revision r committed, so it
// includes r's own writes.
package storecontract

import (
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

func TestAtRevisionIncludesItsOwnWrites(t *testing.T) {
	st, err := lmdbstore.Init(t.TempDir()+"/s", lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var revs []lmdbstore.Revision
	for _, d := range []string{"b", "c", "d"} {
		c, err := st.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			return tx.PutEdge(lmdbstore.EdgePut{Src: "file:a", Rel: "calls", Dst: "file:" + d})
		})
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, c.Rev)
	}
	err = st.View(func(r *lmdbstore.ReadTxn) error {
		for i, rev := range revs {
			n := 0
			err := r.ScanOut(lmdbstore.IDOf("file:a"), 0, lmdbstore.AtRevision(rev), func(lmdbstore.EdgeRef) bool { n++; return true })
			if err != nil {
				return err
			}
			if n != i+1 {
				t.Errorf("ScanOut at revision %d: %d edges, want %d", rev, n, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
