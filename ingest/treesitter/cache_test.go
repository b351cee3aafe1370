package treesitter

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/ingest"
)

// dumpGraph is every node (with its payload) and edge of g.
func dumpGraph(g *ingest.Graph) []string {
	var out []string
	for _, n := range g.Nodes() {
		out = append(out, n.Key+" "+n.Type+" "+string(n.Payload))
	}
	for _, e := range g.Edges() {
		out = append(out, e.Src+" "+e.Rel+" "+e.Dst)
	}
	return out
}

// TestCacheExtractsAsFresh: extractions through one cache, the tree
// edited between them, give the graph an extraction without a cache
// gives; the cache holds one parse per file; a tree over the cache's
// budget is not kept.
func TestCacheExtractsAsFresh(t *testing.T) {
	dir := t.TempDir()
	put := writer(t, dir)
	put("a.py", "def f():\n    return 1\n")
	put("b.py", "from a import f\n\n\ndef g():\n    return f()\n")
	put("c.ts", "export function h(): number { return 1 }\n")
	c := NewCache()
	check := func(step string, known map[string]string) {
		t.Helper()
		got, err := Extract(dir, TreeSitterLanguages, Options{Cache: c, Known: known})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Extract(dir, TreeSitterLanguages, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(dumpGraph(want.Graph), dumpGraph(got.Graph)); d != "" {
			t.Fatalf("%s: cached extraction differs (-fresh +cached):\n%s", step, d)
		}
	}
	check("first", nil)
	if c.Len() != 3 || c.Over() {
		t.Fatalf("first: %d parses held, over %t; want 3", c.Len(), c.Over())
	}
	put("a.py", "def f2():\n    return 2\n")
	check("a.py's definition renamed", nil)
	put("b.py", "from a import f2\n\n\ndef g():\n    return f2()\n")
	// b.py's content known from a stat: taken from the cache, not read.
	check("b.py follows", map[string]string{"a.py": contentHash([]byte("def f2():\n    return 2\n"))})
	if c.Len() != 3 {
		t.Fatalf("%d parses held, want 3 (the files' current contents)", c.Len())
	}
	c.maxBytes = 10
	check("over budget", nil)
	if !c.Over() || c.Len() != 0 || len(c.lastPayloads()) != 0 {
		t.Fatalf("over budget: over %t, %d parses, %d payloads held", c.Over(), c.Len(), len(c.lastPayloads()))
	}
}

// TestCacheOverBudgetNotUsed: a tree over the cache's budget is extracted
// as without a cache — AllIfAny does not drag an unchanged language in —
// and the cache is left empty and over.
func TestCacheOverBudgetNotUsed(t *testing.T) {
	dir := t.TempDir()
	put := writer(t, dir)
	put("a.py", "def f():\n    return 1\n")
	put("c.ts", "export function h(): number { return 1 }\n")
	first, err := Extract(dir, TreeSitterLanguages, Options{})
	if err != nil {
		t.Fatal(err)
	}
	put("a.py", "def f2():\n    return 2\n")
	c := NewCache()
	c.maxBytes = 10
	skip := map[string]string{}
	for _, l := range first.Langs {
		skip[l.Lang] = l.TreeHash
	}
	res, err := Extract(dir, TreeSitterLanguages, Options{Cache: c, AllIfAny: true, SkipIfTreeHash: skip})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Lang(ingest.LangTypeScript).Unchanged || res.Lang(ingest.LangPython).Unchanged {
		t.Fatalf("over budget: typescript unchanged %t, python unchanged %t; want true, false",
			res.Lang(ingest.LangTypeScript).Unchanged, res.Lang(ingest.LangPython).Unchanged)
	}
	if !c.Over() || c.Len() != 0 {
		t.Fatalf("over %t, %d parses held", c.Over(), c.Len())
	}
}

// writer returns what writes a file of dir (and its directories).
func writer(t testing.TB, dir string) func(rel, text string) {
	return func(rel, text string) {
		t.Helper()
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
