package freshness

import (
	"fmt"
	"path/filepath"
	"testing"
)

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
	for i := 0; i < b.N; i++ {
		res, err := Refresh(s, dir, o)
		if err != nil || res.Refreshed {
			b.Fatal(res, err)
		}
	}
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
	for i := 0; i < b.N; i++ {
		write(b, dir, "p10/m0200.py", fmt.Sprintf("def g%d():\n    return %d\n", i, i))
		res, err := Refresh(s, dir, o)
		if err != nil || res.Rev == 0 {
			b.Fatal(res, err)
		}
	}
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
	for i := 0; i < b.N; i++ {
		write(b, dir, "p10/m0200.py", fmt.Sprintf("def g%d():\n    return %d\n", i, i))
		res, err := Refresh(s, dir, o)
		if err != nil || res.Rev == 0 {
			b.Fatal(res, err)
		}
	}
	b.StopTimer()
	if o.Cache.Deltas() < b.N-1 {
		b.Fatalf("%d of %d refreshes took the per-file path", o.Cache.Deltas(), b.N)
	}
}
