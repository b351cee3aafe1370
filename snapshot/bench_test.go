package snapshot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// synthState generates a graph on the fly (nothing held per edge): n nodes
// with ascending ids, about avgDeg out-edges per node with a skewed degree
// distribution, three relations, a payload on every fourth node. Both
// passes of the writer see the same sequence.
type synthState struct {
	n      int
	avgDeg int
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (s *synthState) id(i int) uint64 { return uint64(i)*1_000_003 + 17 }

func (s *synthState) Revision() uint64       { return 100 }
func (s *synthState) CommitTime() int64      { return 1_700_000_000_000_000_000 }
func (s *synthState) ValidAt() int64         { return 0 }
func (s *synthState) Includes() (bool, bool) { return false, false }
func (s *synthState) Relations() ([]snapshot.RelationRecord, error) {
	return slices.Clone(testRels), nil
}

func (s *synthState) Nodes(fn func(snapshot.NodeRecord) error) error {
	payload := []byte(`{"lang":"go","lines":120}`)
	for i := 0; i < s.n; i++ {
		rec := snapshot.NodeRecord{
			ID: s.id(i), Key: fmt.Sprintf("sym:pkg%d/file%d.go.Func%d", i%97, i%1013, i), Type: "symbol", Scope: "repo",
			CreatedTS: 1_700_000_000_000_000_000, UpdatedTS: 1_700_000_000_000_000_000, CreatedRev: 1, Rev: 1,
		}
		if i%4 == 0 {
			rec.Payload = payload
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

func (s *synthState) Edges(fn func(snapshot.EdgeRecord) error) error {
	type e struct {
		rel uint32
		dst int
	}
	var buf []e
	for i := 0; i < s.n; i++ {
		h := splitmix(uint64(i))
		// Skewed degrees with mean avgDeg: most nodes below, a few hubs.
		deg := int(h%uint64(2*s.avgDeg)) + 1
		if h%100 == 0 {
			deg = 20 * s.avgDeg
		}
		if h%100 < 10 {
			deg = 0
		}
		buf = buf[:0]
		for j := 0; j < deg; j++ {
			r := splitmix(h + uint64(j))
			// Half the targets are "popular" (low indices), a power-law-ish in-degree.
			dst := int(r % uint64(s.n))
			if r&1 == 0 {
				dst = int((r >> 8) % uint64(1+s.n/100))
			}
			buf = append(buf, e{uint32(1 + (r>>40)%3), dst})
		}
		slices.SortFunc(buf, func(a, b e) int {
			if a.rel != b.rel {
				return int(a.rel) - int(b.rel)
			}
			return a.dst - b.dst
		})
		buf = slices.Compact(buf)
		for _, x := range buf {
			if err := fn(snapshot.EdgeRecord{Src: s.id(i), Dst: s.id(x.dst), Rel: x.rel, Weight: 1, Rev: 1, TS: 1_700_000_000_000_000_000}); err != nil {
				return err
			}
		}
	}
	return nil
}

// peakHeap samples HeapAlloc while fn runs and returns the peak above the
// starting value.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak.Load()
}

// largeBench reports whether the 1M-node benchmarks are enabled
// (MEMCTL_BENCH_LARGE=1): they write files of hundreds of megabytes.
func largeBench() bool { return os.Getenv("MEMCTL_BENCH_LARGE") == "1" }

func countEdges(s snapshot.State) int {
	m := 0
	s.Edges(func(snapshot.EdgeRecord) error { m++; return nil })
	return m
}

// BenchmarkExport writes synthetic graphs to disk; metrics: bytes per
// edge on disk, peak heap (MB) and heap per node+edge.
func BenchmarkExport(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if largeBench() {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		st := &synthState{n: n, avgDeg: 10}
		m := countEdges(st)
		b.Run(fmt.Sprintf("nodes=%d/edges=%d", n, m), func(b *testing.B) {
			dir := b.TempDir()
			var stats snapshot.WriteStats
			var peak uint64
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				p := peakHeap(func() {
					var err error
					stats, err = snapshot.WriteFile(filepath.Join(dir, "g.snap"), st, snapshot.WriterOptions{})
					if err != nil {
						b.Fatal(err)
					}
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(stats.Bytes)/float64(m), "file-B/edge")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(peak)/float64(n+m), "heap-B/(node+edge)")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m), "ns/edge")
			// CPU time (user+system) of the process, less sensitive than wall
			// time to other load on a shared machine. Includes generating
			// the synthetic state (see BenchmarkSynthState).
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSynthState is the cost of generating the synthetic state for
// one export (two passes over nodes and edges), to subtract from
// BenchmarkExport.
func BenchmarkSynthState(b *testing.B) {
	sizes := []int{100_000}
	if largeBench() {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		st := &synthState{n: n, avgDeg: 10}
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for i := 0; i < 2*b.N; i++ {
				st.Nodes(func(snapshot.NodeRecord) error { return nil })
				st.Edges(func(snapshot.EdgeRecord) error { return nil })
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

func writeSynth(b *testing.B, n int) string {
	path := filepath.Join(b.TempDir(), "g.snap")
	if _, err := snapshot.WriteFile(path, &synthState{n: n, avgDeg: 10}, snapshot.WriterOptions{}); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpen: Open + Close at two sizes; the time should be flat.
func BenchmarkOpen(b *testing.B) {
	sizes := []int{10_000}
	if largeBench() {
		sizes = append(sizes, 1_000_000)
	} else {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		path := writeSynth(b, n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f, err := snapshot.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}

// BenchmarkOpenParse is Open without the syscalls: FromBytes over the
// already-mapped bytes (header, directory, section binding).
func BenchmarkOpenParse(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if largeBench() {
		sizes[1] = 1_000_000
	}
	for _, n := range sizes {
		f, err := snapshot.Open(writeSynth(b, n))
		if err != nil {
			b.Fatal(err)
		}
		raw := f.Bytes()
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := snapshot.FromBytes(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		f.Close()
	}
}

var sink uint64

// BenchmarkIterateEdges visits every out-edge through csr.Graph.Out, against
// a plain loop over an in-memory []uint32 of the same length (the physical
// limit). Metric: edges per second.
func BenchmarkIterateEdges(b *testing.B) {
	n := 100_000
	if largeBench() {
		n = 1_000_000
	}
	path := writeSynth(b, n)
	g, err := csr.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	m := g.NumEdges()
	b.Run("csr-out", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var s uint64
			for v := uint32(0); v < uint32(g.NumNodes()); v++ {
				tg, _, _, err := g.Out(v)
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range tg {
					s += uint64(t)
				}
			}
			sink += s
		}
		b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	})
	// The raw zero-copy arrays, as an engine's inner loop reads them.
	b.Run("csr-arrays", func(b *testing.B) {
		offs, tgts := g.File().FwdOffsets(), g.File().FwdTargets()
		for i := 0; i < b.N; i++ {
			var s uint64
			for v := 0; v+1 < len(offs); v++ {
				for _, t := range tgts[offs[v]:offs[v+1]] {
					s += uint64(t)
				}
			}
			sink += s
		}
		b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	})
	plain := make([]uint32, m)
	for i := range plain {
		plain[i] = uint32(i)
	}
	b.Run("plain-slice", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var s uint64
			for _, t := range plain {
				s += uint64(t)
			}
			sink += s
		}
		b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	})
}

// BenchmarkLookup: node id → index (binary search over the mapped ids) and
// key → index (binary search over key_order).
func BenchmarkLookup(b *testing.B) {
	n := 100_000
	if largeBench() {
		n = 1_000_000
	}
	st := &synthState{n: n, avgDeg: 10}
	path := writeSynth(b, n)
	g, err := csr.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	b.Run("id", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			idx, ok, _ := g.Lookup(st.id(int(splitmix(uint64(i)) % uint64(n))))
			if !ok {
				b.Fatal("not found")
			}
			sink += uint64(idx)
		}
	})
	keys := make([]string, 1024)
	for i := range keys {
		j := int(splitmix(uint64(i)) % uint64(n))
		keys[i] = fmt.Sprintf("sym:pkg%d/file%d.go.Func%d", j%97, j%1013, j)
	}
	b.Run("key", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			idx, ok, _ := g.LookupKey(keys[i%len(keys)])
			if !ok {
				b.Fatal("not found")
			}
			sink += uint64(idx)
		}
	})
}

// hashedIDState has n nodes whose ids are sorted uniform random 64-bit
// values, like the store's hashed ids, and no edges.
type hashedIDState struct {
	ids []uint64
}

func newHashedIDState(n int) *hashedIDState {
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = splitmix(uint64(i) ^ 0xabcdef)
	}
	slices.Sort(ids)
	return &hashedIDState{ids: slices.Compact(ids)}
}

func (s *hashedIDState) Revision() uint64                               { return 0 }
func (s *hashedIDState) CommitTime() int64                              { return 0 }
func (s *hashedIDState) ValidAt() int64                                 { return 0 }
func (s *hashedIDState) Includes() (bool, bool)                         { return false, false }
func (s *hashedIDState) Relations() ([]snapshot.RelationRecord, error)  { return nil, nil }
func (s *hashedIDState) Edges(fn func(snapshot.EdgeRecord) error) error { return nil }
func (s *hashedIDState) Nodes(fn func(snapshot.NodeRecord) error) error {
	for i, id := range s.ids {
		if err := fn(snapshot.NodeRecord{ID: id, Key: "k" + strconv.Itoa(i)}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkLookupHashedIDs: id → index over uniformly random ids (the
// store's are hashes), interpolation probes then binary search, against a
// plain binary search over the same mapped array.
func BenchmarkLookupHashedIDs(b *testing.B) {
	n := 100_000
	if largeBench() {
		n = 1_000_000
	}
	st := newHashedIDState(n)
	path := filepath.Join(b.TempDir(), "ids.snap")
	if _, err := snapshot.WriteFile(path, st, snapshot.WriterOptions{Logical: true}); err != nil {
		b.Fatal(err)
	}
	f, err := snapshot.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.Run("lookup", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			idx, ok := f.Lookup(st.ids[splitmix(uint64(i))%uint64(len(st.ids))])
			if !ok {
				b.Fatal("not found")
			}
			sink += uint64(idx)
		}
	})
	b.Run("binary-search", func(b *testing.B) {
		ids := f.NodeIDs()
		for i := 0; i < b.N; i++ {
			idx, ok := slices.BinarySearch(ids, st.ids[splitmix(uint64(i))%uint64(len(st.ids))])
			if !ok {
				b.Fatal("not found")
			}
			sink += uint64(idx)
		}
	})
}
