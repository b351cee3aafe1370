package lmdbstore

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// cpuClock measures the CPU time (user+system, all threads) of a benchmark
// loop: on a shared machine wall time mostly measures the other tenants.
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{processCPU()} }

// report adds cpu-ns/op (and cpu-ns/<unit> for perUnit > 0).
func (c cpuClock) report(b *testing.B, perUnit int, unit string) {
	d := float64(processCPU() - c.start)
	b.ReportMetric(d/float64(b.N), "cpu-ns/op")
	if perUnit > 0 {
		b.ReportMetric(d/float64(b.N)/float64(perUnit), "cpu-ns/"+unit)
	}
}

func benchStore(b *testing.B, opts Options) *Store {
	b.Helper()
	if opts.MapSize == 0 {
		opts.MapSize = 1 << 30
	}
	s, err := Init(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkPutEdge: throughput of put-edge, batched (1,000 per transaction)
// and one per transaction (synced commits, and NoSync).
func BenchmarkPutEdge(b *testing.B) {
	b.Run("batched-1000", func(b *testing.B) {
		s := benchStore(b, Options{NoSync: true})
		j := 0
		cpu := startCPU()
		for b.Loop() {
			if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
				for k := j; k < j+1000; k++ {
					if err := tx.PutEdge(EdgePut{Src: fmt.Sprint("src", k%5000), Rel: "calls", Dst: fmt.Sprint("dst", k)}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			j += 1000
		}
		cpu.report(b, 1000, "edge")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(j), "ns/edge")
	})
	// A bulk load's shape: each source's edges one after another (runs of
	// 8, to new destinations), with the adjacency write-back buffer and
	// without it (the direct path), in the same run.
	for _, direct := range []bool{false, true} {
		name := "runs-of-8-buffered"
		if direct {
			name = "runs-of-8-direct"
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b, Options{NoSync: true})
			if direct {
				s.setAdjDirectForTest()
			}
			j := 0
			cpu := startCPU()
			for b.Loop() {
				if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
					for k := j; k < j+1000; k++ {
						if err := tx.PutEdge(EdgePut{Src: fmt.Sprint("src", k/8%5000), Rel: "calls", Dst: fmt.Sprint("dst", k)}); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				j += 1000
			}
			cpu.report(b, 1000, "edge")
		})
	}
	for _, sync := range []bool{true, false} {
		name := "one-per-txn-synced"
		if !sync {
			name = "one-per-txn-nosync"
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b, Options{NoSync: !sync})
			j := 0
			cpu := startCPU()
			for b.Loop() {
				if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
					return tx.PutEdge(EdgePut{Src: fmt.Sprint("src", j%5000), Rel: "calls", Dst: fmt.Sprint("dst", j)})
				}); err != nil {
					b.Fatal(err)
				}
				j++
			}
			cpu.report(b, 0, "")
		})
	}
}

// BenchmarkGetOut scans the out-list of a node of degree 10, 1,000 and
// 100,000 (one View per scan), against a raw LMDB Get of a value holding
// the same chunk bytes, read in a View of its own.
func BenchmarkGetOut(b *testing.B) {
	for _, degree := range []int{10, 1_000, 100_000} {
		s := benchStore(b, Options{NoSync: true})
		for start := 0; start < degree; start += 10_000 {
			if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
				for i := start; i < min(start+10_000, degree); i++ {
					if err := tx.PutEdge(EdgePut{Src: "hub", Rel: "calls", Dst: fmt.Sprint("d", i)}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		// The baseline: the node's chunk values concatenated under one key.
		var raw []byte
		var rawDBI lmdb.DBI
		hub := IDOf("hub")
		if _, err := s.update(func(txn *lmdb.Txn) error {
			cur, err := txn.OpenCursor(s.db.out)
			if err != nil {
				return err
			}
			defer cur.Close()
			for k, v, err := cur.Get(adjKey(hub, 0, 0), nil, lmdb.SetRange); err == nil && sameNode(k, hub); k, v, err = cur.Get(nil, nil, lmdb.Next) {
				raw = append(raw, v...)
			}
			rawDBI, err = txn.OpenDBI("bench", lmdb.Create)
			if err != nil {
				return err
			}
			return txn.Put(rawDBI, []byte("hub"), raw, 0)
		}); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("degree=%d/scan", degree), func(b *testing.B) {
			cpu := startCPU()
			for b.Loop() {
				n := 0
				if err := s.View(func(r *ReadTxn) error {
					return r.ScanOut(hub, 0, At{}, func(EdgeRef) bool { n++; return true })
				}); err != nil || n != degree {
					b.Fatalf("scanned %d, %v", n, err)
				}
			}
			cpu.report(b, degree, "entry")
		})
		b.Run(fmt.Sprintf("degree=%d/scan-at-rev", degree), func(b *testing.B) {
			cpu := startCPU()
			for b.Loop() {
				n := 0
				if err := s.View(func(r *ReadTxn) error {
					return r.ScanOut(hub, 3, AtRevision(r.Revision()), func(EdgeRef) bool { n++; return true })
				}); err != nil || n != degree {
					b.Fatalf("scanned %d, %v", n, err)
				}
			}
			cpu.report(b, degree, "entry")
		})
		b.Run(fmt.Sprintf("degree=%d/raw-get", degree), func(b *testing.B) {
			cpu := startCPU()
			for b.Loop() {
				var sum byte
				if err := s.view(func(txn *lmdb.Txn) error {
					v, err := txn.Get(rawDBI, []byte("hub"))
					if len(v) > 0 {
						sum += v[len(v)-1]
					}
					return err
				}); err != nil {
					b.Fatal(err)
				}
				_ = sum
			}
			cpu.report(b, 0, "")
		})
	}
}

// BenchmarkAppend: one put-edge transaction onto a node with 1,000,000
// out-edges against one onto a node with 10 (NoSync, so the commit's
// fsync does not hide the difference).
func BenchmarkAppend(b *testing.B) {
	s := benchStore(b, Options{NoSync: true, MapSize: 4 << 30})
	const hubDegree = 1_000_000
	for start := 0; start < hubDegree; start += 50_000 {
		if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
			for i := start; i < start+50_000; i++ {
				if err := tx.PutEdge(EdgePut{Src: "hub", Rel: "calls", Dst: fmt.Sprint("d", i)}); err != nil {
					return err
				}
			}
			for i := start / 50_000 * 10; i < start/50_000*10+10 && i < 10; i++ {
				if err := tx.PutEdge(EdgePut{Src: "leaf", Rel: "calls", Dst: fmt.Sprint("d", i)}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	j := 0
	for _, src := range []string{"hub", "leaf"} {
		b.Run("to-"+src, func(b *testing.B) {
			cpu := startCPU()
			for b.Loop() {
				if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
					return tx.PutEdge(EdgePut{Src: src, Rel: "calls", Dst: fmt.Sprint("new", j)})
				}); err != nil {
					b.Fatal(err)
				}
				j++
			}
			cpu.report(b, 0, "")
		})
	}
}

// BenchmarkOpen opens and closes a store holding 10,000 edges.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	s, err := Init(dir, Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		for i := range 10_000 {
			if err := tx.PutEdge(EdgePut{Src: fmt.Sprint("s", i%100), Rel: "calls", Dst: fmt.Sprint("d", i)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	s.Close()
	cpu := startCPU()
	for b.Loop() {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	cpu.report(b, 0, "")
}

// BenchmarkStatus: the status of an item in a store that never registered
// contradicts (most stores): what listing edges with status pays per
// neighbour.
func BenchmarkStatus(b *testing.B) {
	s := benchStore(b, Options{NoSync: true})
	if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutEdge(EdgePut{Src: "a:1", Rel: "calls", Dst: "a:2"})
	}); err != nil {
		b.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	for b.Loop() {
		if err := s.View(func(r *ReadTxn) error {
			_, err := r.Status("a:2", At{}, now)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogRecord encodes and decodes the log record of a bulk-shaped
// load (20,000 put_node and 160,000 put_edge ops over the nodes' keys) as
// format 02 (zstd of the ops) and 03 (zstd of a key table and the ops
// naming keys by index), and reports the record's bytes per edge.
func BenchmarkLogRecord(b *testing.B) {
	const nodes, perNode = 20000, 8
	r := rand.New(rand.NewPCG(1, 2))
	key := func(i int) string {
		return fmt.Sprintf("sym:github.com/acme/svc%d/internal/pkg%d.Func%d", i%37, i%401, i)
	}
	rels := []string{"calls", "imports", "defines", "references", "tests"}
	var cases []keyedCase
	for i := range nodes {
		cases = append(cases, keyedCase{logged: OpPutNode, op: Op{Kind: OpPutNode, Scope: "repo", RunID: "bench", NodeKey: key(i), NodeType: "func"}})
	}
	for i := range nodes * perNode {
		o := Op{Kind: OpPutEdge, Scope: "repo", RunID: "bench", Src: key(i / perNode), Rel: rels[r.IntN(len(rels))], Dst: key(r.IntN(nodes)), Weight: 1}
		cases = append(cases, keyedCase{logged: OpPutEdge, op: o})
	}
	ops := format01Ops(b, cases)
	s := benchStore(b, Options{})
	enc, _ := s.zstd()
	seal := func(format byte, body []byte) []byte {
		v := binary.BigEndian.AppendUint64([]byte{format}, 1)
		v = append(v, 0, 0, 0)
		v = binary.AppendUvarint(v, uint64(len(cases)))
		v = binary.AppendUvarint(v, uint64(len(body)))
		return sealValue(enc.EncodeAll(body, v))
	}
	encode := map[string]func() []byte{
		"format02": func() []byte { return seal(fmtZstd, ops) },
		"format03": func() []byte {
			body, err := keyedOps(ops, len(cases))
			if err != nil {
				b.Fatal(err)
			}
			return seal(fmtKeyed, body)
		},
	}
	for _, name := range []string{"format02", "format03"} {
		v := encode[name]()
		b.Run(name+"/encode", func(b *testing.B) {
			c := startCPU()
			for b.Loop() {
				encode[name]()
			}
			c.report(b, 0, "")
			b.ReportMetric(float64(len(v))/float64(nodes*perNode), "B/edge")
		})
		b.Run(name+"/decode", func(b *testing.B) {
			c := startCPU()
			for b.Loop() {
				if _, err := s.decodeLog(u64be(1), v); err != nil {
					b.Fatal(err)
				}
			}
			c.report(b, 0, "")
		})
	}
}
