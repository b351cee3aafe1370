package treesitter

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/ingest"
)

// BenchmarkExtract measures Extract (walk, hash, parse on all CPUs,
// resolve) over a large tree: $MEMCTL_BENCH_TREE, else rxjs 7.8.1's dist/
// (≈1,000 JavaScript and .d.ts files; see real_test.go for installing
// it). It reports files parsed per second, MB/s and the process's peak
// RSS (which includes the test binary itself).
//
//	go test -run '^$' -bench Extract -benchtime 5x ./ingest/treesitter/
func BenchmarkExtract(b *testing.B) {
	dir := os.Getenv("MEMCTL_BENCH_TREE")
	if dir == "" {
		dir = filepath.Join(rxjsDir(), "dist")
	}
	requireDir(b, dir, "set MEMCTL_BENCH_TREE=DIR, or npm pack rxjs@7.8.1 into $MEMCTL_CORPUS/rxjs-7.8.1")
	if _, err := loadGrammars(); err != nil {
		b.Fatal(err)
	}
	// As the CLI does: extraction makes many small objects.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var files, bytes int
	var parse time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Extract(dir, TreeSitterLanguages, Options{})
		if err != nil {
			b.Fatal(err)
		}
		files, bytes = 0, 0
		for _, l := range res.Langs {
			files += l.Files
		}
		parse += res.Elapsed
		bytes = res.bytes
	}
	b.StopTimer()
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(files)/sec, "files/s")
	b.ReportMetric(float64(bytes)/sec/1e6, "MB/s")
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
	// Files per CPU-second: what the machine would do unshared, per core.
	b.ReportMetric(float64(files)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "files/cpu-s")
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
}

// BenchmarkParseOnly is the baseline of BenchmarkExtract: the same files
// parsed by tree-sitter on the same pool, nothing extracted. Compare the
// two from one run (the machine is shared): their ratio is what
// extraction costs on top of parsing.
func BenchmarkParseOnly(b *testing.B) {
	dir := os.Getenv("MEMCTL_BENCH_TREE")
	if dir == "" {
		dir = filepath.Join(rxjsDir(), "dist")
	}
	requireDir(b, dir, "set MEMCTL_BENCH_TREE=DIR, or npm pack rxjs@7.8.1 into $MEMCTL_CORPUS/rxjs-7.8.1")
	gs, err := loadGrammars()
	if err != nil {
		b.Fatal(err)
	}
	wk, err := walk(dir, TreeSitterLanguages, ingest.WalkOptions{})
	if err != nil {
		b.Fatal(err)
	}
	workers := runtime.GOMAXPROCS(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pool := make([]*worker, workers)
		parallel(workers, len(wk.Files), func(wi, j int) {
			if pool[wi] == nil {
				pool[wi] = newWorker()
			}
			f := wk.Files[j]
			src, err := os.ReadFile(f.Abs)
			if err != nil {
				b.Error(err)
				return
			}
			t, err := pool[wi].parse(gramOf(gs, &parsedFile{walkFile: f}), src)
			if err != nil {
				b.Error(err)
				return
			}
			t.Close()
		})
		for _, w := range pool {
			if w != nil {
				w.close()
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(wk.Files))*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}

// cpuTime is the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGrammarLoad: compiling one grammar's query, which a process
// pays on its first parse with the grammar (gram.load) — and a one-shot
// refresh whose parses are all cached but the edited file's pays for
// that file's grammar only.
func BenchmarkGrammarLoad(b *testing.B) {
	if _, err := loadGrammars(); err != nil {
		b.Fatal(err)
	}
	for _, l := range languages {
		for i := range l.grammars {
			d := &l.grammars[i]
			b.Run(d.name, func(b *testing.B) {
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					g := &gram{name: d.name, def: d}
					if err := g.load(); err != nil {
						b.Fatal(err)
					}
					g.query.Close()
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkExtractOneFileEdit: one Python file of 1,000 edited (a
// definition renamed) between extractions through one Cache, with the
// last graph (reuse: Options.Previous, as a refresh passes it) or without
// (full: every module resolved again). Compare the two in one run: their
// difference is the resolution saved. Trees: cycle, freshness's benchmark
// tree (module i imports and calls module i+1 mod 1,000: one import cycle;
// the module edited and the one that looked it up resolve again); layered, the same
// with the chain cut at each package of 20 (an edit of p10/m0210 reaches
// p10/m0200…m0209); real, a copy of $MEMCTL_BENCH_PYTREE (when set) with
// a function added to its file $MEMCTL_BENCH_PYEDIT at each edit.
//
//	go test -run '^$' -bench ExtractOneFileEdit -benchtime 20x ./ingest/treesitter/
func BenchmarkExtractOneFileEdit(b *testing.B) {
	for _, tree := range []string{"cycle", "layered", "real"} {
		for _, mode := range []string{"full", "reuse"} {
			b.Run(tree+"/"+mode, func(b *testing.B) {
				const n = 1000
				dir := b.TempDir()
				put := func(rel, text string) { putVariant(b, dir, rel, text) }
				edit := func(i int) { put("p10/m0210.py", fmt.Sprintf("def g%d():\n    return %d\n", i, i)) }
				if tree == "real" {
					src, rel := os.Getenv("MEMCTL_BENCH_PYTREE"), os.Getenv("MEMCTL_BENCH_PYEDIT")
					requireDir(b, src, "set MEMCTL_BENCH_PYTREE=DIR and MEMCTL_BENCH_PYEDIT=FILE (relative to it)")
					if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
						b.Fatal(err)
					}
					orig, err := os.ReadFile(filepath.Join(dir, rel))
					if err != nil {
						b.Fatal(err)
					}
					edit = func(i int) { put(rel, fmt.Sprintf("%s\n\ndef _bench_g%d():\n    return %d\n", orig, i, i)) }
				}
				for i := 0; i < n && tree != "real"; i++ {
					j := (i + 1) % n
					if tree == "layered" && j%20 == 0 {
						j = i - i%20 // the package's first module: no import out of the package
					}
					put(fmt.Sprintf("p%02d/m%04d.py", i/20, i), fmt.Sprintf("from p%02d.m%04d import f%d\n\n\ndef f%d(x):\n    return f%d(x) + %d\n\n\nclass C%d:\n    def m(self):\n        return f%d(1)\n",
						j/20, j, j, i, j, i, i, i))
				}
				c := NewCache()
				langs := []string{ingest.LangPython}
				res, err := Extract(dir, langs, Options{Cache: c, AllIfAny: true})
				if err != nil {
					b.Fatal(err)
				}
				reused := 0
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					edit(i)
					o := Options{Cache: c, AllIfAny: true}
					if mode == "reuse" {
						o.Previous = res.Graph
					}
					if res, err = Extract(dir, langs, o); err != nil {
						b.Fatal(err)
					}
					reused += res.Reused
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(res.Lang(ingest.LangPython).Files)-float64(reused)/float64(b.N), "resolved/op")
			})
		}
	}
}
