package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a small Python repository with one commit.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	for rel, c := range files {
		writeFile(t, dir, rel, c)
	}
	runGit(t, dir, "init", "-q", "-b", "main")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runGit(t *testing.T, dir string, args ...string) string {
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

// TestAnswersFollowTheTree (SPEC §9.10): after `ingest code`, a function
// and a call written later are seen by impact and context without another
// ingest; --no-refresh answers from memory and names the stale file; the
// engine commands read the store when --snapshot is not given, and an
// older snapshot file gets a warning naming the revisions it lacks.
func TestAnswersFollowTheTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	db := newStore(t)
	dir := gitRepo(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/geo.py":      "def area(w, h):\n    return w * h\n",
	})
	ok(t, "--db", db, "ingest", "python", dir)
	snap := filepath.Join(t.TempDir(), "old.snap")
	ok(t, "--db", db, "export", "--out", snap)

	writeFile(t, dir, "pkg/use.py", "from pkg.geo import area\n\n\ndef room():\n    return area(3, 4)\n")
	// Memory as it is: the new caller is not seen, and the answer says so.
	r := memctl(t, "--db", db, "impact", "--no-refresh", "sym:py:pkg.geo.area")
	if r.Code != 0 || strings.Contains(r.Stdout, "room") || !strings.Contains(r.Stderr, "STALE") || !strings.Contains(r.Stderr, "pkg/use.py") {
		t.Fatalf("impact --no-refresh: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The next answer refreshes first.
	r = memctl(t, "--db", db, "impact", "sym:py:pkg.geo.area")
	if r.Code != 0 || !strings.Contains(r.Stdout, "sym:py:pkg.use.room") || !strings.Contains(r.Stderr, "refreshed 1 file") {
		t.Fatalf("impact after an edit: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "commit "+runGit(t, dir, "rev-parse", "HEAD")[:12]) || !strings.Contains(r.Stderr, "dirty") {
		t.Errorf("as-of line does not name the commit and the dirty tree: %q", r.Stderr)
	}
	// Refreshed once: the next answer writes nothing.
	before := fingerprint(t, db)
	memctl(t, "--db", db, "--json", "context", "pkg/use.py")
	if fingerprint(t, db) != before {
		t.Error("an unchanged tree was written again")
	}
	out := ok(t, "--db", db, "--json", "context", "pkg/geo.py")
	if !strings.Contains(out, `"as_of":{"rev":`) || !strings.Contains(out, `"dirty":true`) {
		t.Errorf("context --json has no as_of: %s", out)
	}
	// The old snapshot answers with a warning.
	r = memctl(t, "--db", db, "impact", "--snapshot", snap, "sym:py:pkg.geo.area")
	if r.Code != 0 || strings.Contains(r.Stdout, "room") || !strings.Contains(r.Stderr, "warning") || !strings.Contains(r.Stderr, "not in this answer") {
		t.Errorf("impact on an older snapshot: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
