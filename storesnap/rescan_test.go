package storesnap_test

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// TestExportReadsOnceSameBytes: an export whose state reads the store's
// nodes and edges once and replays them gives, byte for byte, the export
// whose every pass reads the store again (the way it was built before),
// at every revision of random histories: plain ones, and ones of
// superseded, expired, not-yet-valid and deleted items and kv entries
// (the passes that leave history out and find missing nodes), with and
// without history included, full and logical; and so does an export whose
// records overrun what a state keeps (it rescans).
func TestExportReadsOnceSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var stores []*lmdbstore.Store
	histories := 3
	if raceEnabled {
		histories = 1
	}
	for range histories {
		s := newStore(t)
		for _, c := range randomHistory(rng, 30) {
			apply(t, s, c)
		}
		stores = append(stores, s, randomStatusHistory(t, rng, t0))
	}
	filters := []lmdbstore.StatusFilter{
		{ValidAt: t0},
		{ValidAt: t0, IncludeSuperseded: true, IncludeExpired: true},
		{ValidAt: t0.Add(2 * time.Hour), IncludeExpired: true},
	}
	compared, missing, overrun := 0, 0, 0
	for i, s := range stores {
		for rev := lmdbstore.Revision(0); rev <= latestRev(t, s); rev++ {
			for _, f := range filters {
				for _, logical := range []bool{false, true} {
					opts := snapshot.WriterOptions{Logical: logical}
					want, _, err := storesnap.ExportBytesKeeping(s, lmdbstore.AtRevision(rev), f, opts, -1)
					if err != nil {
						t.Fatal(err)
					}
					got, err := storesnap.ExportBytesFiltered(s, lmdbstore.AtRevision(rev), f, opts)
					if err != nil {
						t.Fatal(err)
					}
					// A budget some stores' records overrun: nodes kept and
					// edges not, or neither.
					small, over, err := storesnap.ExportBytesKeeping(s, lmdbstore.AtRevision(rev), f, opts, 600)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) || !bytes.Equal(small, want) {
						t.Fatalf("store %d, revision %d, filter %+v, logical %v: the export differs from the rescanning one (kept all: %v, kept 600 bytes: %v)",
							i, rev, f, logical, bytes.Equal(got, want), bytes.Equal(small, want))
					}
					if over {
						overrun++
					}
					compared++
					missing += countMissing(t, got)
				}
			}
		}
	}
	if missing == 0 {
		t.Fatal("no export had a missing node: the histories do not test that pass")
	}
	if overrun == 0 || overrun == compared {
		t.Fatalf("%d of %d exports overran 600 bytes: the budget is not tested both ways", overrun, compared)
	}
	t.Logf("%d exports compared, %d missing nodes among them, %d over 600 bytes", compared, missing, overrun)
}

func countMissing(t *testing.T, b []byte) int {
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range f.NodeRows() {
		if row.Flags&snapshot.NodeFlagMissing != 0 {
			n++
		}
	}
	return n
}
