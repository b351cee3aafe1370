package engines

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// Benchmarks run on seeded synthetic power-law graphs written as real
// snapshot files and mounted with csr.Open (mmap). 10K/27K and 100K/1M are
// always built; 1M/10M only with MEMCTL_BENCH_LARGE=1 (it takes a while to
// generate and write).

type benchSize struct {
	name         string
	nodes, edges int
	large        bool
}

var benchSizes = []benchSize{
	{"10K-27K", 10_000, 27_000, false},
	{"100K-1M", 100_000, 1_000_000, false},
	{"1M-10M", 1_000_000, 10_000_000, true},
}

// benchState is a synthetic power-law graph. Node i has key
// "pkg%03d/file%07d.go". Sources and targets are drawn as ⌊n·u^k⌋ through
// a random permutation (k = 2 for sources, 3 for targets), so out- and
// in-degrees follow power laws with hubs spread over the id space.
// Relations: uses (80%), related (bidirectional, 15%), blocks (inhibitory,
// 5%); weights uniform in (0, 1].
type benchState struct {
	nodes int
	edges []benchEdge
}

type benchEdge struct {
	src, dst uint32
	rel      uint32
	w        float32
}

func benchKey(i int) string { return fmt.Sprintf("pkg%03d/file%07d.go", i%1000, i) }

func newBenchState(nodes, edges int, seed uint64) *benchState {
	rng := rand.New(rand.NewPCG(seed, seed))
	perm := rng.Perm(nodes)
	pick := func(k float64) uint32 {
		return uint32(perm[int(float64(nodes)*math.Pow(rng.Float64(), k))%nodes])
	}
	type key struct{ src, dst, rel uint32 }
	seen := make(map[key]struct{}, edges)
	es := make([]benchEdge, 0, edges)
	for len(es) < edges {
		e := benchEdge{src: pick(2), dst: pick(3), rel: 1, w: float32(1 - rng.Float64())}
		switch x := rng.IntN(100); {
		case x < 15:
			e.rel = 2
		case x < 20:
			e.rel = 3
		}
		k := key{e.src, e.dst, e.rel}
		if _, dup := seen[k]; dup || e.src == e.dst {
			continue
		}
		seen[k] = struct{}{}
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b benchEdge) int {
		if c := cmp.Compare(a.src, b.src); c != 0 {
			return c
		}
		if c := cmp.Compare(a.rel, b.rel); c != 0 {
			return c
		}
		return cmp.Compare(a.dst, b.dst)
	})
	return &benchState{nodes: nodes, edges: es}
}

func (s *benchState) Revision() uint64       { return 1 }
func (s *benchState) CommitTime() int64      { return 1 }
func (s *benchState) ValidAt() int64         { return 0 }
func (s *benchState) Includes() (bool, bool) { return false, false }
func (s *benchState) Relations() ([]snapshot.RelationRecord, error) {
	return []snapshot.RelationRecord{
		{ID: 1, Name: "uses", DefaultWeight: 1},
		{ID: 2, Name: "related", DefaultWeight: 1, Bidirectional: true},
		{ID: 3, Name: "blocks", DefaultWeight: 1, Inhibitory: true},
	}, nil
}
func (s *benchState) Nodes(fn func(snapshot.NodeRecord) error) error {
	for i := range s.nodes {
		if err := fn(snapshot.NodeRecord{ID: uint64(i + 1), Key: benchKey(i), Type: "file", Rev: 1, CreatedRev: 1, CreatedTS: 1, UpdatedTS: 1}); err != nil {
			return err
		}
	}
	return nil
}
func (s *benchState) Edges(fn func(snapshot.EdgeRecord) error) error {
	for _, e := range s.edges {
		if err := fn(snapshot.EdgeRecord{Src: uint64(e.src) + 1, Dst: uint64(e.dst) + 1, Rel: e.rel, Weight: e.w, Rev: 1, TS: 1}); err != nil {
			return err
		}
	}
	return nil
}

var (
	benchMu      sync.Mutex
	benchEngines = map[string]*Engine{}
	benchDir     string
)

// benchEngine builds (once per process) and mounts the graph of size sz.
func benchEngine(b *testing.B, sz benchSize) *Engine {
	if sz.large && os.Getenv("MEMCTL_BENCH_LARGE") == "" {
		b.Skip("set MEMCTL_BENCH_LARGE=1 for the 1M-node / 10M-edge graph")
	}
	benchMu.Lock()
	defer benchMu.Unlock()
	if e, ok := benchEngines[sz.name]; ok {
		return e
	}
	if benchDir == "" {
		d, err := os.MkdirTemp("", "memctl-engines-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	start := time.Now()
	st := newBenchState(sz.nodes, sz.edges, 42)
	path := filepath.Join(benchDir, sz.name+".snap")
	if _, err := snapshot.WriteFile(path, st, snapshot.WriterOptions{}); err != nil {
		b.Fatal(err)
	}
	g, err := csr.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(g)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: built %d nodes / %d edges in %v", sz.name, g.NumNodes(), g.NumEdges(), time.Since(start).Round(time.Millisecond))
	benchEngines[sz.name] = e
	return e
}

// cpuTime is the process's user+system CPU time so far. Under a loaded
// machine wall times swing; CPU time per operation stays put.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/op")
}

// latencies records per-query durations and reports p50 and p99.
type latencies []time.Duration

// report adds p50 and p99 in microseconds, and p50 as a fraction of one
// full scan of the graph's out-edges measured in the same run (a machine-
// independent figure: how much of the graph a typical query costs).
func (l latencies) report(b *testing.B, e *Engine) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	at := func(q float64) float64 { return float64(l[int(q*float64(len(l)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50)/1e3, "p50-µs")
	b.ReportMetric(at(0.99)/1e3, "p99-µs")
	b.ReportMetric(at(0.50)/float64(fullScan(b, e).Nanoseconds()), "p50/scan")
}

// fullScan is the median time of 5 passes over every out-edge through the
// engine's accessor.
func fullScan(b *testing.B, e *Engine) time.Duration {
	ts := make([]time.Duration, 5)
	for i := range ts {
		t0 := time.Now()
		sum := 0.0
		for u := range e.numNodes {
			_, _, ws, err := e.out(uint32(u))
			if err != nil {
				b.Fatal(err)
			}
			for _, w := range ws {
				sum += float64(w)
			}
		}
		ts[i] = time.Since(t0)
		if sum < 0 {
			b.Fatal(sum)
		}
	}
	slices.Sort(ts)
	return ts[2]
}

// seedSets are 256 fixed random seed sets of k nodes each.
func seedSets(n, k int) [][]Seed {
	rng := rand.New(rand.NewPCG(7, uint64(k)))
	sets := make([][]Seed, 256)
	for i := range sets {
		for range k {
			sets[i] = append(sets[i], Seed{Node: uint32(rng.IntN(n)), Score: 1})
		}
	}
	return sets
}

// usesOnly marks the benchmark variant that follows only "uses" edges.
const usesOnly Strategy = -1

func BenchmarkActivate(b *testing.B) {
	for _, sz := range benchSizes {
		for _, k := range []int{1, 10} {
			for _, st := range []Strategy{StrategyAuto, StrategyWavefront, StrategyHeap, usesOnly} {
				name := st.String()
				if st == usesOnly {
					name = "auto-rel=uses"
				}
				b.Run(fmt.Sprintf("%s/seeds=%d/%s", sz.name, k, name), func(b *testing.B) {
					e := benchEngine(b, sz)
					sets := seedSets(e.numNodes, k)
					p := DefaultActivationParams()
					p.Strategy = st
					if st == usesOnly {
						// Directed edges of one relation only: no bidirectional
						// fan-in from hubs, no inhibition.
						p.Strategy = StrategyAuto
						p.Relations = []uint32{1}
					}
					lat := make(latencies, 0, b.N)
					b.ResetTimer()
					cpu0 := cpuTime(b)
					for i := 0; i < b.N; i++ {
						t0 := time.Now()
						_, err := e.Activate(sets[i%len(sets)], p)
						lat = append(lat, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					reportCPU(b, cpu0)
					lat.report(b, e)
					// Untimed: how much a query touches (TopK 0 lists every
					// activated node).
					p.TopK = 0
					activated := 0
					for _, set := range sets[:8] {
						rs, err := e.Activate(set, p)
						if err != nil {
							b.Fatal(err)
						}
						activated += len(rs)
					}
					b.ReportMetric(float64(activated)/8, "activated/op")
				})
			}
		}
	}
}

func BenchmarkResonate(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			e := benchEngine(b, sz)
			sets := seedSets(e.numNodes, 1)
			p := DefaultResonanceParams()
			lat := make(latencies, 0, b.N)
			pulses := 0
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				w, err := e.Resonate(sets[i%len(sets)], p)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				pulses += w.Pulses
			}
			b.StopTimer()
			reportCPU(b, cpu0)
			lat.report(b, e)
			b.ReportMetric(float64(pulses)/float64(b.N), "pulses/op")
		})
	}
}

func BenchmarkPageRank(b *testing.B) {
	for _, sz := range benchSizes {
		for _, weighted := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/weighted=%v", sz.name, weighted), func(b *testing.B) {
				e := benchEngine(b, sz)
				p := DefaultPageRankParams()
				p.Weighted = weighted
				iters := 0
				b.ResetTimer()
				cpu0 := cpuTime(b)
				for i := 0; i < b.N; i++ {
					_, st, err := e.PageRank(p)
					if err != nil {
						b.Fatal(err)
					}
					iters += st.Iterations
				}
				b.StopTimer()
				reportCPU(b, cpu0)
				perEdgeIter := float64(b.Elapsed().Nanoseconds()) / float64(iters) / float64(e.numEdges)
				b.ReportMetric(perEdgeIter, "ns/edge/iter")
				b.ReportMetric(float64(iters)/float64(b.N), "iters/op")
			})
		}
	}
}

func BenchmarkImpact(b *testing.B) {
	for _, sz := range benchSizes {
		for _, dir := range []Direction{DirectionIn, DirectionOut, DirectionBoth} {
			b.Run(fmt.Sprintf("%s/%s", sz.name, dir), func(b *testing.B) {
				e := benchEngine(b, sz)
				sets := seedSets(e.numNodes, 1)
				p := DefaultImpactParams()
				p.Direction = dir
				lat := make(latencies, 0, b.N)
				reached := 0
				b.ResetTimer()
				cpu0 := cpuTime(b)
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					as, err := e.Impact(sets[i%len(sets)][0].Node, p)
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					reached += len(as)
				}
				b.StopTimer()
				reportCPU(b, cpu0)
				lat.report(b, e)
				b.ReportMetric(float64(reached)/float64(b.N), "nodes/op")
			})
		}
	}
}

func BenchmarkFindSeeds(b *testing.B) {
	for _, sz := range benchSizes {
		queries := map[string]func(i int) string{
			"exact":     func(i int) string { return benchKey(i) },
			"prefix":    func(i int) string { return benchKey(i)[:9] },    // "pkg123/fi"
			"substring": func(i int) string { return benchKey(i)[11:18] }, // digits of the file number
			"fuzzy":     func(i int) string { return fmt.Sprintf("file%07d.gox/pkg%03d", i, i%1000) },
		}
		for _, kind := range []string{"exact", "prefix", "substring", "fuzzy"} {
			b.Run(fmt.Sprintf("%s/%s", sz.name, kind), func(b *testing.B) {
				e := benchEngine(b, sz)
				rng := rand.New(rand.NewPCG(9, 9))
				qs := make([]string, 256)
				for i := range qs {
					qs[i] = queries[kind](rng.IntN(e.numNodes))
				}
				p := DefaultSeedParams()
				lat := make(latencies, 0, b.N)
				b.ResetTimer()
				cpu0 := cpuTime(b)
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					_, ms, err := e.FindSeeds(qs[i%len(qs):i%len(qs)+1], p)
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					if len(ms) == 0 || ms[0].Kind.String() != kind {
						b.Fatalf("query %q: %v", qs[i%len(qs)], ms)
					}
				}
				b.StopTimer()
				reportCPU(b, cpu0)
				lat.report(b, e)
			})
		}
	}
}

// BenchmarkScanBaseline visits every out-edge of the graph once through the
// same checked accessor the engines use: the cost of a query that touched
// everything, to compare the engines' per-query figures with.
func BenchmarkScanBaseline(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			e := benchEngine(b, sz)
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for i := 0; i < b.N; i++ {
				sum := 0.0
				for u := range e.numNodes {
					_, _, ws, err := e.out(uint32(u))
					if err != nil {
						b.Fatal(err)
					}
					for _, w := range ws {
						sum += float64(w)
					}
				}
				if sum < 0 {
					b.Fatal(sum)
				}
			}
			reportCPU(b, cpu0)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(e.numEdges), "ns/edge")
		})
	}
}
