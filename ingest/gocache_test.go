package ingest

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// editModel is a small module of five packages (an interface in a, its
// implementations in b and d, tests and an external test of b, calls
// across packages), with a second module inside that imports it, whose
// files render from a few knobs; an edit turns a
// knob. The graph of every state is compared with a fresh extraction.
type editModel struct {
	aBody      int              // a.A's body
	aTwoParams bool             // a.A(x, y int): an exported signature change
	extra      map[string][]int // package → added funcs NewN (exported API)
	calls      map[string][]int // package b, c, d → calls a.NewN from its body
	sqArea     bool             // b.Sq has Area: implements a.Shape
	dPerim     bool             // d.D has Perimeter
	shapePerim bool             // a.Shape also has Perimeter
	extraFile  bool             // c/extra.go exists
	modComment int              // go.mod's comment
	buildTag   bool             // d/d.go has //go:build !plan9
	cImportsA  bool             // c/c.go imports a directly
	bTestBody  int              // body of b's in-package test
	extBody    int              // body of b's external test
	broken     bool             // c/c.go ends with a syntax error after its imports
	newPkg     bool             // package e exists
	cgo        bool             // a/cgo.go imports "C"
	winBody    int              // body of d/d_windows.go, read from syntax (not built here)
	cgoBody    int              // body of a/cgo.go: a file that imports "C" has no header to compare
	winBase    bool             // d_windows.go's winHelper returns b.Base (else b.Sq): its call resolves by it
}

func newEditModel() *editModel {
	return &editModel{extra: map[string][]int{}, calls: map[string][]int{}, sqArea: true}
}

func (m *editModel) files() map[string]string {
	funcs := func(pkg string) string {
		var b strings.Builder
		for _, n := range m.extra[pkg] {
			fmt.Fprintf(&b, "\n// New%d is added.\nfunc New%d() int { return %d }\n", n, n, n)
		}
		return b.String()
	}
	callsOf := func(pkg string) string {
		var b strings.Builder
		for _, n := range m.calls[pkg] {
			fmt.Fprintf(&b, " + a.New%d()", n)
		}
		return b.String()
	}
	aArgs, aParams := "1", "x int"
	if m.aTwoParams {
		aArgs, aParams = "1, 2", "x, y int"
	}
	shape := "\tArea() int\n"
	if m.shapePerim {
		shape += "\tPerimeter() int\n"
	}
	fs := map[string]string{
		"go.mod": fmt.Sprintf("module example.com/m\n\ngo 1.22\n\n// edit %d\n", m.modComment),
		"a/a.go": fmt.Sprintf("package a\n\n// Shape has an area.\ntype Shape interface {\n%s}\n\n// A is called everywhere.\nfunc A(%s) int { return x + %d }\n%s",
			shape, aParams, m.aBody, funcs("a")),
		"a/unused.go": "package a\n\nfunc unused() int { return A(" + aArgs + ") }\n",
		"b/b.go": fmt.Sprintf("package b\n\nimport \"example.com/m/a\"\n\n// Base is embedded.\ntype Base struct{}\n\n// Perimeter is promoted unless Sq has its own.\nfunc (Base) Perimeter() int { return 0 }\n\n// Sq is a square.\ntype Sq struct {\n\tN int\n\tBase\n}\n\n%s\n// B makes one.\nfunc B() a.Shape { var s any = Sq{}; sh, _ := s.(a.Shape); return sh }\n\nfunc use() int { return a.A(%s)%s }\n%s",
			map[bool]string{true: "// Area is its area.\nfunc (s Sq) Area() int { return a.A(" + aArgs + ") * s.N }\n\nfunc (s Sq) Perimeter() int { return 4 * s.N }\n", false: ""}[m.sqArea],
			aArgs, callsOf("b"), funcs("b")),
		"b/b_test.go":   fmt.Sprintf("package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { _ = B(); _ = use() + %d }\n", m.bTestBody),
		"b/ext_test.go": fmt.Sprintf("package b_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/b\"\n)\n\nfunc TestExt(t *testing.T) { _ = b.B(); _ = b.Sq{N: %d} }\n", m.extBody),
		"c/c.go": fmt.Sprintf("package c\n\nimport (\n%s\t\"example.com/m/b\"\n)\n\n// C uses b.\nfunc C() int { s := b.B(); if s == nil { return 0 }; return s.Area()%s }\n\n// C2 calls Sq's or Base's Perimeter.\nfunc C2() int { return b.Sq{}.Perimeter() }\n%s",
			map[bool]string{true: "\t\"example.com/m/a\"\n", false: ""}[m.cImportsA], map[bool]string{true: " + a.A(" + aArgs + ")", false: ""}[m.cImportsA], funcs("c")),
		"d/d.go": fmt.Sprintf("%spackage d\n\nimport (\n\t\"example.com/m/a\"\n\t\"example.com/m/c\"\n)\n\n// D is a shape too.\ntype D struct{}\n\n// Area calls c.\nfunc (D) Area() int { return c.C()%s }\n%s\nvar _ a.Shape = D{}\n",
			map[bool]string{true: "//go:build !plan9\n\n", false: ""}[m.buildTag], callsOf("d"),
			map[bool]string{true: "\n// Perimeter is new.\nfunc (D) Perimeter() int { return 0 }\n", false: ""}[m.dPerim]),
	}
	// A file no build here compiles: read from syntax, resolved with the
	// declarations of the type-checked packages.
	fs["d/d_windows.go"] = fmt.Sprintf("package d\n\nimport (\n\t\"example.com/m/a\"\n\t\"example.com/m/b\"\n)\n\n// Win is built on Windows only.\nfunc Win() int { return a.A(%s) + b.Sq{}.Perimeter() + D{}.Area() + winHelper().Perimeter() + %d }\n\nfunc winHelper() %s { return %s{} }\n",
		aArgs, m.winBody, map[bool]string{true: "b.Base", false: "b.Sq"}[m.winBase], map[bool]string{true: "b.Base", false: "b.Sq"}[m.winBase])
	// A second module in the tree, importing the first (replace).
	fs["tools/go.mod"] = "module example.com/m/tools\n\ngo 1.22\n\nrequire example.com/m v0.0.0\n\nreplace example.com/m => ../\n"
	fs["tools/t.go"] = "package tools\n\nimport (\n\t\"example.com/m/a\"\n\t\"example.com/m/b\"\n)\n\n// T calls across modules.\nfunc T() int { return a.A(" + aArgs + ") + b.Sq{}.Perimeter() }\n"
	if m.extraFile {
		fs["c/extra.go"] = "package c\n\n// Extra calls C.\nfunc Extra() int { return C() }\n"
	}
	if m.broken {
		fs["c/c.go"] += "\nfunc Broken( {\n"
	}
	if m.newPkg {
		fs["e/e.go"] = "package e\n\nimport \"example.com/m/a\"\n\n// E calls a.\nfunc E() int { return a.A(" + aArgs + ") }\n"
	}
	if m.cgo {
		fs["a/cgo.go"] = fmt.Sprintf("package a\n\n// #include <stdlib.h>\nimport \"C\"\n\n// Abs uses cgo.\nfunc Abs(x int) int { return int(C.abs(C.int(x))) + %d }\n", m.cgoBody)
	}
	return fs
}

// edit turns one knob at random and says whether the listing stays valid
// (an incremental extraction is expected).
func (m *editModel) edit(r *rand.Rand, step int) (string, bool) {
	return m.turn(r.Intn(editKnobs), r, step)
}

// editKnobs is the number of knobs turn turns.
const editKnobs = 18

// turn turns knob k.
func (m *editModel) turn(k int, r *rand.Rand, step int) (string, bool) {
	return m.turnKnob(k, r, step)
}

func (m *editModel) turnKnob(k int, r *rand.Rand, step int) (string, bool) {
	switch k {
	case 17:
		m.winBase = !m.winBase
		return "the result type of d_windows.go's winHelper", true
	case 15:
		m.winBody = step
		return "body of d_windows.go", true
	case 12:
		m.broken = !m.broken
		return "a syntax error in c's body", true
	case 13:
		m.newPkg = !m.newPkg
		return "add or delete package e", false
	case 14:
		m.cgo = !m.cgo
		return "add or delete a cgo file", false
	case 16:
		m.cgoBody = step
		if !m.cgo {
			return "nothing (no cgo file)", true
		}
		return "body of the cgo file", false
	case 0:
		m.aBody = step
		return "body of a.A", true
	case 1:
		pkg := []string{"a", "b", "c"}[r.Intn(3)]
		m.extra[pkg] = append(m.extra[pkg], step)
		if pkg == "a" {
			user := []string{"b", "d"}[r.Intn(2)]
			m.calls[user] = append(m.calls[user], step)
			return "add a.New and a call from " + user, true
		}
		return "add a func to " + pkg, true
	case 2:
		m.aTwoParams = !m.aTwoParams
		return "a.A's signature", true
	case 3:
		m.sqArea = !m.sqArea
		return "b.Sq's methods", true
	case 4:
		m.dPerim = !m.dPerim
		return "d.D's Perimeter", true
	case 5:
		m.shapePerim = !m.shapePerim
		return "a.Shape's methods", true
	case 6:
		m.extraFile = !m.extraFile
		return "add or delete c/extra.go", false
	case 7:
		m.modComment = step
		return "go.mod", false
	case 8:
		m.buildTag = !m.buildTag
		return "d's build constraint", false
	case 9:
		m.cImportsA = !m.cImportsA
		return "c's imports", false
	case 10:
		m.bTestBody = step
		return "b's in-package test", true
	default:
		m.extBody = step
		return "b's external test", true
	}
}

// writeModel writes the files of m that differ from what dir holds and
// removes those m no longer has.
func writeModel(t *testing.T, dir string, m *editModel, before map[string]string) map[string]string {
	t.Helper()
	now := m.files()
	for name := range before {
		if _, ok := now[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, src := range now {
		if before[name] == src {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return now
}

// renderAll renders every node and edge of g, payloads whole.
func renderAll(g *Graph) string {
	var b strings.Builder
	for _, n := range g.Nodes() {
		fmt.Fprintf(&b, "node %s %s %s\n", n.Key, n.Type, n.Payload)
	}
	for _, e := range g.Edges() {
		fmt.Fprintf(&b, "edge %s %s %s %g\n", e.Src, e.Rel, e.Dst, e.Weight)
	}
	return b.String()
}

// Edit sequences extracted through one GoCache give, after every edit,
// the graph a fresh extraction without a cache gives; edits that keep the
// listing valid take the incremental path, the others the full one. The
// first sequence turns every knob once, in order (then back, in order);
// the others are random.
func TestGoCacheDifferential(t *testing.T) {
	seeds := []int64{0, 1, 2}
	steps, rounds := 12, 2 // random steps, rounds through the knobs
	if raceEnabled {
		t.Skip("type-checks the module twice a step (72 s for one round under -race); make test's non-race pass runs it")
	}
	if testing.Short() {
		seeds, rounds = seeds[:1], 1
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			// The sequences share nothing: side by side, one's go
			// command and type-checking overlap the others' (seed 0 has
			// 36 of the 60 steps).
			t.Parallel()
			r := rand.New(rand.NewSource(seed))
			m := newEditModel()
			edit := func(step int) (string, bool) {
				if seed == 0 {
					return m.turn((step-1)%editKnobs, r, step)
				}
				return m.edit(r, step)
			}
			steps := steps
			if seed == 0 {
				steps = rounds * editKnobs
			}
			dir := t.TempDir()
			files := writeModel(t, dir, m, nil)
			c := NewGoCache()
			opts := GoOptions{Offline: true, Cache: c}
			if _, err := ExtractGo(dir, opts); err != nil {
				t.Fatal(err)
			}
			for step := 1; step <= steps; step++ {
				what, incremental := edit(step)
				files = writeModel(t, dir, m, files)
				deltas, fulls := c.Deltas(), c.Fulls()
				got, err := ExtractGo(dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				want, err := ExtractGo(dir, GoOptions{Offline: true})
				if err != nil {
					t.Fatal(err)
				}
				if want.Mode != ModeTyped {
					t.Fatalf("step %d (%s): fresh extraction %s: %v %v", step, what, want.Mode, want.LoadErrors, want.Fallbacks)
				}
				if diff := cmp.Diff(renderAll(want.Graph), renderAll(got.Graph)); diff != "" {
					t.Fatalf("step %d (%s): cached extraction differs from a fresh one (-fresh +cached):\n%s", step, what, diff)
				}
				if d := c.Deltas() - deltas; incremental && d != 1 || !incremental && c.Fulls()-fulls != 1 {
					t.Errorf("step %d (%s): incremental %v expected, got %d incremental, %d full", step, what, incremental,
						d, c.Fulls()-fulls)
				}
			}
		})
	}
}
