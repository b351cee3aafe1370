package eval

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// langHistory is a repository of Go, Python and TypeScript files:
//
//	c1 adds every file                                   (adds: no)
//	c2 pkg/app.py, web/index.ts                          (qualifies)
//	c3 pkg/app.py, README.md                             (one source file: no)
//	c4 m.go, pkg/util.py, web/greet.ts, web/lib.min.js   (qualifies; lib.min.js is build output)
//	c5 pkg/app.py, web/index.ts                          (qualifies)
//	c6 web/index.ts, pkg/app.py, adds web/new.ts         (adds a source file: no)
//	c7 docs/notes.txt, web/greet.ts, pkg/util.py         (qualifies; the text file does not count)
//	c8 src/lib.rs, web/legacy.js                         (qualifies)
//
// pkg/app.py calls pkg/util.py's helper and web/index.ts calls
// web/greet.ts's greet, so the code graph links those pairs.
func langHistory(t *testing.T) (*testRepo, []string) {
	r := newTestRepo(t)
	app := func(rev int) string {
		return "from pkg.util import helper\n\n\ndef run():\n    # revision " + string(rune('0'+rev)) + "\n    return helper()\n"
	}
	util := func(rev int) string {
		return "def helper():\n    # revision " + string(rune('0'+rev)) + "\n    return 1\n"
	}
	index := func(rev int) string {
		return "import { greet } from \"./greet\";\n\n// revision " + string(rune('0'+rev)) + "\nexport function main(): string {\n  return greet();\n}\n"
	}
	greet := func(rev int) string {
		return "// revision " + string(rune('0'+rev)) + "\nexport function greet(): string {\n  return \"hi\";\n}\n"
	}
	var cs []string
	cs = append(cs, r.commit("c1", map[string]string{
		"m.go": goFile("m", 1, "func M() {}"), "pkg/__init__.py": "\n", "pkg/app.py": app(1), "pkg/util.py": util(1),
		"web/index.ts": index(1), "web/greet.ts": greet(1), "web/lib.min.js": "var a=1;\n", "README.md": "r1\n",
		"docs/notes.txt": "n1\n", "src/lib.rs": "pub fn one() -> i32 { 1 }\n", "web/legacy.js": "function legacy() { return 1; }\n",
	}))
	cs = append(cs, r.commit("c2", map[string]string{"pkg/app.py": app(2), "web/index.ts": index(2)}))
	cs = append(cs, r.commit("c3", map[string]string{"pkg/app.py": app(3), "README.md": "r3\n"}))
	cs = append(cs, r.commit("c4", map[string]string{"m.go": goFile("m", 4, "func M() {}"), "pkg/util.py": util(4),
		"web/greet.ts": greet(4), "web/lib.min.js": "var a=4;\n"}))
	cs = append(cs, r.commit("c5", map[string]string{"pkg/app.py": app(5), "web/index.ts": index(5)}))
	cs = append(cs, r.commit("c6", map[string]string{"pkg/app.py": app(6), "web/index.ts": index(6), "web/new.ts": greet(6)}))
	cs = append(cs, r.commit("c7", map[string]string{"docs/notes.txt": "n7\n", "web/greet.ts": greet(7), "pkg/util.py": util(7)}))
	cs = append(cs, r.commit("c8", map[string]string{"src/lib.rs": "pub fn one() -> i32 { 8 }\n", "web/legacy.js": "function legacy() { return 8; }\n"}))
	return r, cs
}

// TestCochangeLanguages: the commits and files of every language are
// selected by hand-derived rules, memory at each parent holds the Python
// and TypeScript code graph, and the co-change baseline's answers follow
// from the history by hand.
func TestCochangeLanguages(t *testing.T) {
	r, cs := langHistory(t)
	repo, err := OpenRepo(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	commits, err := repo.Commits(10, 0, DefaultCommitRule)
	if err != nil {
		t.Fatal(err)
	}
	type sel struct {
		Hash  string
		Files []string
	}
	var got []sel
	for _, c := range commits {
		got = append(got, sel{c.Hash, c.Files})
	}
	want := []sel{
		{cs[1], []string{"pkg/app.py", "web/index.ts"}},
		{cs[3], []string{"m.go", "pkg/util.py", "web/greet.ts"}},
		{cs[4], []string{"pkg/app.py", "web/index.ts"}},
		{cs[6], []string{"pkg/util.py", "web/greet.ts"}},
		{cs[7], []string{"src/lib.rs", "web/legacy.js"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("qualifying commits (-want +got):\n%s", d)
	}

	var queries []Query
	preds, err := PickPredictors([]string{"cochange", "pagerank", "samedir"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Cochange(r.dir, Options{Commits: 10, Predictors: preds, Trace: func(q Query) { queries = append(queries, q) }})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int{"go": 1, "python": 4, "typescript": 4, "rust": 1, "javascript": 1}, rep.Languages); d != "" {
		t.Errorf("queries by language (-want +got):\n%s", d)
	}
	answers := map[string]map[string][]string{} // commit → file → predictor's answer
	for _, q := range queries {
		for name, a := range q.Answers {
			for _, f := range a {
				if f == "README.md" || f == "docs/notes.txt" || f == "web/lib.min.js" || f == q.File {
					t.Errorf("%s answered %s for %s", name, f, q.File)
				}
			}
		}
		if answers[q.Commit] == nil {
			answers[q.Commit] = map[string][]string{}
		}
		answers[q.Commit][q.File+" cochange"] = q.Answers["cochange"]
		answers[q.Commit][q.File+" pagerank"] = q.Answers["pagerank"]
	}
	// At c5's parent app.py and index.ts changed together twice (c1, c2)
	// and app.py with every other source file once (c1): the co-change
	// baseline puts the partner first. Ties (one commit each) go by change
	// count, then path: util.py and greet.ts changed twice (c1, c4), as did
	// m.go; __init__.py, lib.rs and legacy.js once.
	if d := cmp.Diff([]string{"web/index.ts", "m.go", "pkg/util.py", "web/greet.ts", "pkg/__init__.py", "src/lib.rs", "web/legacy.js"},
		answers[cs[4]]["pkg/app.py cochange"]); d != "" {
		t.Errorf("cochange for app.py at c5 (-want +got):\n%s", d)
	}
	// The code graph: app.py calls util.py, index.ts calls greet.ts.
	for _, tc := range []struct{ file, want string }{{"pkg/app.py", "pkg/util.py"}, {"web/index.ts", "web/greet.ts"}} {
		if a := answers[cs[4]][tc.file+" pagerank"]; !slices.Contains(a, tc.want) {
			t.Errorf("pagerank for %s at c5: %v, want %s among them", tc.file, a, tc.want)
		}
	}
	// cochange at c2's parent: only c1, every pair once; at c4's parent
	// m.go's partners all once. Recall by hand, query by query:
	// c2: app.py→index.ts found (1), index.ts→app.py found (1);
	// c4: each of 3 files wants 2 others, all among ≤ 10 once-changed
	// partners (1, 1, 1); c5: 1, 1; c7: util.py↔greet.ts changed together
	// in c1 and c4: 1, 1; c8: lib.rs and legacy.js changed together in
	// c1: 1, 1. Every query finds all it wants.
	for _, s := range rep.Scores {
		if s.Predictor == "cochange" && (s.Recall != 1 || s.Queries != 11 || s.RecallCI.Lo != 1 || s.RecallCI.Hi != 1) {
			t.Errorf("cochange %+v, want recall 1 [1, 1] over 11 queries", s)
		}
	}
}

// TestCochangeFallbacks: a Go package type-checking cannot read (no file
// built for this platform) is named in the report, once, however many
// parents it was read at.
func TestCochangeFallbacks(t *testing.T) {
	r := newTestRepo(t)
	r.commit("c1", map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "x.go": goFile("x", 1, ""), "y.go": goFile("y", 1, ""),
		"win/w_windows.go": "//go:build windows\n\npackage win\n"})
	r.commit("c2", map[string]string{"x.go": goFile("x", 2, ""), "y.go": goFile("y", 2, "")})
	r.commit("c3", map[string]string{"x.go": goFile("x", 3, ""), "y.go": goFile("y", 3, "")})
	preds, err := PickPredictors([]string{"samedir"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Cochange(r.dir, Options{Commits: 2, Predictors: preds})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Fallbacks) != 1 || rep.Fallbacks[0].Package != "example.com/m/win" {
		t.Errorf("fallbacks %+v, want example.com/m/win alone", rep.Fallbacks)
	}
	plain, err := Cochange(r.dir, Options{Commits: 2, Predictors: preds, SyntaxOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Fallbacks) != 0 {
		t.Errorf("--syntax-only: fallbacks %+v, want none (nothing was asked to type-check)", plain.Fallbacks)
	}
}
