package treesitter

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/ingest"
)

// fixtureDir is the repository's testdata/treesitter.
const fixtureDir = "../../testdata/treesitter"

// copyFixture copies testdata/treesitter/<name> into a fresh directory and
// adds the files given (path → content), which the repository cannot hold
// (its own .gitignore would hide some).
func copyFixture(t *testing.T, name string, extra map[string]string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(fixtureDir, name))); err != nil {
		t.Fatal(err)
	}
	for rel, content := range extra {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// wantLines reads a hand-written expectation: its lines that are neither
// blank nor comments, sorted.
func wantLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// checkGraph compares a graph with a hand-written expectation as sets of
// lines and reports what is missing and what is extra.
func checkGraph(t *testing.T, g *ingest.Graph, want string) {
	t.Helper()
	got := strings.Split(strings.TrimSpace(render(g)), "\n")
	slices.Sort(got)
	exp := wantLines(t, want)
	have := make(map[string]bool, len(got))
	for _, l := range got {
		have[l] = true
	}
	expected := make(map[string]bool, len(exp))
	for _, l := range exp {
		expected[l] = true
		if !have[l] {
			t.Errorf("%s: missing %s", want, l)
		}
	}
	for _, l := range got {
		if !expected[l] {
			t.Errorf("%s: unexpected %s", want, l)
		}
	}
}

// skipped are files every fixture gets that the walk must leave out.
var skipped = map[string]string{
	".hidden/a.py":                 "def hidden(): pass\n",
	"build/b.py":                   "def built(): pass\n",
	"node_modules/m/index.js":      "function vendored() {}\n",
	"target/debug/build.rs":        "fn built() {}\n",
	"venv/pyvenv.cfg":              "home = /usr/bin\n",
	"venv/lib/v.py":                "def venv(): pass\n",
	"generated/gen.py":             "def gen(): pass\n",
	"generated/gen.ts":             "export function gen() {}\n",
	"pkg/scratch.tmp.py":           "def tmp(): pass\n",
	"dist/bundle.js":               "function bundled() {}\n",
	"vendor/v.rs":                  "fn vendored() {}\n",
	"site-packages/sp/__init__.py": "",
}

func extractFixture(t *testing.T, name string, langs []string) *Result {
	t.Helper()
	extra := map[string]string{".gitignore": "generated/\n*.tmp.py\n"}
	for k, v := range skipped {
		extra[k] = v
	}
	dir := copyFixture(t, name, extra)
	res, err := Extract(dir, langs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPythonFixture(t *testing.T) {
	res := extractFixture(t, "python", []string{ingest.LangPython})
	checkGraph(t, res.Graph, "python.want")
	lr := res.Lang(ingest.LangPython)
	// value.strip(), shadow's helper(), e.run() (make() declares no
	// return type).
	if lr.Files != 4 || lr.Unresolved != 3 || lr.ParseErrors != 0 {
		t.Errorf("python: %+v, want 4 files, 3 unresolved calls", *lr)
	}
}

func TestTypeScriptFixture(t *testing.T) {
	res := extractFixture(t, "typescript", []string{ingest.LangTypeScript, ingest.LangJavaScript})
	checkGraph(t, res.Graph, "typescript.want")
	ts, js := res.Lang(ingest.LangTypeScript), res.Lang(ingest.LangJavaScript)
	// Every call resolves (s.area() through items: shapes.Shape[]), or
	// leaves the tree (expect(…).toBe() calls what a global returns).
	if ts.Files != 4 || ts.Unresolved != 0 || js.Files != 2 || js.Unresolved != 0 {
		t.Errorf("typescript %+v, javascript %+v: want 4 and 2 files, no unresolved call", *ts, *js)
	}
}

func TestRustFixture(t *testing.T) {
	res := extractFixture(t, "rust", []string{ingest.LangRust})
	checkGraph(t, res.Graph, "rust.want")
	// unit().area() and apply's double(1.0).
	if lr := res.Lang(ingest.LangRust); lr.Files != 4 || lr.Unresolved != 2 {
		t.Errorf("rust: %+v, want 4 files, 2 unresolved calls", *lr)
	}
}

// TestFileTermsInPayloads: every source file node of the three languages
// carries the vocabulary of its text (ingest.FileTerms of the file as read
// from disk).
func TestFileTermsInPayloads(t *testing.T) {
	for _, c := range []struct {
		fixture string
		langs   []string
	}{
		{"python", []string{ingest.LangPython}},
		{"typescript", []string{ingest.LangTypeScript, ingest.LangJavaScript}},
		{"rust", []string{ingest.LangRust}},
	} {
		dir := copyFixture(t, c.fixture, nil)
		res, err := Extract(dir, c.langs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		for _, n := range res.Graph.Nodes() {
			if n.Type != ingest.TypeFile {
				continue
			}
			var p ingest.FilePayload
			if err := json.Unmarshal(n.Payload, &p); err != nil {
				t.Fatal(err)
			}
			src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if want := ingest.FileTerms(src); len(want) == 0 || !maps.Equal(want, p.Terms) {
				t.Errorf("%s: terms %v, want %v", p.Path, p.Terms, want)
			}
			files++
		}
		if files == 0 {
			t.Errorf("%s: no file nodes", c.fixture)
		}
	}
}
