package memctlpeer

import (
	"testing"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
	"github.com/memctl/memctl/lmdbstore"
)

// loaded builds a 10K-node graph in sys (in b's temp dir).
func loaded(b *testing.B, sys peers.System) *gen.Graph {
	b.Helper()
	g, err := gen.Generate(gen.Config{Nodes: 10000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := sys.Create(b.TempDir(), g); err != nil {
		b.Fatal(err)
	}
	nodes := make([]uint32, len(g.Nodes))
	for i := range nodes {
		nodes[i] = uint32(i)
	}
	if err := sys.Load(peers.Batch{Nodes: nodes}); err != nil {
		b.Fatal(err)
	}
	for off := 0; off < len(g.Edges); off += 20000 {
		if err := sys.Load(peers.Batch{Edges: g.Edges[off:min(off+20000, len(g.Edges))]}); err != nil {
			b.Fatal(err)
		}
	}
	if err := sys.Settle(); err != nil {
		b.Fatal(err)
	}
	return g
}

// These isolate the fixed cost of one memctl read call (View) from the
// scan itself; compare with BenchmarkLMDBRawGetOut, the floor.

func BenchmarkMemctlViewEmpty(b *testing.B) {
	m := &Memctl{}
	loaded(b, m)
	defer m.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.st.View(func(*lmdbstore.ReadTxn) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemctlGetOutPerView(b *testing.B) {
	m := &Memctl{}
	g := loaded(b, m)
	defer m.Close()
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.GetOut(uint32(i*7919%len(g.Nodes)), func(string, string) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemctlGetOutOneView(b *testing.B) {
	m := &Memctl{}
	g := loaded(b, m)
	defer m.Close()
	n := 0
	b.ResetTimer()
	err := m.st.View(func(r *lmdbstore.ReadTxn) error {
		for i := 0; i < b.N; i++ {
			id := m.ids[i*7919%len(g.Nodes)]
			if err := r.ScanOut(id, 0, lmdbstore.At{}, func(lmdbstore.EdgeRef) bool { n++; return true }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkLMDBRawGetOut(b *testing.B) {
	s := &peers.LMDBRaw{}
	g := loaded(b, s)
	defer s.Close()
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.GetOut(uint32(i*7919%len(g.Nodes)), func(string, string) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBoltGetOut(b *testing.B) {
	s := &peers.Bolt{}
	g := loaded(b, s)
	defer s.Close()
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.GetOut(uint32(i*7919%len(g.Nodes)), func(string, string) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}
