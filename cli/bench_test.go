package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchStore makes a store where hub:x has degree out-edges, written in one
// batch, and returns its path.
func benchStore(b *testing.B, degree int) string {
	b.Helper()
	db := filepath.Join(b.TempDir(), "db")
	if code := Run([]string{"memctl", "--db", db, "init"}, Env{}); code != 0 {
		b.Fatalf("init: exit %d", code)
	}
	var ops strings.Builder
	for i := range degree {
		fmt.Fprintf(&ops, `{"op":"put_edge","src":"hub:x","rel":"calls","dst":"leaf:%d"}`+"\n", i)
	}
	var stderr strings.Builder
	if code := Run([]string{"memctl", "--db", db, "batch"}, Env{Stdin: strings.NewReader(ops.String()), Stderr: &stderr}); code != 0 {
		b.Fatalf("batch: exit %d: %s", code, stderr.String())
	}
	return db
}

// BenchmarkProcessGetOut runs `memctl get-out` as a whole process and
// reports its cost as a multiple of `memctl --help` (process start without
// opening a store), measured in the same run.
func BenchmarkProcessGetOut(b *testing.B) {
	bin := buildMemctl(b)
	for _, degree := range []int{10, 1000} {
		b.Run(fmt.Sprintf("degree=%d", degree), func(b *testing.B) {
			db := benchStore(b, degree)
			run := func(args ...string) time.Duration {
				start := time.Now()
				cmd := exec.Command(bin, args...)
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatalf("memctl %v: %v", args, err)
				}
				return time.Since(start)
			}
			var base time.Duration
			const baseRuns = 20
			for range baseRuns {
				base += run("--help")
			}
			b.ResetTimer()
			for range b.N {
				run("--db", db, "--json", "get-out", "hub:x")
			}
			b.StopTimer()
			per := float64(b.Elapsed()) / float64(b.N)
			b.ReportMetric(per/(float64(base)/baseRuns), "x-process-start")
		})
	}
}

// BenchmarkProcessContext runs `memctl context TARGET` as a whole process
// on the store MEMCTL_CONTEXT_BENCH_DB names (skipped without; e.g. the Go
// standard library ingested with `memctl ingest go $(go env GOROOT)/src`,
// target MEMCTL_CONTEXT_BENCH_TARGET, default net/http/server.go): issue
// 28's one-shot figure (<= 50 ms warm). Besides the wall time per call it
// reports the process's CPU (user + system) and minor page faults per
// call, which move less with the machine's load than wall time does.
func BenchmarkProcessContext(b *testing.B) {
	db := os.Getenv("MEMCTL_CONTEXT_BENCH_DB")
	if db == "" {
		b.Skip("MEMCTL_CONTEXT_BENCH_DB not set")
	}
	target := os.Getenv("MEMCTL_CONTEXT_BENCH_TARGET")
	if target == "" {
		target = "net/http/server.go"
	}
	bin := buildMemctl(b)
	run := func() *os.ProcessState {
		cmd := exec.Command(bin, "--db", db, "context", target)
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatalf("memctl context %s: %v", target, err)
		}
		return cmd.ProcessState
	}
	run() // warm: the engine snapshot is written if it is not there
	var cpu time.Duration
	var faults int64
	b.ResetTimer()
	for range b.N {
		ps := run()
		cpu += ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			faults += ru.Minflt
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(faults)/float64(b.N), "minflt/op")
}

// BenchmarkRunGetOut is get-out through cli.Run in-process: open the store,
// read, format, close; no process start.
func BenchmarkRunGetOut(b *testing.B) {
	for _, degree := range []int{10, 1000} {
		b.Run(fmt.Sprintf("degree=%d", degree), func(b *testing.B) {
			db := benchStore(b, degree)
			args := []string{"memctl", "--db", db, "--json", "get-out", "hub:x"}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if code := Run(args, Env{}); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}

// BenchmarkRunPutEdge is one put-edge (one committed, synced transaction)
// through cli.Run in-process.
func BenchmarkRunPutEdge(b *testing.B) {
	db := benchStore(b, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if code := Run([]string{"memctl", "--db", db, "put-edge", "hub:x", "calls", fmt.Sprintf("leaf:%d", i)}, Env{}); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
