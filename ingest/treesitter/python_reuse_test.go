package treesitter

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/ingest"
)

// pyVariants are the contents each file of the reuse fixture may take ("" :
// absent). The files use each other across modules: imports, from-imports
// of names and submodules, relative and star imports, base classes, a
// re-export through __init__, test code calling into the tree, an import
// that resolves only while a module exists, and symbol keys two modules
// share (class pkg.a.b's method f, module pkg.a.b's function f).
var pyVariants = map[string][]string{
	"pkg/__init__.py": {
		"from pkg.base import Base\n",
		"from pkg.base import Base, helper\n",
		"",
	},
	"pkg/base.py": {
		"def helper(x):\n    return x\n\n\nclass Base:\n    def area(self):\n        return helper(0)\n",
		"def helper2(x):\n    return x\n\n\nclass Base:\n    def area(self):\n        return helper2(0)\n", // rename
		"class Base:\n    def area(self):\n        return 1\n",                                             // helper removed
		"def helper(x):\n    return x\n\n\nclass Base:\n    def volume(self):\n        return helper(1)\n",
	},
	"pkg/shapes.py": {
		"from .base import Base, helper\n\n\nclass Square(Base):\n    def side(self):\n        return self.area() + helper(2)\n",
		"from pkg import base\n\n\nclass Square(base.Base):\n    def side(self):\n        return base.helper(3)\n",
		"",
	},
	"pkg/geo.py": {
		"import pkg.shapes\n\n\ndef total():\n    return pkg.shapes.Square().side() + pkg.shapes.Square().area()\n",
		"from pkg import Base\nfrom pkg.extra import more\n\n\ndef total():\n    return Base().area() + more()\n",
	},
	"pkg/util.py": {
		"from pkg.shapes import *\n\n\ndef u():\n    return Square().side() + helper(4)\n",
		"from .extra import *\n\n\ndef u():\n    return more() + Base().area()\n",
	},
	"pkg/extra.py": {
		"",
		"from pkg.base import Base\n\n\ndef more():\n    return Base().area()\n",
		"def more():\n    return 0\n",
	},
	"pkg/sub/deep.py": {
		"",
		"from pkg.extra import more\n\n\ndef deep():\n    return more()\n",
	},
	"pkg/test_geo.py": {
		"from pkg.geo import total\n\n\ndef test_total():\n    assert total() == 0\n",
		"import pkg.geo\nfrom pkg.sub.deep import deep\n\n\ndef test_total():\n    assert pkg.geo.total() == deep()\n",
	},
	"pkg/a.py": {
		"class b:\n    def f(self):\n        return 1\n",
		"def g():\n    return 1\n",
		"import alone\n\n\nclass b:\n    def f(self):\n        return alone.solo()\n",
	},
	"pkg/a/b.py": {
		"",
		"from pkg.base import helper\n\n\ndef f():\n    return helper(5)\n",
	},
	"alone.py": {
		"def solo():\n    return solo2()\n\n\ndef solo2():\n    return 1\n",
		"def solo():\n    return 2\n",
	},
	// An import cycle: c1 → c2 → c3 → c1, each calling the next's
	// function (the freshness benchmark's tree is one such cycle).
	"c1.py": {
		"from c2 import f2\n\n\ndef f1():\n    return f2()\n",
		"from c2 import f2\n\n\ndef f1():\n    return f2() + 1\n",
	},
	"c2.py": {
		"from c3 import f3\n\n\ndef f2():\n    return f3()\n",
		"from c3 import f3\n\n\ndef f2():\n    return f3() + 2\n", // f2 kept
		"from c3 import f3\n\n\ndef g2():\n    return f3()\n",     // f2 gone: c1's call unresolved
	},
	"c3.py": {
		"from c1 import f1\n\n\ndef f3():\n    return f1()\n",
		"from c1 import f1\n\n\ndef f3():\n    return 3\n",
	},
}

// reuseStep extracts dir through c with prev and compares the graph with
// a fresh extraction's (no cache, nothing reused).
func reuseStep(t *testing.T, dir string, c *Cache, prev *ingest.Graph, step string) *Result {
	t.Helper()
	langs := []string{ingest.LangPython}
	got, err := Extract(dir, langs, Options{Cache: c, Previous: prev, AllIfAny: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Extract(dir, langs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(dumpGraph(want.Graph), dumpGraph(got.Graph)); d != "" {
		t.Fatalf("%s: extraction reusing the last resolution differs (-fresh +reused):\n%s", step, d)
	}
	if g, w := *got.Lang(ingest.LangPython), *want.Lang(ingest.LangPython); g != w {
		t.Fatalf("%s: language result %+v, fresh %+v", step, g, w)
	}
	return got
}

// putVariant writes file rel of dir (creating its directories), or
// removes it when text is "".
func putVariant(t testing.TB, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if text == "" {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPythonReuseRandomEdits is the differential test of reusing the last
// resolution: random edits of the fixture (definitions renamed, removed,
// modules added and removed, imports redirected), each extraction through
// one cache with the previous graph compared with a fresh one.
func TestPythonReuseRandomEdits(t *testing.T) {
	paths := make([]string, 0, len(pyVariants))
	for p := range pyVariants {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	seeds, steps := []int64{1, 2, 3, 4, 5, 6, 7, 8}, 40
	if testing.Short() {
		seeds, steps = seeds[:2], 15
	}
	reused, resolved := 0, 0
	for _, seed := range seeds {
		rng := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		for _, p := range paths {
			putVariant(t, dir, p, pyVariants[p][0])
		}
		c := NewCache()
		prev := reuseStep(t, dir, c, nil, "first").Graph
		for step := 0; step < steps; step++ {
			edits := 1 + rng.Intn(2)
			what := ""
			for range edits {
				p := paths[rng.Intn(len(paths))]
				v := rng.Intn(len(pyVariants[p]))
				putVariant(t, dir, p, pyVariants[p][v])
				what += fmt.Sprintf(" %s#%d", p, v)
			}
			res := reuseStep(t, dir, c, prev, fmt.Sprintf("seed %d step %d:%s", seed, step, what))
			reused += res.Reused
			resolved += res.Lang(ingest.LangPython).Files - res.Reused
			prev = res.Graph
		}
	}
	if reused == 0 || resolved == 0 {
		t.Fatalf("%d modules reused, %d resolved: the test exercises one path only", reused, resolved)
	}
	t.Logf("%d modules reused, %d resolved again", reused, resolved)
}

// TestPythonReuseResolvesWhatAnEditReaches: which modules an edit makes
// resolve again — the module edited, added or removed and those whose last
// resolution looked its name up (directly, or through a lookup, class
// bases or value cached while resolving another) — derived by hand from
// the fixture.
func TestPythonReuseResolvesWhatAnEditReaches(t *testing.T) {
	dir := t.TempDir()
	for p, vs := range pyVariants {
		putVariant(t, dir, p, vs[0])
	}
	c := NewCache()
	prev := reuseStep(t, dir, c, nil, "first").Graph
	// Present: pkg/__init__, base, shapes, geo, util, test_geo, a, alone,
	// c1, c2, c3 (extra, sub/deep, a/b absent at first).
	for _, tc := range []struct {
		rel, text string
		resolved  int
		why       string
	}{
		{"alone.py", pyVariants["alone.py"][1], 1, "alone.py: nothing imports it"},
		// geo imports pkg.shapes and reads pkg, pkg.shapes and names
		// under pkg.shapes, never pkg.test_geo.
		{"pkg/test_geo.py", pyVariants["pkg/test_geo.py"][0] + "\n", 1, "test_geo alone"},
		// test_geo takes total from pkg.geo.
		{"pkg/geo.py", pyVariants["pkg/geo.py"][0] + "\n", 2, "geo and test_geo"},
		// base ← __init__ and shapes (import from it), util (helper
		// through shapes' cached lookup), geo (Square's bases, cached
		// when shapes' test code was marked, name Base in pkg.base).
		// test_geo calls total, which reads no base; a, alone and the
		// cycle read none.
		{"pkg/base.py", pyVariants["pkg/base.py"][1], 5, "base, __init__, shapes, util, geo"},
		// No module looked pkg.extra up.
		{"pkg/extra.py", pyVariants["pkg/extra.py"][2], 1, "extra alone"},
		// Module pkg.a.b added while pkg.a has class b: they share
		// sym:py:pkg.a.b.f, so both resolve again.
		{"pkg/a/b.py", pyVariants["pkg/a/b.py"][1], 2, "a/b, a (shared keys)"},
		{"pkg/a.py", pyVariants["pkg/a.py"][2], 2, "a, a/b (shared keys)"},
		// Class b gone from pkg.a: the previous graph's edges from
		// sym:py:pkg.a.b.f are partly its (calls alone.solo), so pkg.a.b
		// resolves again.
		{"pkg/a.py", pyVariants["pkg/a.py"][1], 2, "a, a/b (shared last time)"},
		// In the cycle, c1 looked c2 up, c3 did not: the rest of the
		// cycle is reused, whether the edit keeps f2 …
		{"c2.py", pyVariants["c2.py"][1], 2, "c2 and c1 (f2 kept)"},
		// … or removes it, leaving c1's call unresolved (reuseStep
		// compares the graph with a fresh extraction's).
		{"c2.py", pyVariants["c2.py"][2], 2, "c2 and c1 (f2 gone)"},
		{"c1.py", pyVariants["c1.py"][1], 2, "c1 and c3"},
	} {
		putVariant(t, dir, tc.rel, tc.text)
		res := reuseStep(t, dir, c, prev, tc.why)
		if got := res.Lang(ingest.LangPython).Files - res.Reused; got != tc.resolved {
			t.Fatalf("%s: %d modules resolved again, want %d", tc.why, got, tc.resolved)
		}
		prev = res.Graph
	}
}
