package storesnap_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// BenchmarkExportAfterEdit: the engine snapshot export after the store's
// last revision (a one-file edit re-ingested, say), in memory, full and
// started from the export of the revision before (storesnap.Base), the
// two alternating in one run. MEMCTL_SNAP_BENCH_DB names a store (opened
// read-only) whose last revision is the edit; the benchmark is skipped
// without it. cpu-ms/op is the process CPU per export.
func BenchmarkExportAfterEdit(b *testing.B) {
	db := os.Getenv("MEMCTL_SNAP_BENCH_DB")
	if db == "" {
		b.Skip("MEMCTL_SNAP_BENCH_DB not set")
	}
	s, err := lmdbstore.Open(db, lmdbstore.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var rev lmdbstore.Revision
	if err := s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }); err != nil {
		b.Fatal(err)
	}
	if rev < 2 {
		b.Skip("the store has no revision before its last")
	}
	now := time.Now()
	f := lmdbstore.StatusFilter{ValidAt: now}
	opts := snapshot.WriterOptions{Extra: engines.PageRankSection}
	prev, err := storesnap.ExportInMemory(s, lmdbstore.AtRevision(rev-1), f, opts)
	if err != nil {
		b.Fatal(err)
	}
	pf, err := snapshot.FromBytes(prev.Bytes)
	if err != nil {
		b.Fatal(err)
	}
	base := &storesnap.Base{File: pf, ValidAt: prev.ValidAt, ValidUntil: prev.ValidUntil}
	for _, c := range []struct {
		name string
		base *storesnap.Base
	}{{"full", nil}, {"from-base", base}} {
		b.Run(c.name, func(b *testing.B) {
			var self0, self1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
			for b.Loop() {
				m, err := storesnap.ExportInMemoryFrom(s, lmdbstore.AtRevision(rev), f, opts, c.base)
				if err != nil {
					b.Fatal(err)
				}
				if m.FromBase != (c.base != nil) {
					b.Fatalf("FromBase %v", m.FromBase)
				}
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
			cpu := time.Duration(self1.Utime.Nano() + self1.Stime.Nano() - self0.Utime.Nano() - self0.Stime.Nano())
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}
