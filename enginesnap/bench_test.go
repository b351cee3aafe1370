package enginesnap_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// BenchmarkGet: a snapshot of a 2,000-node, 20,000-edge store from a warm
// provider (the MCP server's and a long-lived assembler's case), from a
// new one that exports (the first call), and from a new one that maps
// the file an earlier process wrote (a one-shot command).
func BenchmarkGet(b *testing.B) {
	const nodes, degree = 2000, 10
	s, err := lmdbstore.Init(filepath.Join(b.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
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
		b.Fatal(err)
	}
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
