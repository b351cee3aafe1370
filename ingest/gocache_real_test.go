package ingest

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGoCacheRealTree is the differential test of the GoCache on a real
// tree (BENCHMARKS.md): set MEMCTL_GOCACHE_TREE to a module directory
// whose dependencies are in the module cache and MEMCTL_GOCACHE_FILE to
// one of its Go files (relative). The tree is copied; in the copy, an
// unexported then an exported function is added to the file and the file
// restored, each extracted through the cache and compared with a fresh
// extraction. It logs the times and the heap the cache holds.
func TestGoCacheRealTree(t *testing.T) {
	src, file := os.Getenv("MEMCTL_GOCACHE_TREE"), os.Getenv("MEMCTL_GOCACHE_FILE")
	if src == "" || file == "" {
		t.Skip("MEMCTL_GOCACHE_TREE or MEMCTL_GOCACHE_FILE not set")
	}
	dir := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	c := NewGoCache()
	opts := GoOptions{Offline: true, Cache: c}
	before := heap()
	t0 := time.Now()
	if _, err := ExtractGo(dir, opts); err != nil {
		t.Fatal(err)
	}
	t.Logf("full: %v; the cache holds %.1f MB", time.Since(t0).Round(time.Millisecond), float64(heap()-before)/(1<<20))
	edited := filepath.Join(dir, filepath.FromSlash(file))
	orig, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ what, add string }{
		{"unexported func added", "\nfunc zzAdded() int { return 1 }\n"},
		{"exported func added", "\nfunc ZZAdded() int { return 1 }\n"},
		{"restored", ""},
	} {
		if err := os.WriteFile(edited, []byte(string(orig)+v.add), 0o644); err != nil {
			t.Fatal(err)
		}
		deltas := c.Deltas()
		t0 = time.Now()
		got, err := ExtractGo(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(t0)
		want, err := ExtractGo(dir, GoOptions{Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.Deltas() != deltas+1 {
			t.Fatalf("%s: not incremental", v.what)
		}
		if diff := cmp.Diff(renderAll(want.Graph), renderAll(got.Graph)); diff != "" {
			t.Fatalf("%s: differs from a fresh extraction:\n%s", v.what, firstLines(diff, 40))
		}
		t.Logf("%s: incremental in %v", v.what, took.Round(time.Millisecond))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
