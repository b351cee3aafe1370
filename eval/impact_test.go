package eval

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ingest"
)

// shapeTree is a small Go module: an interface, its three implementers, four
// functions that use it, and unrelated siblings declared in the same file.
var shapeTree = map[string]string{
	"go.mod": "module example.com/shape\n\ngo 1.21\n",
	"shape.go": `package shape

type Shape interface{ Area() float64 }

type Sq struct{ s float64 }

func (q Sq) Area() float64 { return q.s * q.s }

type Circle struct{ r float64 }

func (c Circle) Area() float64 { return 3 * c.r * c.r }

func Total(ss []Shape) float64 {
	t := 0.0
	for _, s := range ss {
		t += s.Area()
	}
	return t
}

func Largest(ss []Shape) Shape {
	var best Shape
	for _, s := range ss {
		if best == nil || s.Area() > best.Area() {
			best = s
		}
	}
	return best
}

func Helper1() int { return 1 }

func Helper2() int { return Helper1() + 1 }

const Pi = 3

var Count = Helper2()
`,
	"use.go": `package shape

import "fmt"

func Describe(s Shape) string { return fmt.Sprint(s.Area()) }

func Sum(a, b Shape) float64 { return a.Area() + b.Area() }
`,
	"tri.go": `package shape

type Tri struct{ b, h float64 }

func (t Tri) Area() float64 { return t.b * t.h / 2 }
`,
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestImpactOfInterfaceOnIngestedTree: impact of an interface lists its
// implementers and users before anything else, never its file's other
// declarations, and lifts the change to its file and package.
func TestImpactOfInterfaceOnIngestedTree(t *testing.T) {
	g, err := BuildGo(writeTree(t, shapeTree), ingest.WalkOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engines.New(g)
	if err != nil {
		t.Fatal(err)
	}
	origin, _, err := e.ResolveOrigin("shape.Shape")
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := g.Key(origin); k != "sym:example.com/shape.Shape" {
		t.Fatalf("shape.Shape resolved to %s", k)
	}
	as, err := e.Impact(origin, engines.DefaultImpactParams())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, a := range as {
		k, _ := g.Key(a.Node)
		keys = append(keys, k)
	}
	want := []string{ // implementers and users, read off the source above
		"sym:example.com/shape.Circle", "sym:example.com/shape.Describe", "sym:example.com/shape.Largest",
		"sym:example.com/shape.Sq", "sym:example.com/shape.Sum", "sym:example.com/shape.Total", "sym:example.com/shape.Tri",
	}
	if len(keys) < len(want) {
		t.Fatalf("impact: %v", keys)
	}
	first := append([]string(nil), keys[:len(want)]...)
	sort.Strings(first)
	for i := range want {
		if first[i] != want[i] {
			t.Fatalf("first %d results %v, want %v (all: %v)", len(want), first, want, keys)
		}
	}
	pos := map[string]int{}
	for i, k := range keys {
		pos[k] = i
	}
	for _, sibling := range []string{"Helper1", "Helper2", "Pi", "Count"} {
		if i, ok := pos["sym:example.com/shape."+sibling]; ok {
			t.Errorf("sibling %s affected (at %d): %v", sibling, i, keys)
		}
	}
	for _, owner := range []string{"file:shape.go", "pkg:example.com/shape"} {
		if _, ok := pos[owner]; !ok {
			t.Errorf("owner %s not affected: %v", owner, keys)
		}
	}

	// The evaluation on the same tree: Shape is the one symbol with ≥ 5
	// direct usage dependents (7), all of them first.
	res, err := ImpactPrecision(g, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Symbols != 1 || res.Mean != 1 || res.Perfect != 1 {
		t.Errorf("ImpactPrecision = %+v, want 1 symbol at 1.0", res)
	}
	// With a threshold of 1, the siblings Helper1/Helper2 (one dependent
	// each) are scored too, and still perfect.
	res, err = ImpactPrecision(g, 1, 0, nil)
	if err != nil || res.Symbols < 3 || res.Mean != 1 {
		t.Errorf("ImpactPrecision(min 1) = %+v, %v", res, err)
	}
}
