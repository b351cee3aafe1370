package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// copyTree copies a testdata directory (relative to the repository root)
// into a fresh temp directory and adds files.
func copyTree(t *testing.T, rel string, extra map[string]string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", filepath.FromSlash(rel)))); err != nil {
		t.Fatal(err)
	}
	for name, content := range extra {
		p := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// A mixed tree: Go (type-checked) and Python in one revision, then
// incremental per language.
func TestIngestCodeCommand(t *testing.T) {
	db := newStore(t)
	dir := copyTree(t, "testdata/ingest/basic", nil)
	if err := os.CopyFS(filepath.Join(dir, "py"), os.DirFS(filepath.Join("..", "testdata", "treesitter", "python"))); err != nil {
		t.Fatal(err)
	}
	var first ingestCodeJSON
	if err := json.Unmarshal([]byte(ok(t, "--db", db, "--json", "ingest", "code", dir, "--run", "r1")), &first); err != nil {
		t.Fatal(err)
	}
	if first.Rev != 1 || len(first.Languages) != 2 || first.Languages[0].Lang != "go" || first.Languages[0].Mode != "type-checked" ||
		first.Languages[1].Lang != "python" || first.Languages[1].Files != 4 || first.Languages[1].Unresolved != 3 {
		t.Errorf("first ingest code: %+v", first)
	}
	// Both languages' nodes are there, under one directory tree.
	for _, key := range []string{"sym:example.com/basic/shapes.NewSquare", "sym:py:pkg.core.Engine.run", "dir:py/pkg", "dir:."} {
		ok(t, "--db", db, "get-node", key)
	}
	out := ok(t, "--db", db, "ingest", "code", dir)
	if !regexp.MustCompile(`^ingest code \S+: go: 7 files unchanged; python: 4 files unchanged; nothing changed; \d+\.\d\ds\n$`).MatchString(out) {
		t.Errorf("unchanged ingest code printed %q", out)
	}
	// ingest python alone re-reads (its tree hash differs from none) and
	// writes nothing; Go's nodes stay.
	out = ok(t, "--db", db, "ingest", "python", dir)
	if !regexp.MustCompile(`^ingest python \S+: 4 files unchanged since the last ingest; nothing written; \d+\.\d\ds\n$`).MatchString(out) {
		t.Errorf("ingest python printed %q", out)
	}
	// A Python edit: one revision (util.py, extra, ingest:python; defines,
	// contains, calls helper), Go unchanged.
	util := filepath.Join(dir, "py", "pkg", "util.py")
	b, _ := os.ReadFile(util)
	if err := os.WriteFile(util, append(b, []byte("\n\ndef extra():\n    return helper(2)\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	out = ok(t, "--db", db, "ingest", "code", dir)
	if !regexp.MustCompile(`^ingest code \S+: go: 7 files unchanged; python: 4 files, 13 symbols, \d+ edges, 3 unresolved calls; \d+ nodes, \d+ edges; rev 2: 3 nodes written, 0 deleted, 3 edges written, 0 deleted; `).MatchString(out) {
		t.Errorf("ingest code after an edit printed %q", out)
	}
	ok(t, "--db", db, "get-node", "sym:example.com/basic/shapes.NewSquare")
	node := ok(t, "--db", db, "--json", "get-node", "sym:py:pkg.util.extra")
	if !strings.Contains(node, `"path":"py/pkg/util.py"`) || !strings.Contains(node, `"line_start":14`) {
		t.Errorf("get-node sym:py:pkg.util.extra: %s", node)
	}
}

func TestIngestLangBadDir(t *testing.T) {
	db := newStore(t)
	for _, verb := range []string{"code", "python", "typescript", "javascript", "rust"} {
		r := memctl(t, "--db", db, "ingest", verb, filepath.Join(t.TempDir(), "missing"))
		if r.Code != ExitUsage || !strings.HasPrefix(r.Stderr, "memctl: ingest "+verb+" ") || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("ingest %s: exit %d, stderr %q; want exit 2 and one error line", verb, r.Code, r.Stderr)
		}
	}
}
