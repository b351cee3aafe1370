package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestDecisionsFollowTheCode (SPEC §9.8): a decision on a file follows the
// file when git renames it (context of the new path shows it, in the
// refresh's own revision); when the file is deleted the decision is an
// orphan: context of its directory lists it ("orphaned"), check warns,
// orphans lists it, and nothing is dropped.
func TestDecisionsFollowTheCode(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	db := newStore(t)
	dir := gitRepo(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/geo.py":      "def area(w, h):\n    return w * h\n",
		"pkg/other.py":    "def other():\n    return 1\n",
	})
	ok(t, "--db", db, "ingest", "python", dir)
	ok(t, "--db", db, "put-node", "decision:units", "--payload", `{"text":"areas are in square metres"}`)
	ok(t, "--db", db, "put-edge", "decision:units", "decided_for", "file:pkg/geo.py")

	runGit(t, dir, "mv", "pkg/geo.py", "pkg/shapes.py")
	out := ok(t, "--db", db, "--json", "context", "--no-refresh", "pkg/geo.py")
	if !strings.Contains(out, "decision:units") {
		t.Fatalf("before the refresh the decision applies to the old path: %s", out)
	}
	r := memctl(t, "--db", db, "--json", "context", "pkg/shapes.py")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"key":"decision:units"`) {
		t.Fatalf("the decision did not follow the renamed file: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := ok(t, "--db", db, "get-out", "decision:units"); !strings.Contains(got, "file:pkg/shapes.py") || strings.Contains(got, "file:pkg/geo.py") {
		t.Errorf("the decision's edge was not carried to the new key:\n%s", got)
	}
	hist := ok(t, "--db", db, "diff-since", "0")
	if !strings.Contains(hist, "pkg/geo.py") || !strings.Contains(hist, "moves") {
		t.Errorf("history does not show the move:\n%s", hist)
	}

	if err := os.Remove(filepath.Join(dir, "pkg", "shapes.py")); err != nil {
		t.Fatal(err)
	}
	r = memctl(t, "--db", db, "--json", "context", "pkg/other.py")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"key":"decision:units"`) || !strings.Contains(r.Stdout, `"via":"orphaned"`) {
		t.Fatalf("context of a sibling does not list the orphan: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := ok(t, "--db", db, "check"); !strings.Contains(got, "orphan: decision:units decided_for file:pkg/shapes.py") {
		t.Errorf("check does not warn about the orphan:\n%s", got)
	}
	if got := ok(t, "--db", db, "orphans"); !strings.Contains(got, "decision:units") || !strings.Contains(got, "dir:pkg") {
		t.Errorf("orphans:\n%s", got)
	}
	if got := ok(t, "--db", db, "get-node", "decision:units"); !strings.Contains(got, "square metres") {
		t.Errorf("the decision was dropped:\n%s", got)
	}
}

// TestAtCommit (SPEC §9.7): reads, the engine commands and diff-since take
// a git commit of the tree the store follows; a commit never ingested
// resolves to its nearest ingested ancestor.
func TestAtCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	db := newStore(t)
	dir := gitRepo(t, map[string]string{"pkg/__init__.py": "", "pkg/geo.py": "def area(w, h):\n    return w * h\n"})
	c1 := runGit(t, dir, "rev-parse", "HEAD")
	ok(t, "--db", db, "ingest", "python", dir)
	writeFile(t, dir, "pkg/use.py", "from pkg.geo import area\n\n\ndef room():\n    return area(3, 4)\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "use")
	c2 := runGit(t, dir, "rev-parse", "HEAD")
	ok(t, "--db", db, "ingest", "python", dir)
	writeFile(t, dir, "README", "docs\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "docs") // never ingested

	if got := ok(t, "--db", db, "get-in", "--at-commit", c1, "sym:py:pkg.geo.area"); strings.Contains(got, "room") {
		t.Errorf("get-in at the first commit sees the second's caller:\n%s", got)
	}
	if got := ok(t, "--db", db, "get-in", "--at-commit", c2, "sym:py:pkg.geo.area"); !strings.Contains(got, "sym:py:pkg.use.room") {
		t.Errorf("get-in at the second commit misses its caller:\n%s", got)
	}
	if got := ok(t, "--db", db, "get-in", "--at-commit", "HEAD", "sym:py:pkg.geo.area"); !strings.Contains(got, "sym:py:pkg.use.room") {
		t.Errorf("a commit never ingested does not read as its ingested parent:\n%s", got)
	}
	r := memctl(t, "--db", db, "impact", "--at-commit", c1[:10], "sym:py:pkg.geo.area")
	if r.Code != 0 || strings.Contains(r.Stdout, "room") {
		t.Errorf("impact --at-commit c1: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := ok(t, "--db", db, "diff-since", "--commit", c1); !strings.Contains(got, "sym:py:pkg.use.room") || regexp.MustCompile(`put_node +sym:py:pkg.geo.area`).MatchString(got) {
		t.Errorf("diff-since --commit c1 does not list exactly the second ingest:\n%s", got)
	}
	wantFailure(t, memctl(t, "--db", db, "get-in", "--at-commit", "no-such-ref", "x"), ExitUsage, "--at-commit")
	wantFailure(t, memctl(t, "--db", db, "get-in", "--at-commit", c1, "--at-rev", "1", "x"), ExitUsage, "mutually exclusive")
	wantFailure(t, memctl(t, "--db", db, "diff-since", "--commit", c1, "3"), ExitUsage, "--commit")
}
