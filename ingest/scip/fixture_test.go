package scip

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	scippb "github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"
)

// The fixtures are written by hand, the way the real indexers write them
// (checked against scip-go 0.1.26 and scip-python 0.6.6 output): the Go
// one has no enclosing ranges and a package clause reference first in each
// document, the Python one has enclosing ranges and a module definition.
// testdata/scip/*.scip holds their bytes for the cli tests; -rewrite
// regenerates them.
var rewrite = flag.Bool("rewrite", false, "rewrite testdata/scip from the fixtures")

const (
	goPkg = "scip-go gomod example.com/m v1 `example.com/m`/"
	goFmt = "scip-go gomod github.com/golang/go/src go1.22 fmt/"
	pyPkg = "scip-python python p 1 `p`/"
)

func occ(line, start, end int32, sym string, def bool, enclosing ...int32) *scippb.Occurrence {
	o := &scippb.Occurrence{Range: []int32{line, start, end}, Symbol: sym, EnclosingRange: enclosing}
	if def {
		o.SymbolRoles = int32(scippb.SymbolRole_Definition)
	} else {
		o.SymbolRoles = int32(scippb.SymbolRole_ReadAccess)
	}
	return o
}

// goFixture is, as Go source:
//
//	a.go                          b.go
//	0 package m                   0 package m
//	2 import "fmt"                2 func B() {
//	4 func A() {                  3     T{}.M()
//	5     B()                     4     B()
//	6     fmt.Println()           5 }
//	7 }                           7 type I interface{ M() }
//	9 type T struct{}
//	10 func (T) M() {
//	11    A()
//	12 }
//
// Hand-derived: calls A→B, T.M→A, B→T.M (B→B is recursion, dropped);
// references B→T; implements T→I; a.go imports fmt (external).
func goFixture() *scippb.Index {
	return &scippb.Index{
		Metadata: &scippb.Metadata{ToolInfo: &scippb.ToolInfo{Name: "scip-go", Version: "0.1.26"}, ProjectRoot: "file:///src/m"},
		Documents: []*scippb.Document{{
			RelativePath: "a.go", Language: "go",
			Occurrences: []*scippb.Occurrence{
				occ(0, 8, 9, goPkg, false),
				occ(2, 8, 11, goFmt, false),
				occ(4, 5, 6, goPkg+"A().", true),
				occ(5, 1, 2, goPkg+"B().", false),
				occ(6, 1, 4, goFmt, false),
				occ(6, 5, 12, goFmt+"Println().", false),
				occ(9, 5, 6, goPkg+"T#", true),
				occ(10, 6, 7, goPkg+"T#", false),
				occ(10, 9, 10, goPkg+"T#M().", true),
				occ(11, 1, 2, goPkg+"A().", false),
			},
			Symbols: []*scippb.SymbolInformation{{Symbol: goPkg + "T#",
				Relationships: []*scippb.Relationship{{Symbol: goPkg + "I#", IsImplementation: true},
					{Symbol: goFmt + "Stringer#", IsImplementation: true}}}},
		}, {
			RelativePath: "b.go", Language: "go",
			Occurrences: []*scippb.Occurrence{
				occ(0, 8, 9, goPkg, false),
				occ(2, 5, 6, goPkg+"B().", true),
				occ(3, 1, 2, goPkg+"T#", false),
				occ(3, 5, 6, goPkg+"T#M().", false),
				occ(4, 1, 2, goPkg+"B().", false),
				occ(7, 5, 6, goPkg+"I#", true),
				occ(7, 18, 19, goPkg+"I#M.", true),
			},
		}},
	}
}

// pyFixture is p.py:
//
//	0 (module)
//	1 def f():
//	2     def g():
//	3         h()
//	4     h()
//	6 def h():
//	7     pass
//	8 h()
//
// Hand-derived callers of h: g (innermost enclosing), f, and the file.
func pyFixture() *scippb.Index {
	return &scippb.Index{
		Metadata: &scippb.Metadata{ToolInfo: &scippb.ToolInfo{Name: "scip-python", Version: "0.6.6"}, ProjectRoot: "file:///src/p"},
		Documents: []*scippb.Document{{
			RelativePath: "p.py", Language: "python",
			Occurrences: []*scippb.Occurrence{
				occ(0, 0, 0, pyPkg+"__init__:", true),
				occ(1, 4, 5, pyPkg+"f().", true, 1, 0, 4, 7),
				occ(2, 8, 9, pyPkg+"f().g().", true, 2, 4, 3, 11),
				occ(3, 8, 9, pyPkg+"h().", false),
				occ(4, 4, 5, pyPkg+"h().", false),
				occ(6, 4, 5, pyPkg+"h().", true, 6, 0, 7, 8),
				occ(8, 0, 1, pyPkg+"h().", false),
			},
		}},
	}
}

func emptyFixture() *scippb.Index {
	return &scippb.Index{Metadata: &scippb.Metadata{ToolInfo: &scippb.ToolInfo{Name: "scip-go", Version: "0.1.26"}}}
}

func marshal(t *testing.T, ix *scippb.Index) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeIndex(t *testing.T, ix *scippb.Index) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "index.scip")
	if err := os.WriteFile(p, marshal(t, ix), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFixtureFiles keeps testdata/scip equal to the fixtures.
func TestFixtureFiles(t *testing.T) {
	for name, ix := range map[string]*scippb.Index{"go.scip": goFixture(), "python.scip": pyFixture(), "empty.scip": emptyFixture()} {
		p := filepath.Join("..", "..", "testdata", "scip", name)
		want := marshal(t, ix)
		if *rewrite {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its fixture (go test ./ingest/scip -run FixtureFiles -rewrite)", p)
		}
	}
}
