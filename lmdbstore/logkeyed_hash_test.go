package lmdbstore_test

import (
	"testing"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/storesnap"
)

// TestKeyedLogSameLogicalHash: the same random history written by a store
// that writes log format 02 and by one that writes 03 has the same
// logical snapshot hash (SPEC.md §7.12) at every revision.
func TestKeyedLogSameLogicalHash(t *testing.T) {
	var stores [2]*lmdbstore.Store
	for i := range stores {
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clock := func() time.Time { t0 = t0.Add(time.Millisecond); return t0 }
		s, err := lmdbstore.Init(t.TempDir(), lmdbstore.Options{NoSync: true, Clock: clock, MapSize: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if i == 0 {
			s.SetLogFormat02ForTest()
		}
		lmdbstore.WriteRandomHistoryForTest(t, s, 7)
		stores[i] = s
	}
	var last lmdbstore.Revision
	if err := stores[1].View(func(r *lmdbstore.ReadTxn) error { last = r.Revision(); return nil }); err != nil {
		t.Fatal(err)
	}
	if last < 20 {
		t.Fatalf("only %d revisions", last)
	}
	for rev := lmdbstore.Revision(1); rev <= last; rev++ {
		h02, err := storesnap.LogicalHash(stores[0], lmdbstore.AtRevision(rev))
		if err != nil {
			t.Fatal(err)
		}
		h03, err := storesnap.LogicalHash(stores[1], lmdbstore.AtRevision(rev))
		if err != nil {
			t.Fatal(err)
		}
		if h02 != h03 {
			t.Fatalf("revision %d: logical hash %x with format 02, %x with 03", rev, h02, h03)
		}
	}
}
