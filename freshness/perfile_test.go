package freshness

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/lmdbstore"
)

// The per-file path (codetree.Cache): a refresh that parses only the
// changed files and compares with the store only what differs from the
// last graph must leave the store exactly as a fresh full ingest of the
// same tree would. The edits below aim at what crosses files: definitions
// other files import and call, imports, base classes, re-exports, files
// deleted and symbols moved, in Python, TypeScript, JavaScript and Go.

func mixedOptions(c *Cache) Options {
	return Options{Cache: c, Ingest: codetree.Options{WithGo: true, SyntaxOnly: true,
		Langs: []string{ingest.LangPython, ingest.LangTypeScript, ingest.LangJavaScript}}}
}

// mixedFixture is a repository whose files use each other's definitions.
func mixedFixture(t testing.TB) string {
	files := map[string]string{
		"go.mod":             "module example.com/fx\n\ngo 1.22\n",
		"main.go":            "package main\n\nimport \"example.com/fx/util\"\n\nfunc main() { util.Helper() }\n",
		"util/util.go":       "package util\n\n// Helper helps.\nfunc Helper() int { return twice(1) }\n\nfunc twice(x int) int { return 2 * x }\n",
		"py/pkg/__init__.py": "from pkg.shapes import Shape\n",
		"py/pkg/shapes.py":   "def helper(x):\n    return x\n\n\nclass Shape:\n    def area(self):\n        return helper(0)\n\n\nclass Square(Shape):\n    def side(self):\n        return self.area()\n",
		"py/pkg/geo.py":      "from pkg.shapes import Shape, Square, helper\n\n\ndef total(xs):\n    return helper(1) + Shape().area() + Square().side()\n",
		"py/pkg/cli.py":      "from pkg import geo\nfrom pkg import Shape\n\n\ndef main():\n    return geo.total([]) + Shape().area()\n",
		"py/pkg/test_geo.py": "from pkg.geo import total\n\n\ndef test_total():\n    assert total([]) == 0\n",
		"web/lib.ts":         "export function fmt(x: number): string {\n  return String(x)\n}\n\nexport class Box {\n  open(): number {\n    return 1\n  }\n}\n",
		"web/index.ts":       "export { fmt } from './lib'\nexport * from './lib'\n",
		"web/app.ts":         "import { fmt, Box } from './lib'\nimport { legacy } from './legacy.js'\n\nexport function run(): string {\n  return fmt(new Box().open() + legacy())\n}\n",
		"web/page.ts":        "import { run } from './app'\nimport { fmt } from './index'\n\nexport function page() {\n  return run() + fmt(2)\n}\n",
		"web/legacy.js":      "export function legacy() {\n  return 1\n}\n",
		"web/old.js":         "import { legacy } from './legacy.js'\n\nexport function old() {\n  return legacy()\n}\n",
		".gitignore":         "*.log\n",
	}
	return repo(t, files)
}

// TestRefreshPerFileRandomEdits is the differential test of the per-file
// path: random cross-file edits, each followed by a refresh through one
// cache, the store then compared with a fresh full ingest.
func TestRefreshPerFileRandomEdits(t *testing.T) {
	seeds := []int64{1, 2, 3, 4, 5, 6}
	steps := 18
	if testing.Short() {
		seeds, steps = seeds[:1], 6
	}
	for _, seed := range seeds {
		rng := rand.New(rand.NewSource(seed))
		dir := mixedFixture(t)
		s := newStore(t)
		c := NewCache()
		o := mixedOptions(c)
		if _, err := Refresh(s, dir, o); err != nil {
			t.Fatal(err)
		}
		n := 0
		for step := 0; step < steps; step++ {
			op := mixedEdit(t, rng, dir, &n, 4)
			res, err := Refresh(s, dir, o)
			if err != nil {
				t.Fatalf("seed %d step %d (%s): %v", seed, step, op, err)
			}
			if got, want := graphDump(t, s), freshDumpWith(t, dir, mixedOptions(nil)); !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d (%s): refreshed graph differs from a fresh ingest:\n%s", seed, step, op, diffLines(got, want))
			}
			if gs, _, err := ingest.ReadGitState(dir); err != nil || res.Commit != gs.Commit || res.Dirty != gs.Dirty {
				t.Fatalf("seed %d step %d (%s): git state %s dirty=%t, git says %+v (%v)", seed, step, op, res.Commit, res.Dirty, gs, err)
			}
			if res.Rev == 0 {
				continue
			}
			if want := changedSince(t, s, res.Rev); !slices.Equal(res.Changed, want) {
				t.Fatalf("seed %d step %d (%s): changed %v, the revision changed %v", seed, step, op, res.Changed, want)
			}
		}
		if c.Deltas() == 0 {
			t.Fatalf("seed %d: no refresh took the per-file path", seed)
		}
		t.Logf("seed %d: %d of %d refreshes per file, %d ran git", seed, c.Deltas(), steps, c.GitRuns())
	}
}

// mixedEdit makes one random edit: one time in oneIn a file edit,
// addition, deletion or rename (randomEdit), else a cross-file edit.
func mixedEdit(t testing.TB, rng *rand.Rand, dir string, n *int, oneIn int) string {
	if rng.Intn(oneIn) == 0 {
		return randomEdit(t, rng, dir, n)
	}
	return crossFileEdit(t, rng, dir, n)
}

// changedSince lists the file nodes revision rev put with another hash or
// deleted, from the revision's own operations.
func changedSince(t testing.TB, s *lmdbstore.Store, rev lmdbstore.Revision) []string {
	t.Helper()
	out := []string{}
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		return r.RevisionOps(rev, func(op lmdbstore.Op) error {
			key, ok := strings.CutPrefix(op.NodeKey, "file:")
			if !ok || !codeFile(key) {
				return nil
			}
			switch op.Kind {
			case lmdbstore.OpDelNode:
				out = append(out, key)
			case lmdbstore.OpPutNode:
				old, err := r.GetNode(op.NodeKey, lmdbstore.AtRevision(rev-1))
				if err != nil || fileHashOf(old.Payload) != fileHashOf(op.Payload) {
					out = append(out, key)
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func fileHashOf(payload []byte) string {
	m := regexp.MustCompile(`"hash":"([^"]*)"`).FindSubmatch(payload)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// freshDumpWith ingests dir into a new store with o and dumps it.
func freshDumpWith(t testing.TB, dir string, o Options) []string {
	t.Helper()
	s := newStore(t)
	o = o.withDefaults(s)
	if _, _, err := codetree.Ingest(s, dir, o.Ingest); err != nil {
		t.Fatal(err)
	}
	return graphDump(t, s)
}

// A language's forms for the edits: a definition, an import of a name
// from another file, a use of a name.
type langForms struct {
	def    func(name string) string
	imp    func(from, to, name string) string // to imports name from from
	use    func(name string) string
	defRes []*regexp.Regexp // a top-level definition; group 1 its name
}

var forms = map[string]langForms{
	".py": {
		def: func(n string) string { return "\n\ndef " + n + "(x):\n    return x\n" },
		imp: func(from, _, n string) string {
			return "\nfrom pkg." + strings.TrimSuffix(path.Base(from), ".py") + " import " + n + "\n"
		},
		use:    func(n string) string { return "\n\ndef use_" + n + "():\n    return " + n + "(1)\n" },
		defRes: []*regexp.Regexp{regexp.MustCompile(`(?m)^def (\w+)\(`), regexp.MustCompile(`(?m)^class (\w+)`)},
	},
	".ts": {
		def: func(n string) string { return "\nexport function " + n + "(x: number): number {\n  return x\n}\n" },
		imp: func(from, _, n string) string {
			return "\nimport { " + n + " } from './" + strings.TrimSuffix(path.Base(from), ".ts") + "'\n"
		},
		use:    func(n string) string { return "\nexport function use_" + n + "() {\n  return " + n + "(1)\n}\n" },
		defRes: []*regexp.Regexp{regexp.MustCompile(`(?m)^export function (\w+)\(`), regexp.MustCompile(`(?m)^export class (\w+)`)},
	},
	".js": {
		def: func(n string) string { return "\nexport function " + n + "(x) {\n  return x\n}\n" },
		imp: func(from, _, n string) string {
			return "\nimport { " + n + " } from './" + path.Base(from) + "'\n"
		},
		use:    func(n string) string { return "\nexport function use_" + n + "() {\n  return " + n + "(1)\n}\n" },
		defRes: []*regexp.Regexp{regexp.MustCompile(`(?m)^export function (\w+)\(`), regexp.MustCompile(`(?m)^export class (\w+)`)},
	},
}

// wantsRe finds the modules an import of crossFileEdit names before they
// exist ("# wants pkg/nm3.py nm3").
var wantsRe = regexp.MustCompile(`(?m)^# wants (\S+) (\w+)$`)

// crossFileEdit makes one random edit that other files can see.
func crossFileEdit(t testing.TB, rng *rand.Rand, dir string, n *int) string {
	*n++
	name := fmt.Sprintf("nm%d", *n)
	var files []string
	for _, f := range codeFiles(t, dir) {
		if _, ok := forms[path.Ext(f)]; ok && !strings.HasSuffix(f, "__init__.py") {
			files = append(files, f)
		}
	}
	if len(files) < 2 {
		return "skip"
	}
	a := files[rng.Intn(len(files))]
	fa := forms[path.Ext(a)]
	// b: another file of the same family (TypeScript and JavaScript import each other).
	var peers []string
	for _, f := range files {
		if f != a && (path.Ext(f) == ".py") == (path.Ext(a) == ".py") {
			peers = append(peers, f)
		}
	}
	if len(peers) == 0 {
		return "skip"
	}
	b := peers[rng.Intn(len(peers))]
	fb := forms[path.Ext(b)]
	read := func(rel string) string {
		bs, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		return string(bs)
	}
	defs := func(rel string) []string {
		var out []string
		for _, re := range forms[path.Ext(rel)].defRes {
			for _, m := range re.FindAllStringSubmatch(read(rel), -1) {
				out = append(out, m[1])
			}
		}
		return out
	}
	switch rng.Intn(13) {
	case 11: // Python: a unittest base class in a, a test class of b deriving it
		// (b's methods are test code through a: a later rename or removal
		// of the base in a changes b's symbols and edges, b unchanged)
		if path.Ext(a) != ".py" {
			return "skip"
		}
		base := "Base_" + name
		write(t, dir, a, read(a)+"\n\nclass "+base+"(TestCase):\n    def check(self):\n        return 1\n")
		write(t, dir, b, read(b)+fb.imp(a, b, base)+"\n\nclass Case_"+name+"("+base+"):\n    def test_it(self):\n        return self.check()\n")
		return "test base " + base + " in " + a + ", derived in " + b
	case 9, 10: // an import of a module not there yet, or the module added
		// An import case 9 made and nothing since removed names a missing
		// module: add it, its importers unchanged but now resolving.
		for _, f := range files {
			for _, m := range missingModRe.FindAllStringSubmatch(read(f), -1) {
				mod := path.Join(path.Dir(f), "mod_"+m[1]+path.Ext(f))
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(mod))); err == nil {
					continue
				}
				write(t, dir, mod, forms[path.Ext(f)].def(m[1]))
				return "add " + mod + ", imported by " + f
			}
		}
		// Else b imports and calls a name of a module not there yet
		// (unresolved until a later step adds it).
		mod := path.Join(path.Dir(b), "mod_"+name+path.Ext(b))
		write(t, dir, b, read(b)+fb.imp(mod, b, name)+fb.use(name))
		return "import " + name + " from missing " + mod + " into " + b
	case 12: // (Python) a module a file imports but that is missing: created, or a new such import
		py := forms[".py"]
		var pys []string
		for _, f := range files {
			if path.Ext(f) == ".py" {
				pys = append(pys, f)
			}
			for _, w := range wantsRe.FindAllStringSubmatch(read(f), -1) {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(w[1]))); os.IsNotExist(err) {
					write(t, dir, w[1], py.def(w[2]))
					return "create " + w[1] + ", which " + f + " imports"
				}
			}
		}
		if len(pys) == 0 {
			return "skip"
		}
		pb := pys[rng.Intn(len(pys))]
		rel := path.Join(path.Dir(pb), name+".py")
		write(t, dir, pb, read(pb)+py.imp(rel, pb, name)+py.use(name)+"\n# wants "+rel+" "+name+"\n")
		return "import " + name + " from missing " + rel + " into " + pb
	case 6: // stage everything
		git(t, dir, "add", "-A")
		return "stage"
	case 7: // restore one file as HEAD has it (a no-op for a file HEAD lacks)
		gitTry(dir, "checkout", "-q", "HEAD", "--", a)
		return "restore " + a
	case 8: // back to HEAD: a clean tree
		git(t, dir, "reset", "-q", "--hard")
		git(t, dir, "clean", "-fdq")
		return "reset --hard"
	case 0: // a new definition in a, imported and called by b
		write(t, dir, a, read(a)+fa.def(name))
		write(t, dir, b, read(b)+fb.imp(a, b, name)+fb.use(name))
		return "define " + name + " in " + a + ", use from " + b
	case 1: // rename a definition others call (their references now dangle)
		ds := defs(a)
		if len(ds) == 0 {
			return "skip"
		}
		d := ds[rng.Intn(len(ds))]
		re := regexp.MustCompile(`(?m)^((?:export )?(?:def|class|function) )` + d + `\b`)
		write(t, dir, a, re.ReplaceAllString(read(a), "${1}"+d+"_"+name))
		return "rename " + d + " in " + a
	case 2: // remove a definition
		ds := defs(a)
		if len(ds) == 0 {
			return "skip"
		}
		d := ds[rng.Intn(len(ds))]
		body, text := cutDef(read(a), d)
		if body == "" {
			return "skip"
		}
		write(t, dir, a, text)
		return "remove " + d + " from " + a
	case 3: // move a definition from a to b, importers of a left as they are
		ds := defs(a)
		if len(ds) == 0 {
			return "skip"
		}
		d := ds[rng.Intn(len(ds))]
		body, text := cutDef(read(a), d)
		if body == "" || path.Ext(a) != path.Ext(b) {
			return "skip"
		}
		write(t, dir, a, text)
		write(t, dir, b, read(b)+"\n"+body)
		return "move " + d + " from " + a + " to " + b
	case 4: // b imports an existing definition of a and calls it
		ds := defs(a)
		if len(ds) == 0 {
			return "skip"
		}
		d := ds[rng.Intn(len(ds))]
		write(t, dir, b, read(b)+fb.imp(a, b, d)+fb.use(d))
		return "import " + d + " from " + a + " into " + b
	default: // delete a file others import
		if len(files) < 6 {
			return "skip"
		}
		os.Remove(filepath.Join(dir, filepath.FromSlash(a)))
		return "delete " + a
	}
}

// missingModRe finds an import crossFileEdit made of a module it names
// "mod_<name>"
// (group 1: the name it defines).
var missingModRe = regexp.MustCompile(`(?m)(?:from pkg\.|from '\./)mod_(nm\d+)(?: import|(?:\.js)?'$)`)

// cutDef removes the top-level definition of name from text (its lines up
// to the next top-level line) and returns it.
func cutDef(text, name string) (body, rest string) {
	lines := strings.SplitAfter(text, "\n")
	re := regexp.MustCompile(`^(?:export )?(?:def|class|function) ` + name + `\b`)
	for i, l := range lines {
		if !re.MatchString(l) {
			continue
		}
		j := i + 1
		for j < len(lines) && (strings.HasPrefix(lines[j], " ") || lines[j] == "}\n" || lines[j] == "}") {
			j++
			if lines[j-1] == "}\n" || lines[j-1] == "}" {
				break
			}
		}
		return strings.Join(lines[i:j], ""), strings.Join(lines[:i], "") + strings.Join(lines[j:], "")
	}
	return "", text
}

// gitTry runs git in dir and ignores its failure.
func gitTry(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	_ = cmd.Run()
}

// TestRefreshGitStateWithoutGit: the git state a cached refresh records
// equals git's after each step, and git runs only where the last status
// cannot prove the tree dirty (counts derived by hand from the rules of
// gitMemo).
func TestRefreshGitStateWithoutGit(t *testing.T) {
	dir := mixedFixture(t)
	s := newStore(t)
	c := NewCache()
	o := mixedOptions(c)
	gitStateSteps(t, dir, func() (Result, error) { return Refresh(s, dir, o) }, c.GitRuns)
}

// TestOneShotGitStateFromCacheFile: the same steps through refreshes
// without a process cache (each one a new process: only the refresh cache
// file and the stat file carry over). git's status is used exactly where
// the memo the last refresh kept in the cache file cannot prove the tree
// dirty — the counts of a process cache — and a memo that does not decode
// is none.
func TestOneShotGitStateFromCacheFile(t *testing.T) {
	dir := mixedFixture(t)
	s := newStore(t)
	runs := 0
	o := mixedOptions(nil)
	o.gitRuns = &runs
	gitStateSteps(t, dir, func() (Result, error) { return Refresh(s, dir, o) }, func() int { return runs })
	c, err := loadCacheFile(filepath.Join(filepath.Dir(o.withDefaults(s).StatePath), CacheFile))
	if err != nil || decodeMemo(c.Extra()) == nil {
		t.Fatalf("the cache file holds no memo after git ran: %v", err)
	}
	if decodeMemo(c.Extra()[:len(c.Extra())-1]) != nil || decodeMemo([]byte("x")) != nil {
		t.Error("a truncated or foreign memo decoded")
	}
}

// gitStateSteps edits, stages, commits and resets mixedFixture's tree
// step by step; after each, refresh must record git's own state, with
// git's status used runs() times in all so far.
func gitStateSteps(t *testing.T, dir string, refresh func() (Result, error), runs func() int) {
	t.Helper()
	step := func(what string, wantDirty bool, wantRuns int) {
		t.Helper()
		res, err := refresh()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		gs, _, err := ingest.ReadGitState(dir)
		if err != nil || res.Commit != gs.Commit || res.Dirty != gs.Dirty || gs.Dirty != wantDirty {
			t.Fatalf("%s: recorded %s dirty=%t, git says %+v, want dirty=%t (%v)", what, res.Commit, res.Dirty, gs, wantDirty, err)
		}
		if runs() != wantRuns {
			t.Fatalf("%s: git ran %d times, want %d", what, runs(), wantRuns)
		}
	}
	appendTo := func(rel, text string) {
		b, _ := os.ReadFile(filepath.Join(dir, rel))
		write(t, dir, rel, string(b)+text)
	}
	step("initial", false, 1)
	appendTo("py/pkg/geo.py", "\n\ndef more():\n    return 1\n")
	step("edit a clean tracked file", true, 1)
	appendTo("py/pkg/geo.py", "\n\ndef again():\n    return 2\n")
	step("edit it again", true, 1)
	git(t, dir, "checkout", "-q", "--", "py/pkg/geo.py")
	step("restore it: clean, which only git can say", false, 2)
	appendTo("web/lib.ts", "\nexport const k = 1\n")
	write(t, dir, "web/extra.ts", "export const e = 2\n")
	git(t, dir, "add", "web/extra.ts")
	git(t, dir, "commit", "-q", "-m", "extra")
	step("HEAD moved, lib.ts changed and not staged", true, 3)
	appendTo("web/lib.ts", "\nexport const k2 = 2\n")
	step("lib.ts changed again: still not HEAD's", true, 3)
	git(t, dir, "checkout", "-q", "--", "web/lib.ts")
	step("lib.ts restored: clean", false, 4)
	write(t, dir, "py/pkg/new.py", "def n():\n    return 0\n")
	step("an untracked source file: a new file proves nothing", true, 5)
	git(t, dir, "add", "py/pkg/new.py")
	step("staged: it was untracked and is still there", true, 5)
	appendTo("web/app.ts", "\nexport const z = 3\n")
	step("and a clean tracked file edited", true, 5)
	git(t, dir, "reset", "-q", "--hard")
	step("reset: clean", false, 6)
	appendTo("web/app.ts", "\nexport const y = 4\n")
	git(t, dir, "add", "web/app.ts")
	appendTo("web/page.ts", "\nexport const p = 5\n")
	git(t, dir, "add", "web/page.ts")
	git(t, dir, "commit", "-q", "-m", "page only", "--", "web/page.ts")
	step("HEAD moved, app.ts staged", true, 7)
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(dir, "web/old.js"), later, later)
	step("a stat changed, nothing else: still staged", true, 7)
	git(t, dir, "reset", "-q")
	git(t, dir, "checkout", "-q", "--", ".")
	os.Chtimes(filepath.Join(dir, "web/old.js"), later.Add(time.Minute), later.Add(time.Minute))
	step("unstaged and restored: clean", false, 8)
}

// TestRefreshCacheConcurrent: refreshes through one cache from several
// goroutines at once (the MCP server answers concurrently) leave the
// store as a fresh ingest of the tree, and write each change once.
func TestRefreshCacheConcurrent(t *testing.T) {
	dir := mixedFixture(t)
	s := newStore(t)
	o := mixedOptions(NewCache())
	if _, err := Refresh(s, dir, o); err != nil {
		t.Fatal(err)
	}
	concurrentRefreshes(t, s, dir, o, 7, 4, nil)
}

// concurrentRefreshes makes rounds random cross-file edits, each followed
// by 4 refreshes of s at once with o: at most one of them may write, and
// the store must then equal a fresh ingest; after, when set, runs after
// each round.
func concurrentRefreshes(t *testing.T, s *lmdbstore.Store, dir string, o Options, seed int64, rounds int, after func(round int)) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	n := 0
	for round := 0; round < rounds; round++ {
		op := crossFileEdit(t, rng, dir, &n)
		revs := make(chan lmdbstore.Revision, 4)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := Refresh(s, dir, o)
				if err != nil {
					t.Error(err)
				}
				revs <- res.Rev
			}()
		}
		wg.Wait()
		close(revs)
		wrote := 0
		for r := range revs {
			if r != 0 {
				wrote++
			}
		}
		if wrote > 1 {
			t.Fatalf("round %d (%s): %d refreshes wrote", round, op, wrote)
		}
		if got, want := graphDump(t, s), freshDumpWith(t, dir, mixedOptions(nil)); !slices.Equal(got, want) {
			t.Fatalf("round %d (%s): differs from a fresh ingest:\n%s", round, op, diffLines(got, want))
		}
		if after != nil {
			after(round)
		}
	}
}
