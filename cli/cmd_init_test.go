package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInit(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	r := memctl(t, "--db", db, "init")
	if r.Code != 0 || r.Stdout != "initialized empty store at "+db+"\n" {
		t.Fatalf("init: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	before := fingerprint(t, db)
	wantFailure(t, memctl(t, "--db", db, "init"), ExitUsage, db)
	if fingerprint(t, db) != before {
		t.Errorf("second init changed the store")
	}
	if got := ok(t, "--db", db, "--json", "stats"); jsonLines(t, got)[0]["revision"] == nil {
		t.Errorf("stats after init: %s", got)
	}
}

func TestInitJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	diffJSON(t, ok(t, "--db", db, "--json", "init"), []map[string]any{{"path": db}})
}

func TestMissingStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "none")
	for _, args := range [][]string{
		{"get-node", "a:1"}, {"put-node", "a:1"}, {"put-edge", "a:1", "calls", "a:2"}, {"stats"},
		{"check"}, {"compact"}, {"rel", "list"}, {"diff-since", "0"}, {"list-kv", "s", "n"},
	} {
		r := memctl(t, append([]string{"--db", db}, args...)...)
		wantFailure(t, r, ExitUsage, db, "memctl --db "+db+" init")
	}
	// Nothing was created by the failed commands.
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a failed command created %s (stat: %v)", db, err)
	}
}

func TestDBFromEnvironment(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	environ := map[string]string{"MEMCTL_DB": db}
	if r := runEnv(t, "", environ, "init"); r.Code != 0 {
		t.Fatalf("init with MEMCTL_DB: %s", r.Stderr)
	}
	if r := runEnv(t, "", environ, "put-node", "a:1"); r.Code != 0 {
		t.Fatalf("put-node with MEMCTL_DB: %s", r.Stderr)
	}
	ok(t, "--db", db, "get-node", "a:1")
	// --db wins over the environment.
	other := filepath.Join(t.TempDir(), "other")
	wantFailure(t, runEnv(t, "", environ, "--db", other, "get-node", "a:1"), ExitUsage, other)
}

func TestTelemetryFile(t *testing.T) {
	db := newStore(t)
	tele := filepath.Join(t.TempDir(), "events.jsonl")
	ok(t, "--db", db, "--telemetry", tele, "put-node", "a:1")
	r := runEnv(t, "", map[string]string{"MEMCTL_TELEMETRY": tele}, "--db", db, "get-node", "a:1")
	if r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	data, err := os.ReadFile(tele)
	if err != nil {
		t.Fatal(err)
	}
	events := jsonLinesRaw(t, string(data))
	kinds := map[string]bool{}
	for _, e := range events {
		kind, _ := e["event"].(string)
		kinds[kind] = true
	}
	if !kinds["write"] || !kinds["read"] {
		t.Errorf("telemetry lacks a write and a read event:\n%s", data)
	}
}

// Read telemetry carries the session a harness sets through the environment,
// and writes take the same variables when their flags are absent.
func TestTelemetrySessionFromEnvironment(t *testing.T) {
	db := newStore(t)
	tele := filepath.Join(t.TempDir(), "events.jsonl")
	environ := map[string]string{"MEMCTL_TELEMETRY": tele, "MEMCTL_RUN": "run-7", "MEMCTL_TASK": "task-3"}
	if r := runEnv(t, "", environ, "--db", db, "put-node", "a:1"); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	if r := runEnv(t, "", environ, "--db", db, "get-node", "a:1"); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	if r := runEnv(t, "", environ, "--db", db, "put-node", "a:2", "--run", "flag-run"); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	data, err := os.ReadFile(tele)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct{ Event, Memory, Run, Task string }
	var got []ev
	for _, e := range jsonLinesRaw(t, string(data)) {
		got = append(got, ev{e["event"].(string), e["memory_id"].(string), e["run_id"].(string), e["task_id"].(string)})
	}
	want := []ev{
		{"write", "n:a:1", "run-7", "task-3"},
		{"read", "n:a:1", "run-7", "task-3"},
		{"write", "n:a:2", "flag-run", "task-3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("telemetry (-want +got):\n%s", diff)
	}
}

// TestInitOnRegularFile: `--db FILE init` is bad usage (exit 2) like every
// other command given a file, and leaves the file as it was.
func TestInitOnRegularFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, []byte("not a store"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, memctl(t, "--db", file, "init"), ExitUsage, file, "not a directory")
	if b, err := os.ReadFile(file); err != nil || string(b) != "not a store" {
		t.Errorf("file after init: %q, %v", b, err)
	}
}

// gitInit makes dir a git work tree (git init when git is installed, else
// the .git layout git would write: excludeFromGit reads only files).
func gitInit(t *testing.T, dir string) {
	t.Helper()
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		return
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Issue #27.4: init inside a git work tree adds the store to
// .git/info/exclude, once; outside a work tree it touches no git file.
func TestInitExcludesFromGit(t *testing.T) {
	repo := t.TempDir()
	gitInit(t, repo)
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	before, _ := os.ReadFile(exclude)

	db := filepath.Join(repo, ".memctl")
	r := memctl(t, "--db", db, "init")
	if r.Code != 0 || r.Stdout != "initialized empty store at "+db+"\nadded /.memctl/ to "+exclude+"\n" || r.Stderr != "" {
		t.Fatalf("init: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	after, err := os.ReadFile(exclude)
	if err != nil || string(after) != string(before)+"/.memctl/\n" && string(after) != string(before)+"\n/.memctl/\n" {
		t.Fatalf("exclude after init: %q (before %q, err %v)", after, before, err)
	}
	if git, err := exec.LookPath("git"); err == nil {
		// git agrees: the store is ignored.
		out, err := exec.Command(git, "-C", repo, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
		if err != nil || strings.Contains(string(out), ".memctl") {
			t.Errorf("git status shows the store: %v\n%s", err, out)
		}
	}

	// Once: a second store at the same path (after removing the first)
	// adds nothing; a nested store gets its own anchored line.
	if err := os.RemoveAll(db); err != nil {
		t.Fatal(err)
	}
	if got := ok(t, "--db", db, "init"); got != "initialized empty store at "+db+"\n" {
		t.Errorf("second init printed %q", got)
	}
	sub := filepath.Join(repo, "tools", "mem")
	diffJSON(t, ok(t, "--db", sub, "--json", "init"), []map[string]any{{"path": sub, "git_exclude": "/tools/mem/"}})
	if got, _ := os.ReadFile(exclude); strings.Count(string(got), "/.memctl/") != 1 || !strings.HasSuffix(string(got), "/tools/mem/\n") {
		t.Errorf("exclude: %q", got)
	}

	// Outside any work tree: nothing but the store.
	plain := filepath.Join(t.TempDir(), "db")
	if got := ok(t, "--db", plain, "init"); got != "initialized empty store at "+plain+"\n" {
		t.Errorf("init outside git printed %q", got)
	}
}
