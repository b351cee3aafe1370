package ingest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/lmdbstore"
)

// gitRepo is a throwaway repository built with the git binary.
type gitRepo struct {
	t   *testing.T
	dir string
	now int64 // commit time of the next commit (unix seconds)
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := &gitRepo{t: t, dir: t.TempDir(), now: 1_700_000_000}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	date := fmt.Sprintf("@%d +0000", r.now)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (content "" deletes) and commits them.
func (r *gitRepo) commit(files map[string]string) string {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if content == "" {
			r.git("rm", "-q", name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
		r.git("add", name)
	}
	r.git("commit", "-q", "-m", fmt.Sprintf("commit at %d", r.now))
	r.now += 3600
	return r.git("rev-parse", "HEAD")
}

func gitJSON(changes int, first, last int64, commit string) json.RawMessage {
	return mustJSON(GitPayload{
		Changes:     changes,
		FirstChange: unixRFC3339(first),
		LastChange:  unixRFC3339(last),
		LastCommit:  commit,
	})
}

func TestExtractGit(t *testing.T) {
	r := newGitRepo(t)
	t0 := r.now
	r.commit(map[string]string{"go.mod": "module example.com/g\n", "a.go": "package g\n", "b.go": "package g\n"})
	r.commit(map[string]string{"a.go": "package g // 2\n", "c.go": "package g\n"})
	r.commit(map[string]string{"a.go": "package g // 3\n", "b.go": "package g // 3\n", "testdata/x.txt": "x"})
	// Four files: above the limit of 3, so no co_changed edges.
	c4 := r.commit(map[string]string{"a.go": "package g // 4\n", "b.go": "package g // 4\n", "d.txt": "d", "e.txt": "e"})
	r.commit(map[string]string{"c.go": ""}) // c.go is gone from the tree

	res, err := ExtractGit(r.dir, GitOptions{MaxCommitFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commits != 5 || res.SkippedCommits != 1 || res.Files != 5 {
		t.Errorf("commits %d, skipped %d, files %d; want 5, 1, 5", res.Commits, res.SkippedCommits, res.Files)
	}
	hour := int64(3600)
	want := NewGraph()
	file := func(name string, git json.RawMessage) {
		want.AddNode(Node{Key: FileKey(name), Type: TypeFile, Payload: mustJSON(FilePayload{Path: name, Git: git})})
	}
	file("a.go", gitJSON(4, t0, t0+3*hour, c4))
	file("b.go", gitJSON(3, t0, t0+3*hour, c4))
	file("d.txt", gitJSON(1, t0+3*hour, t0+3*hour, c4))
	file("e.txt", gitJSON(1, t0+3*hour, t0+3*hour, c4))
	file("go.mod", gitJSON(1, t0, t0, r.git("rev-list", "--max-parents=0", "HEAD")))
	want.AddEdge(Edge{Src: "file:a.go", Rel: RelCoChanged, Dst: "file:b.go", Weight: coChangeWeight(2)})
	want.AddEdge(Edge{Src: "file:a.go", Rel: RelCoChanged, Dst: "file:go.mod", Weight: coChangeWeight(1)})
	want.AddEdge(Edge{Src: "file:b.go", Rel: RelCoChanged, Dst: "file:go.mod", Weight: coChangeWeight(1)})
	if diff := cmp.Diff(renderGraph(want), renderGraph(res.Graph)); diff != "" {
		t.Errorf("git graph (-want +got):\n%s", diff)
	}
}

// ingest go and ingest git share file nodes: each keeps the other's
// fields, and re-running either on an unchanged tree writes nothing.
func TestWriteGitAndGoTogether(t *testing.T) {
	r := newGitRepo(t)
	r.commit(map[string]string{"go.mod": "module example.com/g\n\ngo 1.22\n", "a.go": "package g\n\nfunc A() { B() }\n", "b.go": "package g\n\nfunc B() {}\n"})
	r.commit(map[string]string{"a.go": "package g\n\n// A calls B.\nfunc A() { B() }\n", "b.go": "package g\n\n// B does nothing.\nfunc B() {}\n", "README": "hi\n"})
	s := newStore(t)

	gitRes, err := ExtractGit(r.dir, GitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g1, err := WriteGit(s, gitRes, lmdbstore.WriteMeta{RunID: "git1"}, nil)
	if err != nil || g1.Commit.Rev == 0 {
		t.Fatalf("first git ingest: %+v, %v", g1, err)
	}
	go1 := ingestGo(t, s, r.dir, lmdbstore.WriteMeta{RunID: "go1"})
	if go1.Commit.Rev == 0 {
		t.Fatalf("first go ingest wrote nothing")
	}
	if again := ingestGo(t, s, r.dir, lmdbstore.WriteMeta{}); again.Commit.Rev != 0 {
		t.Errorf("unchanged go ingest wrote %+v", again)
	}
	if again, err := WriteGit(s, gitRes, lmdbstore.WriteMeta{}, nil); err != nil || again.Commit.Rev != 0 {
		t.Errorf("unchanged git ingest wrote %+v, %v", again, err)
	}

	var a, readme FilePayload
	err = s.View(func(rt *lmdbstore.ReadTxn) error {
		for key, p := range map[string]*FilePayload{"file:a.go": &a, "file:README": &readme} {
			n, err := rt.GetNode(key, lmdbstore.At{})
			if err != nil {
				return err
			}
			if err := json.Unmarshal(n.Payload, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash == "" || len(a.Git) == 0 || a.Package != "example.com/g" {
		t.Errorf("file:a.go lost fields: %+v", a)
	}
	if readme.Hash != "" || len(readme.Git) == 0 {
		t.Errorf("file:README: %+v", readme)
	}
	edges := storeGraph(t, s).Edges()
	var co []string
	for _, e := range edges {
		if e.Rel == RelCoChanged {
			co = append(co, fmt.Sprintf("%s %s %g", e.Src, e.Dst, math.Round(float64(e.Weight/(1-e.Weight)))))
		}
	}
	wantCo := []string{"file:README file:a.go 1", "file:README file:b.go 1", "file:a.go file:b.go 2", "file:a.go file:go.mod 1", "file:b.go file:go.mod 1"}
	if diff := cmp.Diff(wantCo, co); diff != "" {
		t.Errorf("co_changed edges (-want +got):\n%s", diff)
	}
}

// A file removed from the tree loses its node (ingest go) and its
// co_changed edges (ingest git), even those whose source it was.
func TestGitForgetsRemovedFiles(t *testing.T) {
	r := newGitRepo(t)
	r.commit(map[string]string{"go.mod": "module example.com/g\n\ngo 1.22\n", "a.go": "package g\n", "b.go": "package g\n"})
	r.commit(map[string]string{"a.go": "package g // 2\n", "b.go": "package g // 2\n"})
	s := newStore(t)
	ingestAll := func() {
		t.Helper()
		ingestGo(t, s, r.dir, lmdbstore.WriteMeta{})
		res, err := ExtractGit(r.dir, GitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := WriteGit(s, res, lmdbstore.WriteMeta{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ingestAll()
	r.commit(map[string]string{"a.go": ""})
	ingestAll()
	var got []string
	for _, e := range storeGraph(t, s).Edges() {
		if e.Rel == RelCoChanged {
			got = append(got, e.Src+" "+e.Dst)
		}
	}
	if diff := cmp.Diff([]string{"file:b.go file:go.mod"}, got); diff != "" {
		t.Errorf("co_changed edges after removing a.go (-want +got):\n%s", diff)
	}
	if g := storeGraph(t, s); g.HasNode("file:a.go") {
		t.Errorf("file:a.go still live")
	}
}

// Two removed files that changed together: the co_changed edge between
// them goes too, although neither end is a node any more (found by
// eval's incremental-versus-fresh test).
func TestGitForgetsEdgesBetweenRemovedFiles(t *testing.T) {
	r := newGitRepo(t)
	r.commit(map[string]string{"go.mod": "module example.com/g\n\ngo 1.22\n", "a.go": "package g\n", "b.go": "package g\n", "c.go": "package g\n"})
	r.commit(map[string]string{"a.go": "package g // 2\n", "b.go": "package g // 2\n"})
	s := newStore(t)
	ingestAll := func() {
		t.Helper()
		ingestGo(t, s, r.dir, lmdbstore.WriteMeta{})
		res, err := ExtractGit(r.dir, GitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := WriteGit(s, res, lmdbstore.WriteMeta{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ingestAll()
	r.commit(map[string]string{"a.go": "", "b.go": ""})
	ingestAll()
	var got []string
	for _, e := range storeGraph(t, s).Edges() {
		if e.Rel == RelCoChanged {
			got = append(got, e.Src+" "+e.Dst)
		}
	}
	if diff := cmp.Diff([]string{"file:c.go file:go.mod"}, got); diff != "" {
		t.Errorf("co_changed edges after removing a.go and b.go (-want +got):\n%s", diff)
	}
}

// historyRepo builds a repository whose history holds what rename
// detection looks at: an edited rename, an exact rename, a deletion, a
// subdirectory, and a file with a space in its name. detect names the
// commits that delete one file and add another of different content, whose
// rename detection reads both (newest first).
func historyRepo(t *testing.T) (r *gitRepo, detect []string) {
	r = newGitRepo(t)
	long := strings.Repeat("line of a file that moves\n", 40)
	r.commit(map[string]string{"a.txt": long, "b.txt": "b\n", "sub/x.go": "package sub\n", "sub/old name.txt": "exact\n"})
	r.git("mv", "a.txt", "c.txt")
	r.git("mv", "sub/old name.txt", "sub/new name.txt")
	renamed := r.commit(map[string]string{"c.txt": long + "one more line\n", "b.txt": "b2\n"})
	deleted := r.commit(map[string]string{"b.txt": "", "sub/x.go": "package sub // 3\n", "d.txt": "d\n"})
	return r, []string{deleted, renamed}
}

// readHistory reads what git log reads: the same commits, times and
// changed files, compared with git log's own output of the same history.
func TestReadHistoryMatchesGitLog(t *testing.T) {
	r, _ := historyRepo(t)
	for _, dir := range []string{r.dir, filepath.Join(r.dir, "sub")} {
		cmd := exec.Command("git", "-c", "core.quotePath=false", "log", "-M", "--no-merges", "--name-only", "-z",
			"--relative", "--format=%x1e%H %ct", "--", ".")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, rec := range strings.Split(string(out), "\x1e")[1:] {
			c, ok, err := parseCommit([]byte("\x1e" + rec))
			if err != nil || !ok {
				t.Fatalf("git log record %q: %v", rec, err)
			}
			want = append(want, fmt.Sprint(c))
		}
		var got []string
		noRenames, err := readHistory(dir, func(c gitCommit) { got = append(got, fmt.Sprint(c)) })
		if err != nil || len(noRenames) != 0 {
			t.Fatalf("readHistory(%s): %v, no renames %v", dir, err, noRenames)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: history (-git log +readHistory):\n%s", dir, diff)
		}
	}
}

// A partial clone (blobs fetched on demand) whose remote is gone cannot
// read the old content rename detection compares: the commits that delete
// and add files are read without it and named, the rest as usual. The
// graph is the full repository's: the deleted paths are not in the tree.
func TestExtractGitPartialClone(t *testing.T) {
	r, detect := historyRepo(t)
	full, err := ExtractGit(r.dir, GitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.git("config", "uploadpack.allowFilter", "true")
	clone := filepath.Join(t.TempDir(), "clone")
	r.git("clone", "-q", "--filter=blob:none", "file://"+r.dir, clone)
	if err := os.Rename(r.dir, r.dir+".gone"); err != nil { // no remote to fetch from
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Rename(r.dir+".gone", r.dir) })
	// The clone really lacks blobs: git log's rename detection fails.
	cmd := exec.Command("git", "log", "-M", "--name-only", "--format=%H")
	cmd.Dir = clone
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("git log in the partial clone succeeded:\n%s", out)
	}

	part, err := ExtractGit(clone, GitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(detect, part.NoRenameCommits); diff != "" {
		t.Errorf("commits read without renames (-want +got):\n%s", diff)
	}
	if part.Commits != full.Commits || part.Files != full.Files {
		t.Errorf("partial clone: %d commits, %d files; full: %d, %d", part.Commits, part.Files, full.Commits, full.Files)
	}
	if diff := cmp.Diff(renderGraph(full.Graph), renderGraph(part.Graph)); diff != "" {
		t.Errorf("partial clone's graph (-full +partial):\n%s", diff)
	}
}
