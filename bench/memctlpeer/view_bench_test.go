package memctlpeer

import (
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
	"github.com/memctl/memctl/lmdbstore"
)

// benchNodes is the graph size of these benchmarks: 10,000 nodes, or
// BENCH_NODES.
func benchNodes(b *testing.B) int {
	if s := os.Getenv("BENCH_NODES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("BENCH_NODES=%q: %v", s, err)
		}
		return n
	}
	return 10000
}

// loaded builds the benchmark graph in sys (in b's temp dir).
func loaded(b *testing.B, sys peers.System) *gen.Graph {
	b.Helper()
	g, err := gen.Generate(gen.Config{Nodes: benchNodes(b), Seed: 1})
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

// hubs are the 100 nodes of highest in-degree (the harness's hub phase).
func hubs(g *gen.Graph) []uint32 {
	deg := make([]int, len(g.Nodes))
	for _, e := range g.Edges {
		deg[e.Dst]++
	}
	idx := make([]uint32, len(g.Nodes))
	for i := range idx {
		idx[i] = uint32(i)
	}
	slices.SortStableFunc(idx, func(a, b uint32) int { return deg[b] - deg[a] })
	return idx[:100]
}

// benchReads times read over nodes, one call per op, and reports the time
// per returned neighbour (ns/edge) beside ns/op.
func benchReads(b *testing.B, nodes []uint32, read func(uint32, peers.EdgeFunc) error) {
	n := 0
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := read(nodes[i%len(nodes)], func(string, string) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
	reportPerEdge(b, n, cpuTime()-c0)
}

// reportPerEdge reports wall and CPU time per returned edge. The CPU time
// (getrusage) does not grow when other processes compete for the cores.
func reportPerEdge(b *testing.B, edges int, cpu time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(edges, 1)), "ns/edge")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(max(edges, 1)), "cpu-ns/edge")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The hub phase and get-out with keys, per system: go test -run '^$'
// -bench 'Hub|WithKeys' -cpuprofile cpu.out ./memctlpeer, then pprof's
// per-function times divided by the edges returned.
func BenchmarkHubGetIn(b *testing.B) {
	for _, name := range []string{"memctl", "bbolt", "lmdb-raw"} {
		b.Run(name, func(b *testing.B) {
			sys, _ := New(name)
			g := loaded(b, sys)
			defer sys.Close()
			benchReads(b, hubs(g), sys.GetIn)
		})
	}
}

func BenchmarkGetOutWithKeys(b *testing.B) {
	for _, name := range []string{"memctl", "bbolt", "lmdb-raw"} {
		b.Run(name, func(b *testing.B) {
			sys, _ := New(name)
			g := loaded(b, sys)
			defer sys.Close()
			nodes := make([]uint32, 4096)
			for i := range nodes {
				nodes[i] = uint32(i * 7919 % len(g.Nodes))
			}
			benchReads(b, nodes, sys.GetOut)
		})
	}
}

// BenchmarkHubGetInParts splits memctl's hub get-in (Neighbours) into its
// parts, by difference, per returned neighbour: the in-list decoded to
// ids (ScanIn), plus each id's key (KeysOf, the committed-ids cache),
// plus each edge's relation name looked up per edge (what Neighbours
// does) or once per run of equal relations (lists are sorted by relation).
func BenchmarkHubGetInParts(b *testing.B) {
	m := &Memctl{}
	g := loaded(b, m)
	defer m.Close()
	hs := hubs(g)
	var ids []lmdbstore.NodeID
	var rels []lmdbstore.RelID
	var keys []string
	n := 0
	parts := []struct {
		name string
		read func(r *lmdbstore.ReadTxn, id lmdbstore.NodeID) error
	}{
		{"ids", func(r *lmdbstore.ReadTxn, id lmdbstore.NodeID) error {
			return r.ScanIn(id, 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool { n++; return true })
		}},
		{"ids+keys", func(r *lmdbstore.ReadTxn, id lmdbstore.NodeID) error {
			ids = ids[:0]
			if err := r.ScanIn(id, 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool { ids = append(ids, e.Peer); return true }); err != nil {
				return err
			}
			keys = slices.Grow(keys[:0], len(ids))[:len(ids)]
			n += len(ids)
			return r.KeysOf(ids, keys)
		}},
		{"ids+keys+rel-once-per-run", func(r *lmdbstore.ReadTxn, id lmdbstore.NodeID) error {
			ids, rels = ids[:0], rels[:0]
			if err := r.ScanIn(id, 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool {
				ids, rels = append(ids, e.Peer), append(rels, e.Rel)
				return true
			}); err != nil {
				return err
			}
			keys = slices.Grow(keys[:0], len(ids))[:len(ids)]
			if err := r.KeysOf(ids, keys); err != nil {
				return err
			}
			var last lmdbstore.RelID
			var name string
			for i := range ids {
				if rels[i] != last {
					rel, err := r.RelationByID(rels[i])
					if err != nil {
						return err
					}
					last, name = rels[i], rel.Name
				}
				if name != "" {
					n++
				}
			}
			return nil
		}},
		{"neighbours", func(r *lmdbstore.ReadTxn, id lmdbstore.NodeID) error {
			return scanKeys(r, false, id, lmdbstore.At{}, func(string, string) { n++ })
		}},
	}
	for _, p := range parts {
		b.Run(p.name, func(b *testing.B) {
			n = 0
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				id := m.ids[hs[i%len(hs)]]
				if err := m.st.View(func(r *lmdbstore.ReadTxn) error { return p.read(r, id) }); err != nil {
					b.Fatal(err)
				}
			}
			reportPerEdge(b, n, cpuTime()-c0)
		})
	}
}
