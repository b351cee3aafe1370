package precise_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/precise"
	"github.com/memctl/memctl/lmdbstore"
	scippb "github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"
)

// pyTree is a small Python package. Line numbers (0-based) are those the
// SCIP fixture below refers to.
var pyTree = map[string]string{
	"pkg/__init__.py": "",
	"pkg/a.py": "from pkg.b import helper\n" + // 0
		"\n" +
		"class Svc:\n" + // 2
		"    def run(self):\n" + // 3
		"        return helper()\n" + // 4
		"\n" +
		"def make():\n" + // 6
		"    s = Svc()\n" + // 7
		"    s.run()\n" + // 8
		"    return s\n", // 9
	"pkg/b.py": "def helper():\n" + // 0
		"    return 1\n" +
		"\n" +
		"def call_it(f):\n" + // 3
		"    f.run()\n" + // 4
		"\n" +
		"TABLE = helper()\n", // 6
}

const (
	pyA = "scip-python python pkg 0.1 `pkg.a`/"
	pyB = "scip-python python pkg 0.1 `pkg.b`/"
)

func occ(r []int32, sym string, def bool, enclosing ...int32) *scippb.Occurrence {
	o := &scippb.Occurrence{Range: r, Symbol: sym, EnclosingRange: enclosing, SymbolRoles: int32(scippb.SymbolRole_ReadAccess)}
	if def {
		o.SymbolRoles = int32(scippb.SymbolRole_Definition)
	}
	return o
}

// pyIndex is what a compiler-grade indexer says of pyTree, written by hand
// as scip-python writes it (module definitions, enclosing ranges, import
// statements as references). Unlike syntax, it resolves `f.run()` in
// call_it (as if f's type were known), and it defines the variable TABLE,
// whose initialiser calls helper.
func pyIndex() *scippb.Index {
	return &scippb.Index{
		Metadata: &scippb.Metadata{ToolInfo: &scippb.ToolInfo{Name: "scip-python", Version: "0.6.6"}, ProjectRoot: "file:///src"},
		Documents: []*scippb.Document{{
			RelativePath: "pkg/a.py", Language: "python",
			Occurrences: []*scippb.Occurrence{
				occ([]int32{0, 0, 0}, pyA+"__init__:", true),
				occ([]int32{0, 5, 10}, pyB+"__init__:", false),
				occ([]int32{0, 18, 24}, pyB+"helper().", false),
				occ([]int32{2, 6, 9}, pyA+"Svc#", true, 2, 0, 4, 23),
				occ([]int32{3, 8, 11}, pyA+"Svc#run().", true, 3, 4, 4, 23),
				occ([]int32{4, 15, 21}, pyB+"helper().", false),
				occ([]int32{6, 4, 8}, pyA+"make().", true, 6, 0, 9, 12),
				occ([]int32{7, 8, 11}, pyA+"Svc#", false),
				occ([]int32{8, 6, 9}, pyA+"Svc#run().", false),
			},
		}, {
			RelativePath: "pkg/b.py", Language: "python",
			Occurrences: []*scippb.Occurrence{
				occ([]int32{0, 0, 0}, pyB+"__init__:", true),
				occ([]int32{0, 4, 10}, pyB+"helper().", true, 0, 0, 1, 12),
				occ([]int32{3, 4, 11}, pyB+"call_it().", true, 3, 0, 4, 11),
				occ([]int32{3, 12, 13}, pyB+"call_it().(f)", true),
				occ([]int32{4, 6, 9}, pyA+"Svc#run().", false),
				occ([]int32{6, 0, 5}, pyB+"TABLE.", true, 6, 0, 6, 16),
				occ([]int32{6, 8, 14}, pyB+"helper().", false),
			},
		}},
	}
}

// wantPrecise are the resolved edges of pyTree by the index, derived by
// hand: the callers are the innermost definitions, the import statement's
// reference belongs to the file, TABLE gets a node of its own.
var wantPrecise = []string{
	"file:pkg/a.py calls sym:py:pkg.b.helper",
	"sym:py:pkg.a.Svc.run calls sym:py:pkg.b.helper",
	"sym:py:pkg.a.make calls sym:py:pkg.a.Svc.run",
	"sym:py:pkg.a.make references sym:py:pkg.a.Svc",
	"sym:py:pkg.b.TABLE calls sym:py:pkg.b.helper",
	"sym:py:pkg.b.call_it calls sym:py:pkg.a.Svc.run",
}

// fakeIndexer writes an executable that logs its arguments to log and
// then runs body (sh) with $out set to the path after -o/--output.
func fakeIndexer(t *testing.T, dir, body string) (exe, log string) {
	t.Helper()
	exe, log = filepath.Join(dir, "fake-indexer"), filepath.Join(dir, "runs.log")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\nout=\nwhile [ $# -gt 0 ]; do case \"$1\" in -o|--output) out=$2; shift;; esac; shift; done\n" + body + "\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, log
}

func runs(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tree")
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func newStore(t *testing.T) *lmdbstore.Store {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// noPath finds nothing: only flags and variables name indexers.
func noPath(string) (string, error) { return "", errors.New("not on PATH") }

func ingestCode(t *testing.T, s *lmdbstore.Store, dir string, p *precise.Options) codetree.Summary {
	t.Helper()
	sum, _, err := codetree.Ingest(s, dir, codetree.Options{Langs: []string{ingest.LangPython}, WithGo: true, Precise: p})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// resolvedEdges lists the calls, references and implements edges of the
// store as "SRC REL DST", sorted.
func resolvedEdges(t *testing.T, s *lmdbstore.Store) []string {
	t.Helper()
	var out []string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		names := map[lmdbstore.RelID]string{}
		for _, n := range []string{ingest.RelCalls, ingest.RelReferences, ingest.RelImplements} {
			if rel, err := r.RelationByName(n); err == nil {
				names[rel.ID] = n
			}
		}
		return r.ScanEdges(lmdbstore.At{}, func(e lmdbstore.Edge) error {
			name, ok := names[e.Rel]
			if !ok {
				return nil
			}
			src, err := r.KeyOf(e.Src)
			if err != nil {
				return err
			}
			dst, err := r.KeyOf(e.Dst)
			if err != nil {
				return err
			}
			out = append(out, src+" "+name+" "+dst)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func payload(t *testing.T, s *lmdbstore.Store, key string) map[string]any {
	t.Helper()
	var m map[string]any
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		n, err := r.GetNode(key, lmdbstore.At{})
		if err != nil {
			return err
		}
		return json.Unmarshal(n.Payload, &m)
	})
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return m
}

func writeIndex(t *testing.T, dir string, ix *scippb.Index) string {
	t.Helper()
	b, err := proto.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "fixture.scip")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPreciseImportsTheIndex(t *testing.T) {
	tools := t.TempDir()
	exe, log := fakeIndexer(t, tools, "cp "+writeIndex(t, tools, pyIndex())+" \"$out\"")
	dir := writeTree(t, pyTree)
	s := newStore(t)
	opts := &precise.Options{Paths: map[string]string{"scip-python": exe}, LookPath: noPath, Getenv: func(string) string { return "" }}
	sum := ingestCode(t, s, dir, opts)

	if diff := cmp.Diff(wantPrecise, resolvedEdges(t, s)); diff != "" {
		t.Errorf("resolved edges (-want +got):\n%s", diff)
	}
	want := []precise.Lang{{Lang: ingest.LangPython, Indexer: "scip-python", Version: "0.6.6", Files: 3, Precise: 2,
		Fallback: "scip-python: the index does not cover every file; the others are read from syntax"}}
	if diff := cmp.Diff(want, sum.Precise, cmpIgnoreSeconds); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if got := runs(t, log); len(got) != 1 || got[0] != "index --quiet --project-name tree --output "+outArg(got[0]) {
		t.Errorf("indexer runs: %q", got)
	}
	b := payload(t, s, "file:pkg/b.py")
	if b["precise"] != "scip-python" || b["unresolved"] != nil {
		t.Errorf("file:pkg/b.py payload %v: want precise scip-python and no unresolved count", b)
	}
	if p := payload(t, s, "file:pkg/__init__.py"); p["precise"] != nil {
		t.Errorf("a file the index does not cover is marked precise: %v", p)
	}
	if p := payload(t, s, ingest.IngestKey(ingest.LangPython)); p["precise"] != "scip-python" {
		t.Errorf("ingest:python payload %v", p)
	}
	if p := payload(t, s, "sym:py:pkg.b.TABLE"); p["kind"] != ingest.KindVar || p["line_start"] != 7.0 || p["path"] != "pkg/b.py" {
		t.Errorf("TABLE: %v", p)
	}

	// Unchanged tree: the indexer does not run again, nothing is written.
	if again := ingestCode(t, s, dir, opts); !again.Unchanged || again.Rev != 0 {
		t.Errorf("second run: %+v", again)
	}
	if n := len(runs(t, log)); n != 1 {
		t.Errorf("unchanged tree: indexer ran %d times, want 1", n)
	}
	// A changed file: indexed again.
	if err := os.WriteFile(filepath.Join(dir, "pkg/b.py"), []byte(pyTree["pkg/b.py"]+"# end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ingestCode(t, s, dir, opts)
	if n := len(runs(t, log)); n != 2 {
		t.Errorf("changed tree: indexer ran %d times in all, want 2", n)
	}
	// Without --precise the language is read from syntax again, and
	// equals a syntax-only store's graph.
	ingestCode(t, s, dir, nil)
	plain := newStore(t)
	ingestCode(t, plain, dir, nil)
	if diff := cmp.Diff(resolvedEdges(t, plain), resolvedEdges(t, s)); diff != "" {
		t.Errorf("back to syntax (-syntax store +switched store):\n%s", diff)
	}
	if p := payload(t, s, "file:pkg/b.py"); p["precise"] != nil || p["unresolved"] != 1.0 {
		t.Errorf("back to syntax: file:pkg/b.py payload %v", p)
	}
}

func outArg(line string) string {
	f := strings.Fields(line)
	return f[len(f)-1]
}

var cmpIgnoreSeconds = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Seconds" }, cmp.Ignore())

// A language whose indexer is missing, fails or writes garbage stays on
// syntax: the summary names it and the reason, the graph is the syntax
// graph, and nothing is marked precise.
func TestPreciseFallsBackToSyntax(t *testing.T) {
	dir := writeTree(t, pyTree)
	plain := newStore(t)
	ingestCode(t, plain, dir, nil)
	syntax := resolvedEdges(t, plain)
	if slices.Equal(syntax, wantPrecise) {
		t.Fatal("the fixture does not tell syntax from precise")
	}
	for _, tc := range []struct {
		name, body, reason string
		unset              bool
	}{
		{name: "missing", unset: true, reason: "scip-python not found (PATH, MEMCTL_SCIP_PYTHON, --indexer scip-python=PATH)"},
		{name: "exit", body: "echo 'Pyright: cannot read pyproject.toml' >&2; exit 3", reason: "scip-python: exited with status 3: Pyright: cannot read pyproject.toml"},
		{name: "garbage", body: "echo 'not an index' > \"$out\"", reason: "scip-python: its output: not a SCIP index: protobuf:"},
		{name: "no output", body: "true", reason: "scip-python: wrote no index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe, log := fakeIndexer(t, t.TempDir(), tc.body)
			opts := &precise.Options{Paths: map[string]string{"scip-python": exe}, LookPath: noPath, Getenv: func(string) string { return "" }}
			if tc.unset {
				opts.Paths = nil
			}
			s := newStore(t)
			sum := ingestCode(t, s, dir, opts)
			if len(sum.Precise) != 1 || sum.Precise[0].Lang != ingest.LangPython || sum.Precise[0].Precise != 0 ||
				!strings.HasPrefix(sum.Precise[0].Fallback, tc.reason) {
				t.Errorf("summary %+v, want python falling back with %q", sum.Precise, tc.reason)
			}
			if diff := cmp.Diff(syntax, resolvedEdges(t, s)); diff != "" {
				t.Errorf("graph (-syntax +got):\n%s", diff)
			}
			if p := payload(t, s, ingest.IngestKey(ingest.LangPython)); p["precise"] != nil {
				t.Errorf("ingest:python marked precise: %v", p)
			}
			if tc.unset {
				if runs(t, log) != nil {
					t.Error("an indexer nobody named ran")
				}
				// No indexer: an unchanged tree is not read again.
				if again := ingestCode(t, s, dir, opts); !again.Unchanged {
					t.Errorf("unchanged tree without indexer read again: %+v", again)
				}
				return
			}
			// A failed indexer is tried again at the next run (its
			// environment may have been fixed), as Go's fallbacks are.
			ingestCode(t, s, dir, opts)
			if n := len(runs(t, log)); n != 2 {
				t.Errorf("failed indexer ran %d times in two runs, want 2", n)
			}
		})
	}
}

// Discovery: the flag wins over the variable, the variable over PATH; a
// flag or variable naming a missing file is reported as such.
func TestFind(t *testing.T) {
	tools := t.TempDir()
	flagExe, _ := fakeIndexer(t, filepath.Join(tools), "true")
	envDir := filepath.Join(tools, "env")
	pathDir := filepath.Join(tools, "bin")
	for _, d := range []string{envDir, pathDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	envExe, _ := fakeIndexer(t, envDir, "true")
	if err := os.WriteFile(filepath.Join(pathDir, "scip-go"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "MEMCTL_SCIP_GO" {
				return v
			}
			return ""
		}
	}
	ix := precise.IndexerFor(ingest.LangGo)
	for _, tc := range []struct {
		name string
		o    precise.Options
		want string
		err  string
	}{
		{"flag", precise.Options{Paths: map[string]string{"scip-go": flagExe}, Getenv: env(envExe), LookPath: precise.LookPathIn(pathDir)}, flagExe, ""},
		{"env", precise.Options{Getenv: env(envExe), LookPath: precise.LookPathIn(pathDir)}, envExe, ""},
		{"path", precise.Options{Getenv: env(""), LookPath: precise.LookPathIn(pathDir)}, filepath.Join(pathDir, "scip-go"), ""},
		{"none", precise.Options{Getenv: env(""), LookPath: precise.LookPathIn(envDir)}, "", "scip-go not found"},
		{"bad env", precise.Options{Getenv: env(filepath.Join(tools, "nope")), LookPath: precise.LookPathIn(pathDir)}, "", "MEMCTL_SCIP_GO=" + filepath.Join(tools, "nope") + ": not found"},
	} {
		got, err := tc.o.Find(ix)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := precise.ParsePaths([]string{"scip-java=/x"}); err == nil {
		t.Error("an unknown indexer name was accepted")
	}
}

// scip-typescript --infer-tsconfig writes tsconfig.json into the tree: an
// ingest removes it again, and never a tsconfig.json that was there.
func TestPreciseLeavesTheTreeAsItWas(t *testing.T) {
	for _, had := range []bool{false, true} {
		files := map[string]string{"a.js": "function f() { return g() }\nfunction g() { return 1 }\n"}
		if had {
			files["tsconfig.json"] = "{\"compilerOptions\": {\"allowJs\": true}}\n"
		}
		dir := writeTree(t, files)
		tools := t.TempDir()
		// As scip-typescript: writes tsconfig.json when told to infer it.
		exe, log := fakeIndexer(t, tools, "grep -q -- --infer-tsconfig "+filepath.Join(tools, "runs.log")+" && echo '{}' > tsconfig.json; exit 1")
		s := newStore(t)
		opts := &precise.Options{Paths: map[string]string{"scip-typescript": exe}, LookPath: noPath, Getenv: func(string) string { return "" }}
		if _, _, err := codetree.Ingest(s, dir, codetree.Options{Langs: []string{ingest.LangTypeScript, ingest.LangJavaScript}, Precise: opts}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "tsconfig.json"))
		switch {
		case had && string(b) != files["tsconfig.json"]:
			t.Errorf("the tree's tsconfig.json was changed: %q, %v", b, err)
		case !had && !errors.Is(err, os.ErrNotExist):
			t.Errorf("the indexer's tsconfig.json was left in the tree: %v", err)
		}
		if infer := strings.Contains(strings.Join(runs(t, log), "\n"), "--infer-tsconfig"); infer == had {
			t.Errorf("tsconfig.json present %v, --infer-tsconfig passed %v", had, infer)
		}
	}
}

// goTree is the source of testdata/scip/go.scip (ingest/scip's hand-written
// scip-go fixture; lines as its comment gives them).
var goTree = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.21\n",
	"a.go":   "package m\n\nimport \"fmt\"\n\nfunc A() {\n\tB()\n\tfmt.Println()\n}\n\ntype T struct{}\nfunc (T) M() {\n\tA()\n}\n",
	"b.go":   "package m\n\nfunc B() {\n\tT{}.M()\n\tB()\n}\n\ntype I interface{ M() }\n",
}

// Go through scip-go: keys are ingest go's (import paths), the
// type-checked graph's nodes stay, and the resolved edges are the
// index's. Hand-derived from the fixture (scip-go 0.1.26 form: a
// reference belongs to the definition before it): A calls B, T.M calls A
// (T.M's receiver mention of T falls in T's own span and is dropped as
// T → T), B calls T.M and references T (B → B is recursion, dropped), T
// implements I. Type-checking alone also has T.M → T (the receiver).
func TestPreciseGo(t *testing.T) {
	tools := t.TempDir()
	fixture, err := filepath.Abs("../../testdata/scip/go.scip")
	if err != nil {
		t.Fatal(err)
	}
	exe, log := fakeIndexer(t, tools, "cp "+fixture+" \"$out\"")
	dir := writeTree(t, goTree)
	s := newStore(t)
	opts := &precise.Options{Paths: map[string]string{"scip-go": exe}, LookPath: noPath, Getenv: func(string) string { return "" }}
	ingestCode(t, s, dir, opts)
	want := []string{
		"sym:example.com/m.A calls sym:example.com/m.B",
		"sym:example.com/m.B calls sym:example.com/m.T.M",
		"sym:example.com/m.B references sym:example.com/m.T",
		"sym:example.com/m.T implements sym:example.com/m.I",
		"sym:example.com/m.T.M calls sym:example.com/m.A",
	}
	if diff := cmp.Diff(want, resolvedEdges(t, s)); diff != "" {
		t.Errorf("resolved edges (-want +got):\n%s", diff)
	}
	if got := runs(t, log); len(got) != 1 || !strings.HasPrefix(got[0], "--quiet -o ") || !strings.HasSuffix(got[0], " ./...") {
		t.Errorf("scip-go runs: %q", got)
	}
	for _, key := range []string{"file:a.go", "file:b.go", ingest.IngestGoKey} {
		if p := payload(t, s, key); p["precise"] != "scip-go" {
			t.Errorf("%s payload %v: not marked precise", key, p)
		}
	}
	if again := ingestCode(t, s, dir, opts); !again.Unchanged || len(runs(t, log)) != 1 {
		t.Errorf("unchanged Go tree read or indexed again: %+v, %d runs", again, len(runs(t, log)))
	}
	plain := newStore(t)
	ingestCode(t, plain, dir, nil)
	if got := resolvedEdges(t, plain); !slices.Contains(got, "sym:example.com/m.T.M references sym:example.com/m.T") {
		t.Errorf("type-checked graph: %q", got)
	}
}
