package eval

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
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
