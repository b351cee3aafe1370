package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// eval impact --scip takes the truth from the index (testdata/scip/go.scip,
// ingest/scip's Go fixture; the tree below is its source). Hand-derived:
// one dependent each for A (T.M), B (A), T (B; T.M's receiver mention is
// inside T's own span by the preceding-definition rule) and T.M (B), all
// of them direct dependents in the graph too. Impact's first answer is
// the dependent for A, B and T.M (their only callers); T has two graph
// dependents at distance 1 (B and T.M), so its score is 0 or 1. Without --scip the text says
// the figure is self-referential. A bad index is a usage error.
func TestEvalImpactCommand(t *testing.T) {
	tree := t.TempDir()
	for name, src := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n",
		"a.go":   "package m\n\nimport \"fmt\"\n\nfunc A() {\n\tB()\n\tfmt.Println()\n}\n\ntype T struct{}\nfunc (T) M() {\n\tA()\n}\n",
		"b.go":   "package m\n\nfunc B() {\n\tT{}.M()\n\tB()\n}\n\ntype I interface{ M() }\n",
	} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index, err := filepath.Abs("../testdata/scip/go.scip")
	if err != nil {
		t.Fatal(err)
	}
	out := ok(t, "--json", "eval", "impact", tree, "--scip", index, "--min-dependents", "1")
	for _, want := range []string{`"truth":"scip"`, `"tool":"scip-go"`, `"symbols":4`, `"unmatched":0`, `"dependents":4`, `"in_graph":[1,1,1]`} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(out) {
			t.Errorf("--json lacks %s: %s", want, out)
		}
	}
	if !regexp.MustCompile(`"perfect":[34],`).MatchString(out) {
		t.Errorf("want 3 or 4 perfect symbols: %s", out)
	}
	if out := ok(t, "eval", "impact", tree, "--min-dependents", "1"); !regexp.MustCompile(`(?m)^note: truth is read from the graph scored \(self-referential\)`).MatchString(out) {
		t.Errorf("self-referential output: %q", out)
	}
	wantFailure(t, memctl(t, "eval", "impact", tree, "--scip", filepath.Join(tree, "go.mod")), ExitUsage, "eval impact", "not a SCIP index")
	wantFailure(t, memctl(t, "eval", "impact", tree, "--scip", index, "--min-dependents", "9"), ExitNotFound, "no symbol has enough")
}

// eval impact names the Go packages it read from syntax although
// type-checking was asked for, as ingest go does: here win, whose only
// file is built for Windows alone (nothing built on this platform), in the
// text's syntax-only line and in --json's fallbacks; a tree that loads
// whole has none ([] in JSON).
func TestEvalImpactFallbacks(t *testing.T) {
	tree := t.TempDir()
	for name, src := range map[string]string{
		"go.mod":           "module example.com/m\n\ngo 1.21\n",
		"a.go":             "package m\n\nfunc A() { B() }\n\nfunc B() {}\n\nfunc C() { A(); B() }\n",
		"win/w_windows.go": "//go:build windows\n\npackage win\n\nfunc W() {}\n",
	} {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := ok(t, "eval", "impact", tree, "--min-dependents", "1")
	if !regexp.MustCompile(`(?m)^syntax-only: 1 packages? \(example\.com/m/win\)`).MatchString(out) {
		t.Errorf("text lacks the syntax-only line for example.com/m/win: %q", out)
	}
	js := ok(t, "--json", "eval", "impact", tree, "--min-dependents", "1")
	if !regexp.MustCompile(`"fallbacks":\[\{[^\]]*"package":"example\.com/m/win"`).MatchString(js) {
		t.Errorf("--json lacks the fallback of example.com/m/win: %s", js)
	}
	if err := os.RemoveAll(filepath.Join(tree, "win")); err != nil {
		t.Fatal(err)
	}
	if js := ok(t, "--json", "eval", "impact", tree, "--min-dependents", "1"); !regexp.MustCompile(`"fallbacks":\[\]`).MatchString(js) {
		t.Errorf("a tree that loads whole: want \"fallbacks\":[], got %s", js)
	}
}
