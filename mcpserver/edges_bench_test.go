package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

// BenchmarkGetOutWarm times one get_out call inside a warm server (no
// transport): the resolution of ids, relation names and commit times of a
// node's edges, the resolution a cache of immutables would save (SPEC §10; measured for issue #24).
func BenchmarkGetOutWarm(b *testing.B) {
	const nodes, degree = 2000, 50
	st, err := lmdbstore.Init(filepath.Join(b.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for lo := 0; lo < nodes; lo += 200 {
		_, err := st.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			for i := lo; i < lo+200; i++ {
				for k := 1; k <= degree; k++ {
					dst := fmt.Sprintf("sym:pkg.n%d", (i*7919+k*104729)%nodes)
					if err := tx.PutEdge(lmdbstore.EdgePut{Src: fmt.Sprintf("sym:pkg.n%d", i), Rel: "calls", Dst: dst}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	s := New(st, Options{})
	key := func(i int) string { return fmt.Sprintf("sym:pkg.n%d", (i*31)%nodes) }
	for i := range nodes { // warm every cache
		if _, err := s.getOut(context.Background(), &NeighboursArgs{Key: key(i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, err := s.getOut(context.Background(), &NeighboursArgs{Key: key(i)})
		if err != nil || res.Total == 0 {
			b.Fatalf("get_out %s: %v (%d edges)", key(i), err, res.Total)
		}
	}
}
