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

// BenchmarkExtractOneFileEdit: Extract of a 1,000-file Python tree (each
// module importing and calling the next) through one Cache, one file
// edited between extractions and every other file's hash known (as a
// refresh knows it from unchanged stats): one file is read and parsed,
// so what remains is the resolve and the graph of the whole tree, the
// cost a refresh that resolves only what an edit can affect would shrink.
//
//	go test -run '^$' -bench ExtractOneFileEdit -benchtime 20x ./ingest/treesitter/
func BenchmarkExtractOneFileEdit(b *testing.B) {
	dir := b.TempDir()
	writeFile := writer(b, dir)
	const n = 1000
	known := make(map[string]string, n)
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("p%02d/m%04d.py", i/20, i)
		text := fmt.Sprintf("from p%02d.m%04d import f%d\n\n\ndef f%d(x):\n    return f%d(x) + %d\n\n\nclass C%d:\n    def m(self):\n        return f%d(1)\n",
			(i+1)%n/20, (i+1)%n, (i+1)%n, i, (i+1)%n, i, i, i)
		writeFile(rel, text)
		known[rel] = contentHash([]byte(text))
	}
	langs := []string{ingest.LangPython}
	c := NewCache()
	if _, err := Extract(dir, langs, Options{Cache: c, Known: known}); err != nil {
		b.Fatal(err)
	}
	const edited = "p10/m0200.py"
	delete(known, edited)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		writeFile(edited, fmt.Sprintf("def g%d():\n    return %d\n", i, i))
		res, err := Extract(dir, langs, Options{Cache: c, Known: known})
		if err != nil || res.Lang(ingest.LangPython).Files != n {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
