package freshness

import (
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

// TestRefreshScripted: a scripted session; after every refresh the graph
// equals a fresh full ingest of the same tree.
func TestRefreshScripted(t *testing.T) {
	dir := fixture(t)
	s := newStore(t)
	check := func(step string, wantChanged []string) Result {
		t.Helper()
		res := refresh(t, s, dir)
		if got, want := graphDump(t, s), freshDump(t, dir); !slices.Equal(got, want) {
			t.Fatalf("%s: refreshed graph differs from a fresh ingest:\n%s", step, diffLines(got, want))
		}
		if wantChanged != nil && !slices.Equal(res.Changed, wantChanged) {
			t.Fatalf("%s: changed %v, want %v", step, res.Changed, wantChanged)
		}
		return res
	}
	first := check("initial", nil)
	if !first.Refreshed || first.Rev == 0 || first.Commit == "" || first.Dirty {
		t.Fatalf("initial: %+v", first)
	}
	if res := refresh(t, s, dir); res.Refreshed || res.Rev != 0 || res.AsOf != first.Rev || res.Commit != first.Commit {
		t.Fatalf("unchanged: %+v", res)
	}

	write(t, dir, "py/pkg/beta.py", "from pkg.alpha import area\n\n\ndef double(x):\n    return area(x, 2)\n\n\ndef triple(x):\n    return 3 * x\n")
	if res := check("edit", []string{"py/pkg/beta.py"}); !res.Dirty || res.Rev == 0 {
		t.Fatalf("edit: %+v", res)
	}
	write(t, dir, "web/extra.js", "export const k = () => 1\n")
	check("add", []string{"web/extra.js"})
	os.Remove(filepath.Join(dir, "web/fmt.js"))
	check("delete", []string{"web/fmt.js"})
	git(t, dir, "mv", "py/pkg/alpha.py", "py/pkg/gamma.py")
	check("rename", []string{"py/pkg/alpha.py", "py/pkg/gamma.py"})
	write(t, dir, "util/util.go", "package util\n\n// Helper helps.\nfunc Helper() int { return 2 }\n")
	write(t, dir, "util/more.go", "package util\n\nfunc twice(x int) int { return 2 * x }\n")
	check("move symbol", []string{"util/more.go", "util/util.go"})
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "work")
	if res := check("commit", []string{}); res.Dirty || !res.Refreshed || res.Rev == 0 {
		t.Fatalf("commit: HEAD moved, the record must follow: %+v", res)
	}
	git(t, dir, "checkout", "-q", "-b", "old", "HEAD~1")
	check("switch branch", nil)
	git(t, dir, "checkout", "-q", "main")
	check("switch back", nil)
	if res := refresh(t, s, dir); res.Refreshed {
		t.Fatalf("unchanged after switch: %+v", res)
	}
}

// TestRefreshRandomEdits is the differential test over random edit
// sequences: edits, adds, deletes, renames (git and plain), symbol moves,
// commits and branch switches.
func TestRefreshRandomEdits(t *testing.T) {
	seeds := []int64{1, 2, 3}
	steps := 10
	if testing.Short() {
		seeds, steps = seeds[:1], 5
	}
	for _, seed := range seeds {
		rng := rand.New(rand.NewSource(seed))
		dir := fixture(t)
		s := newStore(t)
		refresh(t, s, dir)
		n := 0
		for step := 0; step < steps; step++ {
			op := randomEdit(t, rng, dir, &n)
			refresh(t, s, dir)
			if got, want := graphDump(t, s), freshDump(t, dir); !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d (%s): refreshed graph differs from a fresh ingest:\n%s", seed, step, op, diffLines(got, want))
			}
		}
	}
}

func codeFiles(t testing.TB, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && codeFile(p) {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func randomEdit(t testing.TB, rng *rand.Rand, dir string, n *int) string {
	*n++
	files := codeFiles(t, dir)
	pick := files[rng.Intn(len(files))]
	abs := filepath.Join(dir, filepath.FromSlash(pick))
	ext := filepath.Ext(pick)
	body := func(name string) string {
		switch ext {
		case ".py":
			return "\n\ndef " + name + "(x):\n    return x\n"
		case ".js":
			return "\nexport function " + name + "(x) { return x }\n"
		}
		return "\nfunc " + name + "(x int) int { return x }\n"
	}
	name := "fn" + strings.Repeat("x", *n%3) + string(rune('a'+*n%26))
	switch rng.Intn(7) {
	case 0, 1: // edit
		b, _ := os.ReadFile(abs)
		os.WriteFile(abs, append(b, body(name)...), 0o644)
		return "edit " + pick
	case 2: // add
		np := strings.TrimSuffix(pick, ext) + "_n" + name + ext
		if ext == ".go" {
			write(t, dir, np, "package "+goPkg(dir, pick)+"\n"+body(name))
		} else {
			write(t, dir, np, body(name))
		}
		return "add " + np
	case 3: // delete
		if len(files) < 4 {
			return "skip"
		}
		os.Remove(abs)
		return "delete " + pick
	case 4: // rename, through git or not
		np := filepath.ToSlash(filepath.Join(filepath.Dir(pick), "r"+name+ext))
		if rng.Intn(2) == 0 {
			git(t, dir, "add", "-A")
			git(t, dir, "mv", pick, np)
		} else {
			os.Rename(abs, filepath.Join(dir, filepath.FromSlash(np)))
		}
		return "rename " + pick + " " + np
	case 5: // commit
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "--allow-empty", "-m", name)
		return "commit"
	default: // branch switch: to a new branch at an earlier commit, keeping nothing uncommitted
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "--allow-empty", "-m", name)
		git(t, dir, "checkout", "-q", "-b", "b"+name+string(rune('0'+*n%10)), "HEAD~1")
		return "switch"
	}
}

func goPkg(dir, rel string) string {
	b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimPrefix(line, "package ")
}

// TestRefreshRacyEdit: an edit that keeps size and mtime of the stat file's
// tick is still seen.
func TestRefreshRacyEdit(t *testing.T) {
	dir := fixture(t)
	s := newStore(t)
	refresh(t, s, dir)
	p := filepath.Join(dir, "web/fmt.js")
	fi, _ := os.Stat(p)
	write(t, dir, "web/fmt.js", "export function fmy(x) { return String(x) }\n")
	// Same size, and the old mtime: only the content tells.
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	st, _ := readState(filepath.Join(s.Path(), StateFile))
	// Make the entry racy: the stat file's own time is not later than it.
	os.Chtimes(filepath.Join(s.Path(), StateFile), fi.ModTime(), fi.ModTime())
	_ = st
	res := refresh(t, s, dir)
	if !slices.Equal(res.Changed, []string{"web/fmt.js"}) {
		t.Fatalf("racy edit missed: %+v", res)
	}
}

// TestStale: with refresh disabled, the changed files are listed and
// nothing is written.
func TestStale(t *testing.T) {
	dir := fixture(t)
	s := newStore(t)
	first := refresh(t, s, dir)
	write(t, dir, "py/pkg/beta.py", "def other():\n    pass\n")
	write(t, dir, "web/new.js", "export const z = 1\n")
	os.Remove(filepath.Join(dir, "main.go"))
	o := testOptions()
	o.Disabled = true
	res, err := Refresh(s, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"main.go", "py/pkg/beta.py", "web/new.js"}
	if !slices.Equal(res.Stale, want) || res.Rev != 0 {
		t.Fatalf("stale %v (rev %d), want %v", res.Stale, res.Rev, want)
	}
	var rev uint64
	s.View(func(r *lmdbstore.ReadTxn) error { rev = uint64(r.Revision()); return nil })
	if rev != uint64(first.Rev) {
		t.Fatalf("disabled refresh wrote: rev %d", rev)
	}
	got, err := Stale(s, dir, testOptions())
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Stale = %v, %v", got, err)
	}
}

// TestRefreshGoFilesComeAndGo: a tree without Go (the refresh then does
// not walk it again for Go files, codetree.Options.NoGoFiles) gains a Go
// file, one in a directory the Go walk skips, loses them: after each
// refresh the store is what a fresh ingest of the tree gives.
func TestRefreshGoFilesComeAndGo(t *testing.T) {
	dir := repo(t, map[string]string{"py/a.py": "def f():\n    return 1\n"})
	s := newStore(t)
	for _, step := range []struct {
		what   string
		edit   func()
		goFile bool
	}{
		{"python only", func() {}, false},
		{"a Go module added", func() {
			write(t, dir, "go.mod", "module example.com/x\n\ngo 1.22\n")
			write(t, dir, "main.go", "package main\n\nfunc main() { g() }\n\nfunc g() {}\n")
		}, true},
		{"Go removed", func() {
			for _, rel := range []string{"go.mod", "main.go"} {
				if err := os.Remove(filepath.Join(dir, rel)); err != nil {
					t.Fatal(err)
				}
			}
		}, false},
		{"a Go file where the Go walk does not go", func() { write(t, dir, "_skip/x.go", "package skip\n") }, false},
	} {
		step.edit()
		refresh(t, s, dir)
		got, want := graphDump(t, s), freshDump(t, dir)
		if d := diffLines(want, got); d != "" {
			t.Fatalf("%s: refreshed store differs from a fresh ingest:\n%s", step.what, d)
		}
		if has := slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "file:main.go") }); has != step.goFile {
			t.Fatalf("%s: file:main.go in the store: %t, want %t", step.what, has, step.goFile)
		}
	}
}
