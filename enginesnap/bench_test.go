package enginesnap_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// BenchmarkGet: a snapshot of a 2,000-node, 20,000-edge store from a warm
// provider (the MCP server's and a long-lived assembler's case), from a
// new one that exports (the first call), and from a new one that maps
// the file an earlier process wrote (a one-shot command).
func BenchmarkGet(b *testing.B) {
	s, err := syntheticStore(b, 2000, 10)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(s.Path(), enginesnap.SnapshotFile)
	get := func(p *enginesnap.Provider, k enginesnap.Kind) {
		sn, _, err := p.At(k, lmdbstore.At{})
		if err != nil {
			b.Fatal(err)
		}
		sn.Release()
	}
	for _, k := range []enginesnap.Kind{enginesnap.Exact, enginesnap.Ranking} {
		b.Run("warm/"+k.String(), func(b *testing.B) {
			p := enginesnap.New(s, enginesnap.Options{})
			defer p.Close()
			get(p, k)
			for b.Loop() {
				get(p, k)
			}
		})
		b.Run("first/"+k.String(), func(b *testing.B) {
			for b.Loop() {
				p := enginesnap.New(s, enginesnap.Options{})
				get(p, k)
				p.Close()
			}
		})
	}
	b.Run("mapped-file/ranking", func(b *testing.B) {
		p := enginesnap.New(s, enginesnap.Options{Path: path})
		get(p, enginesnap.Ranking)
		p.Close()
		for b.Loop() {
			p := enginesnap.New(s, enginesnap.Options{Path: path})
			get(p, enginesnap.Ranking)
			if p.Builds(enginesnap.Ranking) != 0 {
				b.Fatal("the file was not reused")
			}
			p.Close()
		}
	})
}

// syntheticStore is a store of nodes functions, each calling degree others.
func syntheticStore(b *testing.B, nodes, degree int) (*lmdbstore.Store, error) {
	s, err := lmdbstore.Init(filepath.Join(b.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		for i := range nodes {
			if err := tx.PutNode(lmdbstore.NodePut{Key: fmt.Sprintf("sym:pkg.n%d", i), Type: "func"}); err != nil {
				return err
			}
			for k := 1; k <= degree; k++ {
				dst := fmt.Sprintf("sym:pkg.n%d", (i*7919+k*104729)%nodes)
				if err := tx.PutEdge(lmdbstore.EdgePut{Src: fmt.Sprintf("sym:pkg.n%d", i), Rel: "calls", Dst: dst}); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// BenchmarkRebuildFile: the export a one-shot command makes when the store
// has a revision its context.snap does not serve (after a refresh wrote
// one): a new provider, no usable file, the Ranking snapshot exported to
// the file and mapped. MEMCTL_SNAP_BENCH_DB names a store to read (say a
// 1,000-file Python tree after `ingest code`; opened read-only, the file
// is written to a temporary directory); without it, BenchmarkGet's
// synthetic store. cpu-ms/op is the process CPU per rebuild.
func BenchmarkRebuildFile(b *testing.B) {
	var s *lmdbstore.Store
	var err error
	if db := os.Getenv("MEMCTL_SNAP_BENCH_DB"); db != "" {
		s, err = lmdbstore.Open(db, lmdbstore.Options{ReadOnly: true})
	} else {
		s, err = syntheticStore(b, 2000, 10)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(b.TempDir(), enginesnap.SnapshotFile)
	var self0, self1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	for b.Loop() {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		p := enginesnap.New(s, enginesnap.Options{Path: path})
		sn, _, err := p.At(enginesnap.Ranking, lmdbstore.At{})
		if err != nil {
			b.Fatal(err)
		}
		sn.Release()
		if p.Builds(enginesnap.Ranking) != 1 || sn.Path != path {
			b.Fatal("not rebuilt to the file")
		}
		p.Close()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	cpu := time.Duration(self1.Utime.Nano() + self1.Stime.Nano() - self0.Utime.Nano() - self0.Stime.Nano())
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
