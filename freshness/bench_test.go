package freshness

import (
	"fmt"
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

// benchTree writes a generated tree of n Python files in n/20 packages
// under git.
func benchTree(b *testing.B, n int) (string, Options) {
	files := make(map[string]string, n)
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("p%02d/m%04d.py", i/20, i)] = fmt.Sprintf("from p%02d.m%04d import f%d\n\n\ndef f%d(x):\n    return f%d(x) + %d\n\n\nclass C%d:\n    def m(self):\n        return f%d(1)\n",
			(i+1)%n/20, (i+1)%n, (i+1)%n, i, (i+1)%n, i, i, i)
	}
	return repo(b, files), testOptions()
}

// goBenchTree writes a module of n Go files in n/20 packages, each
// function calling one of the next package, under git, with options that
// type-check Go (offline: the module needs nothing).
func goBenchTree(b *testing.B, n int) (string, Options) {
	files := map[string]string{"go.mod": "module example.com/bench\n\ngo 1.22\n"}
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("p%02d/f%04d.go", i/20, i)
		if i >= n-20 { // the last package ends the chain: no import cycle
			files[p] = fmt.Sprintf("package p%02d\n\n// F%d ends the chain.\nfunc F%d(x int) int { return x + %d }\n", i/20, i, i, i)
			continue
		}
		files[p] = fmt.Sprintf("package p%02d\n\nimport q \"example.com/bench/p%02d\"\n\n// F%d calls the next package.\nfunc F%d(x int) int { return q.F%d(x) + %d }\n\ntype T%d struct{}\n\nfunc (T%d) M() int { return F%d(1) }\n",
			i/20, (i+20)/20, i, i, i+20, i, i, i, i)
	}
	return repo(b, files), Options{Ingest: codetree.Options{WithGo: true, Offline: true}}
}

// benchRefreshes ingests dir once, then times b.N refreshes, each after
// edit(i) (nil: nothing changed), and reports the CPU per refresh.
func benchRefreshes(b *testing.B, dir string, o Options, edit func(i int)) {
	s := newStore(b)
	if _, err := Refresh(s, dir, o); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if edit != nil {
			edit(i)
		}
		res, err := Refresh(s, dir, o)
		if err != nil || res.Refreshed != (edit != nil) || (edit != nil && res.Rev == 0) {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	if o.Cache != nil {
		b.ReportMetric(float64(o.Cache.GitRuns()), "git-runs")
	}
}

// editPython rewrites one file of benchTree.
func editPython(b *testing.B, dir string) func(int) {
	return func(i int) {
		write(b, dir, "p10/m0200.py", fmt.Sprintf("def g%d():\n    return %d\n", i, i))
	}
}

// BenchmarkRefreshUnchanged: a refresh of a 1,000-file tree where nothing
// changed (target ≤ 2 ms).
func BenchmarkRefreshUnchanged(b *testing.B) {
	dir, o := benchTree(b, 1000)
	benchRefreshes(b, dir, o, nil)
}

// BenchmarkRefreshOneFileEdit: one file of the 1,000 edited between
// refreshes, without any cache (no process cache, no cache file): what a
// one-shot refresh costs when the cache file is missing or stale.
func BenchmarkRefreshOneFileEdit(b *testing.B) {
	dir, o := benchTree(b, 1000)
	o.CachePath = NoCacheFile
	benchRefreshes(b, dir, o, editPython(b, dir))
}

// BenchmarkRefreshOneFileEditOneShot: the same edits refreshed as the
// one-shot CLI refreshes (target ≤ 100 ms): each refresh starts with no
// process cache, reads the cache file the last one saved (diskcache.go),
// ingests through it and saves it again. Every refresh after the first
// must take the per-file path.
func BenchmarkRefreshOneFileEditOneShot(b *testing.B) {
	dir, o := benchTree(b, 1000)
	var used fileUse
	o.cacheFileUsed = func(c *codetree.Cache) { used.deltas += c.Deltas() }
	benchRefreshes(b, dir, o, editPython(b, dir))
	if used.deltas < b.N {
		b.Fatalf("%d of %d refreshes took the per-file path", used.deltas, b.N)
	}
}

// BenchmarkRefreshOneFileEditCached: the same edits refreshed through one
// Cache, as the long-lived MCP server refreshes (target ≤ 100 ms): only
// the edited file is parsed, only what changed is compared with the
// store, and git runs only when the cache cannot tell the git state.
func BenchmarkRefreshOneFileEditCached(b *testing.B) {
	dir, o := benchTree(b, 1000)
	o.Cache = NewCache()
	benchRefreshes(b, dir, o, editPython(b, dir))
	if o.Cache.Deltas() < b.N {
		b.Fatalf("%d of %d refreshes took the per-file path", o.Cache.Deltas(), b.N)
	}
}

// BenchmarkRefreshOneGoFileEdit: one Go file of 1,000 (type-checked)
// edited between refreshes through one Cache (target ≤ 100 ms): the edit
// adds an exported function and a call to it (its imports stay, so the
// listing stands), so the package is re-checked and extracted,
// the package importing it re-checked with bodies, the nine above that
// without (SPEC.md §9.10), and only the difference compared with the
// store.
func BenchmarkRefreshOneGoFileEdit(b *testing.B) {
	dir, o := goBenchTree(b, 1000)
	o.Cache = NewCache()
	benchRefreshes(b, dir, o, func(i int) {
		write(b, dir, "p10/f0200.go", fmt.Sprintf("package p10\n\nimport q \"example.com/bench/p11\"\n\n// G%d is new.\nfunc G%d() int { return %d }\n\n// F200 calls the next package.\nfunc F200(x int) int { return q.F220(x) + G%d() }\n", i, i, i, i))
	})
	if inc, _ := o.Cache.GoExtractions(); inc < b.N || o.Cache.Deltas() < b.N {
		b.Fatalf("%d incremental Go extractions, %d delta writes, of %d refreshes", inc, o.Cache.Deltas(), b.N)
	}
}
