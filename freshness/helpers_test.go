package freshness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// testOptions ingest Go (from syntax, no go list), Python and JavaScript.
func testOptions() Options {
	return Options{Ingest: codetree.Options{Langs: []string{ingest.LangPython, ingest.LangJavaScript}, WithGo: true, SyntaxOnly: true}}
}

func newStore(t testing.TB) *lmdbstore.Store {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "store"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is a small repository with Go, Python and JavaScript, one
// commit.
func fixture(t testing.TB) string {
	files := map[string]string{
		"go.mod":              "module example.com/fx\n\ngo 1.22\n",
		"main.go":             "package main\n\nimport \"example.com/fx/util\"\n\nfunc main() { util.Helper() }\n",
		"util/util.go":        "package util\n\n// Helper helps.\nfunc Helper() int { return twice(1) }\n\nfunc twice(x int) int { return 2 * x }\n",
		"py/pkg/__init__.py":  "",
		"py/pkg/alpha.py":     "def area(w, h):\n    return w * h\n\n\nclass Shape:\n    def size(self):\n        return area(1, 2)\n",
		"py/pkg/beta.py":      "from pkg.alpha import area\n\n\ndef double(x):\n    return area(x, 2)\n",
		"web/app.js":          "import { fmt } from './fmt.js'\n\nexport function run() { return fmt(1) }\n",
		"web/fmt.js":          "export function fmt(x) { return String(x) }\n",
		"README.md":           "fixture\n",
		".gitignore":          "*.log\n",
		"py/pkg/notes.log":    "ignored\n",
		"docs/guide/intro.md": "intro\n",
	}
	return repo(t, files)
}

// repo writes files into a new git repository, one commit, and returns
// its directory.
func repo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	for rel, c := range files {
		write(t, dir, rel, c)
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

// graphDump is every live node and every live edge of a non-memory
// relation, one line each, sorted: what a fresh full ingest must equal.
func graphDump(t testing.TB, s *lmdbstore.Store) []string {
	t.Helper()
	var out []string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		rels, err := r.Relations()
		if err != nil {
			return err
		}
		name := map[lmdbstore.RelID]lmdbstore.Relation{}
		for _, rel := range rels {
			name[rel.ID] = rel
		}
		if err := r.ScanNodes(lmdbstore.At{}, func(n lmdbstore.Node) error {
			if ingest.OwnerOf(n) != "" {
				out = append(out, fmt.Sprintf("N %s %s %s", n.Key, n.Type, n.Payload))
			}
			return nil
		}); err != nil {
			return err
		}
		return r.ScanEdges(lmdbstore.At{}, func(e lmdbstore.Edge) error {
			rel := name[e.Rel]
			if rel.Role == roles.Memory {
				return nil
			}
			src, _ := r.KeyOf(e.Src)
			dst, _ := r.KeyOf(e.Dst)
			out = append(out, fmt.Sprintf("E %s -%s-> %s %g", src, rel.Name, dst, e.Weight))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// freshDump ingests dir into a new store and dumps it.
func freshDump(t testing.TB, dir string) []string {
	t.Helper()
	s := newStore(t)
	o := testOptions().withDefaults(s)
	if _, _, err := codetree.Ingest(s, dir, o.Ingest); err != nil {
		t.Fatal(err)
	}
	return graphDump(t, s)
}

func diffLines(a, b []string) string {
	var sb strings.Builder
	for _, x := range a {
		if !slices.Contains(b, x) {
			fmt.Fprintf(&sb, "- %s\n", x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			fmt.Fprintf(&sb, "+ %s\n", x)
		}
	}
	return sb.String()
}

func refresh(t testing.TB, s *lmdbstore.Store, dir string) Result {
	t.Helper()
	res, err := Refresh(s, dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return res
}
