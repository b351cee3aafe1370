package ingest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"golang.org/x/tools/go/packages"
)

// The standard-library benchmarks read $(go env GOROOT)/src (~5,500 Go
// files outside testdata and vendor) and take tens of seconds per
// iteration, so they are opt-in: MEMCTL_BENCH_STD=1 go test -run '^$'
// -bench Std -benchtime 1x ./ingest/. They report wall time per op and
// the CPU time of this process and its children (the go command).
func stdBench(b *testing.B) string {
	if os.Getenv("MEMCTL_BENCH_STD") == "" {
		b.Skip("set MEMCTL_BENCH_STD=1 to ingest $(go env GOROOT)/src")
	}
	return filepath.Join(goroot(b), "src")
}

func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkIngestStd is the acceptance figure: memctl ingest go of the
// standard library into a new store (extraction, type-checking, one write
// transaction), and its parts.
func BenchmarkIngestStd(b *testing.B) {
	dir := stdBench(b)
	b.Run("extract+write", func(b *testing.B) {
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			res, err := ExtractGo(dir, GoOptions{})
			if err != nil {
				b.Fatal(err)
			}
			s, err := lmdbstore.Init(filepath.Join(b.TempDir(), "db"), lmdbstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			st, err := WriteGo(s, res.Graph, lmdbstore.WriteMeta{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
			b.ReportMetric(float64(res.Files), "files")
			b.ReportMetric(float64(st.NodesPut), "nodes")
			b.ReportMetric(float64(st.EdgesPut), "edges")
		}
		reportCPU(b, cpu)
	})
	b.Run("extract", func(b *testing.B) {
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			if _, err := ExtractGo(dir, GoOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("extract-syntax-only", func(b *testing.B) {
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			if _, err := ExtractGo(dir, GoOptions{SyntaxOnly: true}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
	// Baseline: what go/packages alone takes to type-check the same
	// modules with syntax, types and tests (the straightforward approach
	// ingest replaces with its own checker).
	b.Run("baseline-go-packages", func(b *testing.B) {
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			for _, sub := range []string{"", "cmd"} {
				cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: filepath.Join(dir, sub), Tests: true, Env: loadEnv(true, nil)}
				if _, err := packages.Load(cfg, "./..."); err != nil {
					b.Fatal(err)
				}
			}
		}
		reportCPU(b, cpu)
	})
}
