package eval

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/scip"
	scippb "github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"
)

// baseTree: Base is called by A, B and C; D calls A; F and G call nothing.
// Line numbers (0-based) are those of baseIndex.
var baseTree = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.21\n",
	"m.go": "package m\n" + // 0
		"\n" +
		"func Base() int { return 1 }\n" + // 2
		"\n" +
		"func A() int { return Base() }\n" + // 4
		"\n" +
		"func B() int { return Base() }\n" + // 6
		"\n" +
		"func C() int { return Base() }\n" + // 8
		"\n" +
		"func D() int { return A() }\n" + // 10
		"\n" +
		"func F() int { return 0 }\n" + // 12
		"\n" +
		"func G() int { return 0 }\n", // 14
}

const mPkg = "scip-go gomod example.com/m v1 `example.com/m`/"

func ref(line, start, end int32, sym string, def bool) *scippb.Occurrence {
	o := &scippb.Occurrence{Range: []int32{line, start, end}, Symbol: sym, SymbolRoles: int32(scippb.SymbolRole_ReadAccess)}
	if def {
		o.SymbolRoles = int32(scippb.SymbolRole_Definition)
	}
	return o
}

// baseIndex is a hand-written index of baseTree, in scip-go 0.1.26's form
// (no enclosing ranges: a reference belongs to the definition before it).
// It is the truth, and it disagrees with the source on purpose: it says F
// and G reference Base too, and it defines Ghost (at a line where the tree
// declares nothing), referenced by A, B, C, D and F.
func baseIndex() *scippb.Index {
	return &scippb.Index{
		Metadata: &scippb.Metadata{ToolInfo: &scippb.ToolInfo{Name: "scip-go", Version: "0.1.26"}, ProjectRoot: "file:///m"},
		Documents: []*scippb.Document{{
			RelativePath: "m.go", Language: "go",
			Occurrences: []*scippb.Occurrence{
				ref(0, 8, 9, mPkg, false),
				ref(2, 5, 9, mPkg+"Base().", true),
				ref(4, 5, 6, mPkg+"A().", true),
				ref(4, 7, 8, mPkg+"Ghost().", false),
				ref(4, 22, 26, mPkg+"Base().", false),
				ref(6, 5, 6, mPkg+"B().", true),
				ref(6, 7, 8, mPkg+"Ghost().", false),
				ref(6, 22, 26, mPkg+"Base().", false),
				ref(8, 5, 6, mPkg+"C().", true),
				ref(8, 7, 8, mPkg+"Ghost().", false),
				ref(8, 22, 26, mPkg+"Base().", false),
				ref(10, 5, 6, mPkg+"D().", true),
				ref(10, 7, 8, mPkg+"Ghost().", false),
				ref(10, 22, 23, mPkg+"A().", false),
				ref(12, 5, 6, mPkg+"F().", true),
				ref(12, 7, 8, mPkg+"Ghost().", false),
				ref(12, 22, 26, mPkg+"Base().", false),
				ref(14, 5, 6, mPkg+"G().", true),
				ref(14, 22, 26, mPkg+"Base().", false),
				ref(16, 5, 10, mPkg+"Ghost().", true),
			},
		}},
	}
}

// Hand-derived: the scored symbols are Base (dependents A, B, C, F, G:
// k = 5) and Ghost (A, B, C, D, F); A has one dependent and is not scored.
// Impact of Base reaches A, B, C (callers) and D (through A): 3 of its
// first 5 symbol answers are dependents, 0.6. Ghost has no node: 0. The
// graph holds 3 of Base's 5 dependents directly, 0.6, and none of
// Ghost's.
func TestImpactAgainstSCIP(t *testing.T) {
	g, _, err := BuildCode(writeTree(t, baseTree), codetree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(baseIndex())
	if err != nil {
		t.Fatal(err)
	}
	ix, err := scip.Parse("base.scip", b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ImpactAgainstSCIP(g, ix, 5, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if res.Symbols != 2 || res.Unmatched != 1 || res.Dependents != 10 || !near(res.Mean, 0.3) || res.Min != 0 ||
		res.Perfect != 0 || !near(res.InGraph.Mean, 0.3) || res.Truth != "scip" || res.Worst != mPkg+"Ghost()." {
		t.Errorf("got %+v", res)
	}
	// Two scores, 0 and 0.6: the resampled means are 0, 0.3 and 0.6, the
	// extremes each with probability 1/4.
	if res.Precision.Lo != 0 || !near(res.Precision.Hi, 0.6) {
		t.Errorf("interval %v, want [0, 0.6]", res.Precision)
	}
	// The self-referential score of the same graph is perfect: the truth
	// matters.
	self, err := ImpactPrecision(g, 3, 0, nil)
	if err != nil || self.Mean != 1 || self.Truth != "graph" {
		t.Errorf("self-referential: %+v, %v", self, err)
	}
	if _, err := ImpactAgainstSCIP(g, ix, 6, 0, nil); !errors.Is(err, ErrNothingToScore) {
		t.Errorf("min 6: %v", err)
	}
}

func TestImpactSCIPBadIndex(t *testing.T) {
	dir := writeTree(t, baseTree)
	bad := filepath.Join(t.TempDir(), "bad.scip")
	if err := os.WriteFile(bad, []byte("not an index"), 0o644); err != nil {
		t.Fatal(err)
	}
	var fe *scip.FormatError
	if _, err := Impact(dir, ImpactOptions{Index: bad}); !errors.As(err, &fe) {
		t.Errorf("garbage index: %v", err)
	}
}
