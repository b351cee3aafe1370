package mcpserver_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// latencyGraph is the benchmark store: nodes n0..n{nodes-1}, each with
// `degree` out-edges (calls) to pseudo-random others.
func latencyGraph(b *testing.B, nodes, degree int) string {
	db := newStore(b)
	var ops strings.Builder
	for i := 0; i < nodes; i++ {
		fmt.Fprintf(&ops, `{"op":"put_node","key":"sym:pkg.n%d","type":"func"}`+"\n", i)
		for k := 1; k <= degree; k++ {
			fmt.Fprintf(&ops, `{"op":"put_edge","src":"sym:pkg.n%d","rel":"calls","dst":"sym:pkg.n%d"}`+"\n", i, (i*7919+k*104729)%nodes)
		}
	}
	runCLI(b, ops.String(), "--db", db, "batch")
	return db
}

// reportLatency records per-call percentiles.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkToolLatency: one tool call to a warm `memctl mcp` (over stdio,
// SDK client) against one `memctl` process per query, in the same run.
// Per-call p50/p99 are reported as metrics. Run with -benchtime=Nx.
func BenchmarkToolLatency(b *testing.B) {
	const nodes, degree = 2000, 10
	db := latencyGraph(b, nodes, degree)
	snap := filepath.Join(b.TempDir(), "g.snap")
	runCLI(b, "", "--db", db, "export", "--out", snap)
	s := startServer(b, db)
	key := func(i int) string { return fmt.Sprintf("sym:pkg.n%d", (i*31)%nodes) }
	// Warm: the engine snapshot, the caches, the page cache.
	s.ok("related", map[string]any{"queries": []string{key(0)}}, nil)
	s.ok("get_out", map[string]any{"key": key(0)}, nil)

	run := func(name string, fn func(i int)) {
		b.Run(name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				fn(i)
				lat = append(lat, time.Since(t0))
			}
			reportLatency(b, lat)
		})
	}
	call := func(name string, args any) {
		if text, isErr, err := callRaw(s.sess, name, args); err != nil || isErr {
			b.Fatalf("%s: %v %s", name, err, text)
		}
	}
	// The protocol's floor: a ping round trip through the same pipes.
	run("mcp/ping", func(int) {
		if err := s.sess.Ping(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	})
	run("mcp/get_out", func(i int) { call("get_out", map[string]any{"key": key(i)}) })
	run("mcp/related", func(i int) { call("related", map[string]any{"queries": []string{key(i)}, "top": 20}) })
	run("process/get-out", func(i int) {
		cmd := exec.Command(memctlBin, "--db", db, "--json", "get-out", key(i))
		cmd.Env = testEnv()
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("memctl get-out: %v", err)
		}
	})
	run("process/activate", func(i int) {
		cmd := exec.Command(memctlBin, "--json", "activate", "--snapshot", snap, key(i), "--top", "20")
		cmd.Env = testEnv()
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("memctl activate: %v", err)
		}
	})
	// related after every kv write: the snapshot is carried forward.
	run("mcp/related-after-kv-write", func(i int) {
		call("put_kv", map[string]any{"scope": "s", "namespace": "decisions", "key": fmt.Sprint(i), "payload": i})
		call("related", map[string]any{"queries": []string{key(i)}, "top": 20})
	})
	// related after every edge write: the cost of rebuilding the engine
	// snapshot (the store moved), the worst case for an agent that
	// alternates writes and analysis.
	run("mcp/related-after-write", func(i int) {
		call("put_edge", map[string]any{"src": key(i), "rel": "references", "dst": key(i + 1)})
		call("related", map[string]any{"queries": []string{key(i)}, "top": 20})
	})
}
