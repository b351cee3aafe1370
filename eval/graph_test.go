package eval

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	scippb "github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"
)

// The index is testdata/scip/go.scip (ingest/scip's goFixture): functions
// A (a.go:5), B (b.go:3), T.M (a.go:11); callers T.M→A, A→B, B→T.M;
// T implements I (b.go:8).
const goIndex = "../testdata/scip/go.scip"

const (
	scipPkg = "scip-go gomod example.com/m v1 `example.com/m`/"
	mkey    = "sym:example.com/m."
)

// A memctl graph with one caller missed (T.M→A), one extra (A→T.M), a
// function the index does not have (X) and no I: the answers below follow
// by hand from the two.
func TestGraphScores(t *testing.T) {
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sym := func(name, kind, path string, line int) lmdbstore.NodePut {
		return lmdbstore.NodePut{Key: mkey + name, Type: ingest.TypeSymbol, Payload: ingest.MustJSON(ingest.SymbolPayload{
			Package: "example.com/m", Name: name[len(name)-1:], Kind: kind, Path: path, LineStart: line, LineEnd: line + 2})}
	}
	_, err = s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		for _, n := range []lmdbstore.NodePut{sym("A", "func", "a.go", 5), sym("B", "func", "b.go", 3),
			sym("T", "type", "a.go", 10), sym("T.M", "method", "a.go", 11), sym("X", "func", "a.go", 20)} {
			if err := tx.PutNode(n); err != nil {
				return err
			}
		}
		for _, e := range [][2]string{{"A", "B"}, {"B", "T.M"}, {"A", "T.M"}} {
			if err := tx.PutEdge(lmdbstore.EdgePut{Src: mkey + e[0], Rel: ingest.RelCalls, Dst: mkey + e[1]}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Graph(s, GraphOptions{Dir: "m", Index: goIndex})
	if err != nil {
		t.Fatal(err)
	}
	res.Seconds = 0
	want := &GraphResult{Eval: "graph", Dir: "m", Index: goIndex, Tool: "scip-go", ToolVersion: "0.1.26", Documents: 2,
		Functions: 3, Matched: 3, MemctlFunctions: 4, UnmatchedSCIP: []string{}, UnmatchedMemctl: []string{mkey + "X"},
		Callers: PairScore{SCIP: 3, Memctl: 3, Found: 2, Recall: 2.0 / 3, Precision: 2.0 / 3,
			Missed: []Pair{{mkey + "T.M", mkey + "A"}}, Unmatched: []Pair{}, Extra: []Pair{{mkey + "A", mkey + "T.M"}}},
		ModuleCallers: PairScore{Missed: []Pair{}, Unmatched: []Pair{}, Extra: []Pair{}},
		Called:        3, NoCallers: 1, NoCallerOf: []string{scipPkg + "A()."},
		Implements: PairScore{SCIP: 1, Unmatched: []Pair{{mkey + "T", scipPkg + "I#"}}, Missed: []Pair{}, Extra: []Pair{}},
	}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("eval graph (-want +got):\n%s", d)
	}
}

// testdata/scip/python.scip: h (p.py:7) is called by the nested g, by f
// and at module level. memctl has f and h, f→h and file→h, but no g.
func TestGraphNestedAndModuleLevel(t *testing.T) {
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		for name, line := range map[string]int{"f": 2, "h": 7} {
			if err := tx.PutNode(lmdbstore.NodePut{Key: "sym:py:p." + name, Type: ingest.TypeSymbol, Payload: ingest.MustJSON(ingest.SymbolPayload{
				Package: "p", Name: name, Kind: "func", Path: "p.py", LineStart: line, LineEnd: line + 1})}); err != nil {
				return err
			}
		}
		for _, src := range []string{"sym:py:p.f", "file:p.py"} {
			if err := tx.PutEdge(lmdbstore.EdgePut{Src: src, Rel: ingest.RelCalls, Dst: "sym:py:p.h"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Graph(s, GraphOptions{Dir: "p", Index: "../testdata/scip/python.scip"})
	if err != nil {
		t.Fatal(err)
	}
	const g = "scip-python python p 1 `p`/f().g()."
	if d := cmp.Diff(PairScore{SCIP: 2, Memctl: 1, Found: 1, Recall: 0.5, Precision: 1,
		Missed: []Pair{}, Unmatched: []Pair{{g, "sym:py:p.h"}}, Extra: []Pair{}}, res.Callers); d != "" {
		t.Errorf("callers (-want +got):\n%s", d)
	}
	if d := cmp.Diff(PairScore{SCIP: 1, Memctl: 1, Found: 1, Recall: 1, Precision: 1,
		Missed: []Pair{}, Unmatched: []Pair{}, Extra: []Pair{}}, res.ModuleCallers); d != "" {
		t.Errorf("module callers (-want +got):\n%s", d)
	}
	if res.Functions != 3 || res.Matched != 2 || !cmp.Equal(res.UnmatchedSCIP, []string{g}) || res.Called != 1 || res.NoCallers != 0 {
		t.Errorf("functions %d matched %d unmatched %v called %d none %d", res.Functions, res.Matched, res.UnmatchedSCIP, res.Called, res.NoCallers)
	}
}

// scip-python names same-named functions nested in different methods of a
// class alike (`C#inner().`): each definition is matched on its own, and a
// use belongs to the definition around it. The source, 0-based lines:
//
//	0 class C:
//	1     def m1(self):
//	2         def inner():
//	3             h()
//	4         inner()
//	5     def m2(self):
//	6         def inner():
//	7             h()
//	8         inner()
//	9 def h():
//	10    pass
//
// Hand-derived callers: m1→m1.inner, m2→m2.inner, m1.inner→h, m2.inner→h;
// memctl below has all four.
func TestGraphSymbolDefinedTwice(t *testing.T) {
	const pkg = "scip-python python p 1 `p`/"
	occ := func(line, start, end int32, sym string, def bool, enclosing ...int32) *scippb.Occurrence {
		o := &scippb.Occurrence{Range: []int32{line, start, end}, Symbol: sym, EnclosingRange: enclosing}
		if def {
			o.SymbolRoles = int32(scippb.SymbolRole_Definition)
		}
		return o
	}
	ix := &scippb.Index{
		Metadata: &scippb.Metadata{ToolInfo: &scippb.ToolInfo{Name: "scip-python", Version: "0.6.6"}},
		Documents: []*scippb.Document{{RelativePath: "p.py", Language: "python", Occurrences: []*scippb.Occurrence{
			occ(0, 6, 7, pkg+"C#", true, 0, 0, 8, 15),
			occ(1, 8, 10, pkg+"C#m1().", true, 1, 4, 4, 15),
			occ(2, 12, 17, pkg+"C#inner().", true, 2, 8, 3, 15),
			occ(3, 12, 13, pkg+"h().", false),
			occ(4, 8, 13, pkg+"C#inner().", false),
			occ(5, 8, 10, pkg+"C#m2().", true, 5, 4, 8, 15),
			occ(6, 12, 17, pkg+"C#inner().", true, 6, 8, 7, 15),
			occ(7, 12, 13, pkg+"h().", false),
			occ(8, 8, 13, pkg+"C#inner().", false),
			occ(9, 4, 5, pkg+"h().", true, 9, 0, 10, 8),
		}}},
	}
	b, err := proto.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(t.TempDir(), "p.scip")
	if err := os.WriteFile(index, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	syms := []struct {
		key, name, kind string
		start, end      int
	}{{"C", "C", "class", 1, 9}, {"C.m1", "m1", "method", 2, 5}, {"C.m1.inner", "inner", "func", 3, 4},
		{"C.m2", "m2", "method", 6, 9}, {"C.m2.inner", "inner", "func", 7, 8}, {"h", "h", "func", 10, 11}}
	_, err = s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		for _, n := range syms {
			if err := tx.PutNode(lmdbstore.NodePut{Key: "sym:py:p." + n.key, Type: ingest.TypeSymbol, Payload: ingest.MustJSON(ingest.SymbolPayload{
				Package: "p", Name: n.name, Kind: n.kind, Path: "p.py", LineStart: n.start, LineEnd: n.end})}); err != nil {
				return err
			}
		}
		for _, e := range [][2]string{{"C.m1", "C.m1.inner"}, {"C.m2", "C.m2.inner"}, {"C.m1.inner", "h"}, {"C.m2.inner", "h"}} {
			if err := tx.PutEdge(lmdbstore.EdgePut{Src: "sym:py:p." + e[0], Rel: ingest.RelCalls, Dst: "sym:py:p." + e[1]}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Graph(s, GraphOptions{Dir: "p", Index: index})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(PairScore{SCIP: 4, Memctl: 4, Found: 4, Recall: 1, Precision: 1,
		Missed: []Pair{}, Unmatched: []Pair{}, Extra: []Pair{}}, res.Callers); d != "" {
		t.Errorf("callers (-want +got):\n%s", d)
	}
	if !cmp.Equal(res.UnmatchedMemctl, []string{}) {
		t.Errorf("unmatched memctl functions %v", res.UnmatchedMemctl)
	}
}
