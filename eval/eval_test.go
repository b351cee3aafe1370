package eval

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testRepo is a throw-away git repository with deterministic commit times.
type testRepo struct {
	t     *testing.T
	dir   string
	clock int
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := &testRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("go.mod", "module example.com/m\n\ngo 1.22\n")
	return r
}

func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	date := fmt.Sprintf("2024-01-01T00:%02d:00Z", r.clock)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *testRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// goFile is a small Go file of package m whose content depends on rev, so
// every write changes it.
func goFile(name string, rev int, body string) string {
	return fmt.Sprintf("package m\n\n// %s revision %d\n%s\n", name, rev, body)
}

// commit writes files (content "" deletes) and commits them.
func (r *testRepo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	for name, content := range files {
		if content == "" {
			r.git("rm", "-q", name)
			continue
		}
		r.write(name, content)
		r.git("add", name)
	}
	r.clock++
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func TestCommitsQualify(t *testing.T) {
	r := newTestRepo(t)
	r.commit("c1 adds", map[string]string{"a.go": goFile("a", 1, ""), "a_test.go": goFile("at", 1, ""), "b.go": goFile("b", 1, "")})
	c2 := r.commit("c2 two files", map[string]string{"a.go": goFile("a", 2, ""), "a_test.go": goFile("at", 2, "")})
	r.commit("c3 one file", map[string]string{"a.go": goFile("a", 3, "")})
	r.commit("c4 adds c.go", map[string]string{"a.go": goFile("a", 4, ""), "b.go": goFile("b", 4, ""), "c.go": goFile("c", 4, "")})
	c5 := r.commit("c5 two go files and a readme", map[string]string{"b.go": goFile("b", 5, ""), "c.go": goFile("c", 5, ""), "README": "x"})
	r.git("checkout", "-q", "-b", "side")
	c6 := r.commit("c6 on a branch", map[string]string{"a.go": goFile("a", 6, ""), "c.go": goFile("c", 6, "")})
	r.git("checkout", "-q", "main")
	r.commit("c7 on main", map[string]string{"b.go": goFile("b", 7, ""), "README": "y"})
	r.clock++
	r.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
	r.commit("c8 testdata does not count", map[string]string{"a.go": goFile("a", 8, ""), "testdata/x.go": "package x\n"})
	c9 := r.commit("c9 deletes b.go", map[string]string{"a.go": goFile("a", 9, ""), "b.go": ""})
	r.commit("c10 eleven files", func() map[string]string {
		m := map[string]string{}
		for i := range 11 {
			m[fmt.Sprintf("p/f%d.go", i)] = goFile("f", i, "")
		}
		return m
	}())

	repo, err := OpenRepo(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	hashes := func(cs []Commit) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Hash)
		}
		return out
	}
	all, err := repo.Commits(10, 0, DefaultCommitRule)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{c2, c5, c6, c9}, hashes(all)); d != "" {
		t.Errorf("qualifying commits, oldest first (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b.go", "c.go"}, all[1].Files); d != "" {
		t.Errorf("c5 files (-want +got):\n%s", d)
	}
	if all[1].Parent != r.git("rev-parse", c5+"^") {
		t.Errorf("c5 parent %s", all[1].Parent)
	}
	two, err := repo.Commits(2, 1, DefaultCommitRule)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{c5, c6}, hashes(two)); d != "" {
		t.Errorf("--commits 2 --skip 1 (-want +got):\n%s", d)
	}
	none, err := repo.Commits(5, 4, DefaultCommitRule)
	if err != nil || len(none) != 0 {
		t.Errorf("skip everything: %v, %v", none, err)
	}
}

func TestRecallHit(t *testing.T) {
	for _, tc := range []struct {
		got, want []string
		recall    float64
		hit       float64
	}{
		{[]string{"a", "b", "c", "d"}, []string{"d"}, 1, 0},
		{[]string{"a", "b", "c", "d"}, []string{"c", "x"}, 0.5, 1},
		{nil, []string{"c"}, 0, 0},
		{[]string{"x", "y"}, []string{"x", "y", "z", "w"}, 0.5, 1},
	} {
		r, h := recallHit(tc.got, tc.want, 3)
		if r != tc.recall || h != tc.hit {
			t.Errorf("recallHit(%v, %v) = %v, %v; want %v, %v", tc.got, tc.want, r, h, tc.recall, tc.hit)
		}
	}
	got := firstSourceFiles([]string{"q.go", "README", "a.py", "a.py", "dist/x.min.js", "b.go", "c.ts"}, "q.go", 2)
	if d := cmp.Diff([]string{"a.py", "b.go"}, got); d != "" {
		t.Errorf("firstSourceFiles (-want +got):\n%s", d)
	}
}

// history builds a repository where x.go and y.go change together three
// times, x.go and z.go once, then a commit changes x.go and y.go again.
func history(t *testing.T) (*testRepo, []string) {
	r := newTestRepo(t)
	body := map[string]string{
		"x.go": "func X() int { return Y() }",
		"y.go": "func Y() int { return 1 }",
		"z.go": "func Z() int { return X() }",
		"w.go": "type W struct{}",
	}
	files := func(rev int, names ...string) map[string]string {
		m := map[string]string{}
		for _, n := range names {
			m[n] = goFile(n, rev, body[n])
		}
		return m
	}
	var cs []string
	cs = append(cs, r.commit("init", files(0, "x.go", "y.go", "z.go", "w.go")))
	cs = append(cs, r.commit("xy 1", files(1, "x.go", "y.go")))
	cs = append(cs, r.commit("xz", files(2, "x.go", "z.go")))
	cs = append(cs, r.commit("xy 2", files(3, "x.go", "y.go")))
	cs = append(cs, r.commit("w alone", files(4, "w.go")))
	cs = append(cs, r.commit("xy 3", files(5, "x.go", "y.go")))
	return r, cs
}

// TestMemoryIsAtTheParent: the memory a commit is scored against knows the
// history up to its parent and nothing after.
func TestMemoryIsAtTheParent(t *testing.T) {
	r, cs := history(t)
	repo, err := OpenRepo(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBuilder(repo, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.close(); err != nil {
			t.Error(err)
		}
	}()
	m, err := b.at(cs[4]) // the parent of "xy 3"
	if err != nil {
		t.Fatal(err)
	}
	// x.go: init, xy 1, xz, xy 2 = 4 changes; y.go 3; w.go 2.
	for f, want := range map[string]int{"x.go": 4, "y.go": 3, "z.go": 2, "w.go": 2} {
		if got := m.History(f).Changes; got != want {
			t.Errorf("%s: %d changes at the parent, want %d", f, got, want)
		}
	}
	if got := m.History("w.go").LastCommit; got != cs[4] {
		t.Errorf("w.go last commit %s, want %s", got, cs[4])
	}
	rank, err := CoChange().Open(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rank("x.go")
	if err != nil {
		t.Fatal(err)
	}
	// x–y: init, xy 1, xy 2 (3); x–z: init, xz (2); x–w: init (1).
	if d := cmp.Diff([]string{"y.go", "z.go", "w.go"}, got); d != "" {
		t.Errorf("co-change ranking of x.go at the parent (-want +got):\n%s", d)
	}
}

// TestIncrementalMemoryMatchesFresh: moving one store from commit to commit
// gives the same graph as a fresh store at each commit.
func TestIncrementalMemoryMatchesFresh(t *testing.T) {
	r, cs := history(t)
	// A rename and a deletion on the way, so that ingest must delete too.
	r.git("mv", "z.go", "zz.go")
	cs = append(cs, r.commit("rename z", map[string]string{"w.go": ""}))
	repo, err := OpenRepo(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	moving, err := newBuilder(repo, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer moving.close()
	for _, c := range []string{cs[1], cs[3], cs[6], cs[2]} {
		m, err := moving.at(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Graph.File().LogicalHash()
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := newBuilder(repo, t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		fm, err := fresh.at(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fm.Graph.File().LogicalHash()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("at %s: incremental memory hash %x, fresh %x\n%s", c[:8], got, want, cmp.Diff(dump(t, fm), dump(t, m)))
		}
		if m.Graph.NumNodes() < 4 {
			t.Errorf("at %s: only %d nodes", c[:8], m.Graph.NumNodes())
		}
		if err := fresh.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// dump lists a memory's nodes (key, type, payload) and edges, one line each.
func dump(t *testing.T, m *Memory) []string {
	var out []string
	g := m.Graph
	for n := range g.NumNodes() {
		node, err := g.Node(uint32(n))
		if err != nil {
			t.Fatal(err)
		}
		p, _ := g.Payload(uint32(n))
		out = append(out, fmt.Sprintf("%s %s %s", node.Key, node.Type, p))
		ts, rs, ws, _ := g.Out(uint32(n))
		for i, d := range ts {
			k, _ := g.Key(d)
			out = append(out, fmt.Sprintf("  %s -%d-> %s %v", node.Key, rs[i], k, ws[i]))
		}
	}
	return out
}

// TestCochangeRun runs the whole evaluation on the small history: one
// commit ("xy 3", the only one of the last two that changes two Go files
// besides "xy 2"), every predictor, traced.
func TestCochangeRun(t *testing.T) {
	r, cs := history(t)
	var queries []Query
	work := t.TempDir()
	opts := Options{Commits: 2, Predictors: Predictors(), Work: work, Trace: func(q Query) { queries = append(queries, q) }}
	rep, err := Cochange(r.dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Qualifying, oldest first: xy 1, xz, xy 2, xy 3; the last two.
	if len(rep.Commits) != 2 || rep.Commits[0].Hash != cs[3] || rep.Commits[1].Hash != cs[5] {
		t.Fatalf("commits %+v", rep.Commits)
	}
	if rep.Queries != 4 || len(queries) != 4 {
		t.Fatalf("queries %d, traced %d", rep.Queries, len(queries))
	}
	names := []string{}
	for _, s := range rep.Scores {
		names = append(names, s.Predictor)
		if s.Queries != 4 || s.Recall < 0 || s.Recall > 1 || s.Hit < 0 || s.Hit > 1 {
			t.Errorf("%+v", s)
		}
	}
	if d := cmp.Diff([]string{"activate", "cochange", "samedir", "pagerank", "lexical"}, names); d != "" {
		t.Errorf("predictors (-want +got):\n%s", d)
	}
	// History alone answers y.go for x.go and x.go for y.go: recall 1.
	for _, s := range rep.Scores {
		if s.Predictor == "cochange" && (s.Recall != 1 || s.Hit != 1) {
			t.Errorf("cochange %+v, want recall and hit 1", s)
		}
	}
	for _, q := range queries {
		if len(q.Want) != 1 || q.Want[0] == q.File {
			t.Errorf("query %+v", q)
		}
		for name, a := range q.Answers {
			if slices.Contains(a, q.File) || len(a) > 10 {
				t.Errorf("%s answered %v for %s", name, a, q.File)
			}
		}
	}
	// The worktree is gone from the repository; the store stays for reuse.
	if out := r.git("worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Errorf("worktrees left: %s", out)
	}
	if _, err := os.Stat(filepath.Join(work, "store")); err != nil {
		t.Errorf("work store: %v", err)
	}
	// A second run over the same work directory gives the same scores.
	again, err := Cochange(r.dir, Options{Commits: 2, Predictors: Predictors(), Work: work})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rep.Scores, again.Scores); d != "" {
		t.Errorf("second run (-first +second):\n%s", d)
	}
}

func TestCochangeErrors(t *testing.T) {
	r, _ := history(t)
	if _, err := Cochange(r.dir, Options{Commits: 0, Predictors: Predictors()}); err == nil {
		t.Error("commits 0 accepted")
	}
	if _, err := Cochange(t.TempDir(), Options{Commits: 3, Predictors: Predictors()}); err == nil {
		t.Error("a directory outside git accepted")
	}
	if _, err := Cochange(r.dir, Options{Commits: 3, Skip: 10, Predictors: Predictors()}); err == nil {
		t.Error("no qualifying commit: no error")
	}
	if _, err := PickPredictors([]string{"oracle"}); err == nil {
		t.Error("unknown predictor accepted")
	}
}

// evalRepos finds the evaluation bundles: shared/eval-repos in the nearest
// ancestor directory that has one (../shared from the repository root), or
// $MEMCTL_EVAL_REPOS.
func evalRepos(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("MEMCTL_EVAL_REPOS"); d != "" {
		return d
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "eval-repos")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("skipping: no shared/eval-repos (the git bundles of the evaluation repositories) in any parent directory; set MEMCTL_EVAL_REPOS to run")
		}
		dir = parent
	}
}

// TestCochangeOnBbolt replays two real commits of etcd-io/bbolt and checks
// what the evaluation saw against git itself: the commits and their files,
// and that the memory of each changed file is the parent's version.
func TestCochangeOnBbolt(t *testing.T) {
	bundle := filepath.Join(evalRepos(t), "bbolt.bundle")
	if testing.Short() {
		t.Skip("skipping: -short")
	}
	dir := filepath.Join(t.TempDir(), "bbolt")
	if out, err := exec.Command("git", "clone", "-q", bundle, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone %s: %v: %s", bundle, err, out)
	}
	repo, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	commits, err := repo.Commits(2, 0, DefaultCommitRule)
	if err != nil || len(commits) != 2 {
		t.Fatalf("commits %v, %v", commits, err)
	}
	r := &testRepo{t: t, dir: dir}
	for _, c := range commits {
		// Independently: git's own view of the commit.
		if got := r.git("rev-parse", c.Hash+"^"); got != c.Parent {
			t.Errorf("%s: parent %s, git says %s", c.Hash, c.Parent, got)
		}
		var goFiles []string
		for _, l := range strings.Split(r.git("diff-tree", "--no-commit-id", "-r", "--name-status", "--no-renames", c.Parent, c.Hash), "\n") {
			st, f, _ := strings.Cut(l, "\t")
			if strings.HasSuffix(f, ".go") && !strings.Contains("/"+f, "/testdata/") {
				if st == "A" {
					t.Errorf("%s adds %s", c.Hash, f)
				}
				goFiles = append(goFiles, f)
			}
		}
		if d := cmp.Diff(goFiles, c.Files); d != "" {
			t.Errorf("%s files (-git +eval):\n%s", c.Hash, d)
		}
	}
	b, err := newBuilder(repo, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	for _, c := range commits {
		m, err := b.at(c.Parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.Files {
			n, ok := m.FileNode(f)
			if !ok {
				t.Errorf("%s: %s not in the memory at the parent", c.Hash[:8], f)
				continue
			}
			payload, err := m.Graph.Payload(n)
			if err != nil {
				t.Fatal(err)
			}
			content, err := exec.Command("git", "-C", dir, "show", c.Parent+":"+f).Output()
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(content)
			if want := fmt.Sprintf(`"hash":"sha256:%x"`, sum); !strings.Contains(string(payload), want) {
				t.Errorf("%s: memory of %s is not the parent's version (want %s): %s", c.Hash[:8], f, want, payload)
			}
		}
	}
	rep, err := Cochange(dir, Options{Commits: 2, Predictors: Predictors()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != len(commits[0].Files)+len(commits[1].Files) || len(rep.Scores) != 5 {
		t.Errorf("report %+v", rep)
	}
}
