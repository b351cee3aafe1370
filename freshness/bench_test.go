package freshness

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/ingest/codetree"
)

// cpuTime is the CPU time of this process and of the children it waited
// for (git): on a shared machine, what a refresh costs whatever the load.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
}

// reportCPU adds the CPU milliseconds per operation since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// benchTree writes a generated tree of n Python files in n/20 packages
// under git, ingested once.
func benchTree(b *testing.B, n int) (string, Options) {
	dir := filepath.Join(b.TempDir(), "repo")
	for i := 0; i < n; i++ {
		write(b, dir, fmt.Sprintf("p%02d/m%04d.py", i/20, i),
			fmt.Sprintf("from p%02d.m%04d import f%d\n\n\ndef f%d(x):\n    return f%d(x) + %d\n\n\nclass C%d:\n    def m(self):\n        return f%d(1)\n",
				(i+1)%n/20, (i+1)%n, (i+1)%n, i, (i+1)%n, i, i, i))
	}
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-q", "-m", "gen")
	return dir, testOptions()
}

// BenchmarkRefreshUnchanged: a refresh of a 1,000-file tree where nothing
// changed (target ≤ 2 ms).
func BenchmarkRefreshUnchanged(b *testing.B) {
	dir, o := benchTree(b, 1000)
	s := newStore(b)
	if _, err := Refresh(s, dir, o); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		res, err := Refresh(s, dir, o)
		if err != nil || res.Refreshed {
			b.Fatal(res, err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkRefreshOneFileEdit: one file of the 1,000 edited between
// refreshes (target ≤ 100 ms).
func BenchmarkRefreshOneFileEdit(b *testing.B) {
	dir, o := benchTree(b, 1000)
	s := newStore(b)
	if _, err := Refresh(s, dir, o); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		write(b, dir, "p10/m0200.py", fmt.Sprintf("def g%d():\n    return %d\n", i, i))
		res, err := Refresh(s, dir, o)
		if err != nil || res.Rev == 0 {
			b.Fatal(res, err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkRefreshOneFileEditCached: the same edits refreshed through one
// Cache, as the long-lived MCP server refreshes (target ≤ 100 ms): only
// the edited file is parsed, only what changed is compared with the
// store, and git runs only when the cache cannot tell the git state.
func BenchmarkRefreshOneFileEditCached(b *testing.B) {
	dir, o := benchTree(b, 1000)
	o.Cache = NewCache()
	s := newStore(b)
	if _, err := Refresh(s, dir, o); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		write(b, dir, "p10/m0200.py", fmt.Sprintf("def g%d():\n    return %d\n", i, i))
		res, err := Refresh(s, dir, o)
		if err != nil || res.Rev == 0 {
			b.Fatal(res, err)
		}
	}
	reportCPU(b, cpu0)
	b.StopTimer()
	b.ReportMetric(float64(o.Cache.GitRuns()), "git-runs")
	if o.Cache.Deltas() < b.N-1 {
		b.Fatalf("%d of %d refreshes took the per-file path", o.Cache.Deltas(), b.N)
	}
}

// goBenchTree writes a module of n Go files in n/20 packages, each
// function calling one of the next package, under git, and returns it
// with options that type-check Go (offline: the module needs nothing).
func goBenchTree(b *testing.B, n int) (string, Options) {
	dir := filepath.Join(b.TempDir(), "repo")
	write(b, dir, "go.mod", "module example.com/bench\n\ngo 1.22\n")
	for i := 0; i < n; i++ {
		next := (i + 20) % n
		write(b, dir, fmt.Sprintf("p%02d/f%04d.go", i/20, i),
			fmt.Sprintf("package p%02d\n\nimport q \"example.com/bench/p%02d\"\n\n// F%d calls the next package.\nfunc F%d(x int) int { return q.F%d(x) + %d }\n\ntype T%d struct{}\n\nfunc (T%d) M() int { return F%d(1) }\n",
				i/20, next/20, i, i, next, i, i, i, i))
	}
	// The import cycle through the last package is broken there.
	for i := n - 20; i < n; i++ {
		write(b, dir, fmt.Sprintf("p%02d/f%04d.go", i/20, i),
			fmt.Sprintf("package p%02d\n\n// F%d ends the chain.\nfunc F%d(x int) int { return x + %d }\n", i/20, i, i, i))
	}
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-q", "-m", "gen")
	return dir, Options{Ingest: codetree.Options{WithGo: true, Offline: true}}
}

// BenchmarkRefreshOneGoFileEdit: one Go file of 1,000 (type-checked)
// edited between refreshes through one Cache: Go has no per-file path,
// ingest go re-checks the module (SPEC.md §9.10).
func BenchmarkRefreshOneGoFileEdit(b *testing.B) {
	dir, o := goBenchTree(b, 1000)
	o.Cache = NewCache()
	s := newStore(b)
	if _, err := Refresh(s, dir, o); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		write(b, dir, "p10/f0200.go", fmt.Sprintf("package p10\n\n// G%d is new.\nfunc G%d() int { return %d }\n\nfunc F200(x int) int { return x }\n", i, i, i))
		res, err := Refresh(s, dir, o)
		if err != nil || res.Rev == 0 {
			b.Fatal(res, err)
		}
	}
	reportCPU(b, cpu0)
}
