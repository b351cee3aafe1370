package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/ingest"
)

// copyIngestTree copies testdata/ingest/<name> to a temp dir.
func copyIngestTree(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "testdata", "ingest", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// With --offline, a module whose requirement is not in the module cache is
// read from syntax, and the summary names the package, the reason and the
// command that fixes it (SPEC.md §9.6), in text and in --json.
func TestIngestGoOfflineNamesFallbacks(t *testing.T) {
	db := newStore(t)
	dir := copyIngestTree(t, "broken")
	r := memctl(t, "--db", db, "ingest", "go", "--offline", dir)
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	out := r.Stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ingest go "+dir+": 1 files, 1 packages (syntax-only), ") {
		t.Fatalf("ingest printed %q; want the summary line and one syntax-only line", out)
	}
	re := regexp.MustCompile(`^syntax-only: 1 package \(example\.com/broken/app\): example\.invalid/missing: .+; fix: go -C (\S+) mod download$`)
	if m := re.FindStringSubmatch(lines[1]); m == nil || m[1] != dir {
		t.Errorf("fallback line %q; want it to match %s with the fix run in %s", lines[1], re, dir)
	}
	// Packages fell back: the next ingest reads the tree again (the cache
	// may hold the dependency by now), and names them again.
	var again ingestGoJSON
	if err := json.Unmarshal([]byte(memctl(t, "--db", db, "--json", "ingest", "go", "--offline", dir).Stdout), &again); err != nil {
		t.Fatal(err)
	}
	if again.Unchanged || len(again.Fallbacks) != 1 || again.Fallbacks[0].Package != "example.com/broken/app" ||
		again.Fallbacks[0].Fix != "go -C "+dir+" mod download" {
		t.Errorf("second ingest: unchanged %v, fallbacks %+v; want read again, one fallback with its fix", again.Unchanged, again.Fallbacks)
	}
}

func TestIngestGoCommand(t *testing.T) {
	db := newStore(t)
	dir := copyIngestTree(t, "basic")
	want, err := ingest.ExtractGo(dir, ingest.GoOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var first ingestGoJSON
	if err := json.Unmarshal([]byte(ok(t, "--db", db, "--json", "ingest", "go", dir, "--run", "r1", "--task", "t1")), &first); err != nil {
		t.Fatal(err)
	}
	first.Seconds = 0
	wantFirst := ingestGoJSON{
		Dir: dir, Module: "example.com/basic", Files: 7, Packages: 3, TypedPackages: 3, Mode: "typed",
		Nodes: want.Graph.NumNodes(), Edges: want.Graph.NumEdges(), Rev: 1,
		NodesPut: want.Graph.NumNodes(), EdgesPut: want.Graph.NumEdges(), LoadErrors: []string{},
		Fallbacks: []ingest.Fallback{},
	}
	if diff := cmp.Diff(wantFirst, first); diff != "" {
		t.Errorf("first ingest (-want +got):\n%s", diff)
	}

	// Unchanged: the tree hash matches, nothing is read or written.
	out := ok(t, "--db", db, "ingest", "go", dir)
	if !regexp.MustCompile(`^ingest go \S+: 7 files unchanged since the last ingest; nothing written; \d+\.\d\ds\n$`).MatchString(out) {
		t.Errorf("unchanged ingest printed %q", out)
	}
	// --force re-reads it, and still writes nothing.
	out = ok(t, "--db", db, "ingest", "go", dir, "--force")
	if !regexp.MustCompile(`^ingest go \S+: 7 files, 3 packages \(type-checked\), \d+ nodes, \d+ edges; nothing changed; \d+\.\d\ds\n$`).MatchString(out) {
		t.Errorf("forced ingest printed %q", out)
	}
	// The symbols are there, with provenance.
	node := ok(t, "--db", db, "--json", "get-node", "sym:example.com/basic/shapes.NewSquare")
	if !strings.Contains(node, `"line_start":33`) || !strings.Contains(node, `"run_id":"r1"`) {
		t.Errorf("get-node: %s", node)
	}
	// Syntax-only changes the mode fields, as a new revision; on this tree
	// it resolves every call type-checking does (SPEC §9.4), so no edge.
	out = ok(t, "--db", db, "ingest", "go", dir, "--syntax-only", "--run", "r2")
	if !regexp.MustCompile(`\(syntax-only\), \d+ nodes, \d+ edges; rev 2: \d+ nodes written, 0 deleted, 0 edges written, 0 deleted;`).MatchString(out) {
		t.Errorf("syntax-only ingest printed %q", out)
	}
}

func TestIngestGoBadDir(t *testing.T) {
	db := newStore(t)
	r := memctl(t, "--db", db, "ingest", "go", filepath.Join(t.TempDir(), "missing"))
	if r.Code != ExitUsage || !strings.HasPrefix(r.Stderr, "memctl: ingest go ") {
		t.Errorf("exit %d, stderr %q; want exit 2 and one error line", r.Code, r.Stderr)
	}
}

func TestIngestGitCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	db := newStore(t)
	dir := copyIngestTree(t, "basic")
	r := memctl(t, "--db", db, "ingest", "git", dir)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "not a git work tree") {
		t.Errorf("outside a repository: exit %d, stderr %q", r.Code, r.Stderr)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	out := ok(t, "--db", db, "ingest", "git", dir)
	// 8 files: go.mod, gen.go and the 6 under shapes/ and cmd/ (testdata,
	// .hidden and _tools are not walked): 28 pairs.
	if !regexp.MustCompile(`^ingest git \S+: 1 commits \(0 above --max-commit-files\), 8 files with history, 28 co_changed edges; rev 1: 8 nodes written, 0 deleted, 28 edges written, 0 deleted; `).MatchString(out) {
		t.Errorf("ingest git printed %q", out)
	}
	// The commit changed 11 files (the skipped directories count too).
	out = ok(t, "--db", db, "ingest", "git", dir, "--max-commit-files", "10")
	if !strings.Contains(out, "1 commits (1 above --max-commit-files), 8 files with history, 0 co_changed edges; rev 2: 0 nodes written, 0 deleted, 0 edges written, 28 deleted") {
		t.Errorf("with a limit of 10: %q", out)
	}
}

// A clone missing the blobs rename detection reads (a partial clone whose
// remote is gone) ingests with a warning naming the commit, not exit 5.
func TestIngestGitPartialClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	src := t.TempDir()
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("a line that moves with its file\n", 30)
	git(src, "init", "-q")
	write("a.txt", long)
	write("b.txt", "b\n")
	git(src, "add", ".")
	git(src, "commit", "-q", "-m", "one")
	git(src, "mv", "a.txt", "c.txt")
	write("c.txt", long+"edited\n")
	write("b.txt", "b2\n")
	git(src, "commit", "-q", "-a", "-m", "two")
	renamed := git(src, "rev-parse", "HEAD")
	git(src, "config", "uploadpack.allowFilter", "true")
	clone := filepath.Join(t.TempDir(), "clone")
	git(src, "clone", "-q", "--filter=blob:none", "file://"+src, clone)
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}

	db := newStore(t)
	r := memctl(t, "--db", db, "--json", "ingest", "git", clone)
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	warn := "memctl: warning: ingest git: 1 commits read without rename detection (git could not read the files they delete and add: a partial clone, or objects missing); their renamed files count as deleted and added: " + renamed[:12] + "\n"
	if r.Stderr != warn {
		t.Errorf("stderr %q, want %q", r.Stderr, warn)
	}
	var got ingestGitJSON
	if err := jsonUnmarshal(r.Stdout, &got); err != nil {
		t.Fatal(err)
	}
	// Two commits; files b.txt and c.txt; one pair (both changed by "two").
	if got.Commits != 2 || got.Nodes != 2 || got.Edges != 1 || got.NoRenameCommits != 1 {
		t.Errorf("ingest git --json: %s", r.Stdout)
	}
}

func TestIngestProgressBar(t *testing.T) {
	db := newStore(t)
	dir := copyIngestTree(t, "basic")
	var stdout, stderr bytes.Buffer
	code := Run([]string{"memctl", "--db", db, "ingest", "go", dir}, Env{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" }, StderrIsTerminal: true,
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "reading...") || !strings.HasSuffix(s, "\r\033[K") {
		t.Errorf("progress on a terminal: %q", s)
	}
}
