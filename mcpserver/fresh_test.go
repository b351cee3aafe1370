package mcpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAnalysisFollowsTheTree (SPEC §9.10): after the ingest tool, an edit
// is seen by impact and context without another ingest, and each answer
// says what it is as of; refresh:false answers from memory and lists the
// edited file as stale.
func TestAnalysisFollowsTheTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	tree := filepath.Join(t.TempDir(), "repo")
	writeTree(t, tree, map[string]string{"pkg/__init__.py": "", "pkg/geo.py": "def area(w, h):\n    return w * h\n"})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = tree
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	db := newStore(t)
	s := startServer(t, db)
	s.ok("ingest", map[string]any{"dir": tree, "languages": []string{"python"}}, nil)
	writeTree(t, tree, map[string]string{"pkg/use.py": "from pkg.geo import area\n\n\ndef room():\n    return area(3, 4)\n"})

	type answer struct {
		Results []struct{ Key string } `json:"affected"`
		AsOf    *struct {
			Rev       uint64
			Commit    string
			Dirty     bool
			Refreshed []string
			Stale     []string
		} `json:"as_of"`
	}
	var stale answer
	s.ok("impact", map[string]any{"key": "sym:py:pkg.geo.area", "refresh": false}, &stale)
	if stale.AsOf == nil || len(stale.AsOf.Stale) != 1 || stale.AsOf.Stale[0] != "pkg/use.py" {
		t.Fatalf("refresh:false: as_of %+v, want pkg/use.py stale", stale.AsOf)
	}
	for _, r := range stale.Results {
		if strings.Contains(r.Key, "room") {
			t.Errorf("refresh:false sees the edit: %+v", stale.Results)
		}
	}
	var fresh answer
	s.ok("impact", map[string]any{"key": "sym:py:pkg.geo.area"}, &fresh)
	found := false
	for _, r := range fresh.Results {
		found = found || r.Key == "sym:py:pkg.use.room"
	}
	if !found || fresh.AsOf == nil || len(fresh.AsOf.Refreshed) != 1 || fresh.AsOf.Commit == "" || !fresh.AsOf.Dirty {
		t.Fatalf("impact after an edit: %+v, as_of %+v", fresh.Results, fresh.AsOf)
	}
	b, _ := s.call("context", map[string]any{"targets": []string{"pkg/use.py"}})
	var pack struct {
		AsOf *struct{ Rev uint64 } `json:"as_of"`
	}
	if err := json.Unmarshal(b, &pack); err != nil || pack.AsOf == nil || pack.AsOf.Rev != fresh.AsOf.Rev {
		t.Errorf("context as_of %+v, want rev %d (nothing changed since): %s", pack.AsOf, fresh.AsOf.Rev, b)
	}
}
