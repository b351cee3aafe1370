package engines

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/roles"
)

type affectedKey struct {
	Key      string
	Distance int
	Score    float64
	Owner    bool
}

func impactByKey(t *testing.T, e *Engine, as []Affected) []affectedKey {
	t.Helper()
	out := make([]affectedKey, len(as))
	for i, a := range as {
		out[i] = affectedKey{keyOf(t, e, a.Node), a.Distance, a.Score, a.Owner}
	}
	return out
}

// impactGraph is a small code tree. pkg contains files fA, fB; fA contains
// S and T (siblings), fB contains U, fX contains X and Y. Usage: X uses S
// (1), Y uses S (.5), Z uses X (1), T uses U (1), Q uses T (1). History: S
// co fB. Relations: 1 uses (usage), 4 contains (structure, bidirectional
// as ingest registers it), 5 co (history, bidirectional).
var impactGraph = testGraph{
	keys: []string{"pkg", "fA", "fB", "S", "T", "U", "X", "Y", "Z", "fX", "Q"},
	rels: []testRel{{1, "uses", false, false, roles.Usage}, {4, "contains", true, false, roles.Structure}, {5, "co", true, false, roles.History}},
	edges: []testEdge{
		{0, 1, 4, 1}, {0, 2, 4, 1}, {1, 3, 4, 1}, {1, 4, 4, 1}, {2, 5, 4, 1}, {9, 6, 4, 1}, {9, 7, 4, 1},
		{6, 3, 1, 1}, {7, 3, 1, .5}, {8, 6, 1, 1}, {4, 5, 1, 1}, {10, 4, 1, 1},
		{3, 2, 5, 1},
	},
}

func TestImpactHandComputed(t *testing.T) {
	e := buildEngine(t, impactGraph)
	p := DefaultImpactParams()
	run := func(key string, p ImpactParams) []affectedKey {
		t.Helper()
		got, err := e.Impact(node(t, e, key), p)
		if err != nil {
			t.Fatal(err)
		}
		return impactByKey(t, e, got)
	}
	// A symbol: its dependents (X .55, Y .5 × .55), lifted to their owners
	// (fX: .55² + .275 × .55), and its own owners (fA, then pkg), never
	// down to its sibling T or T's user Q. Dependents before owners at
	// each distance.
	want := []affectedKey{
		{"X", 1, .55, false}, {"Y", 1, .275, false}, {"fA", 1, .55, true},
		{"Z", 2, .3025, false}, {"fX", 2, .45375, true}, {"pkg", 2, .3025, true},
	}
	if d := cmp.Diff(want, run("S", p), approx); d != "" {
		t.Errorf("impact S (-want +got):\n%s", d)
	}
	// A file: the dependents of everything it contains (X, Q tie at .55;
	// X first: it has a dependent of its own, Q none), its owner pkg.
	want = []affectedKey{
		{"X", 1, .55, false}, {"Q", 1, .55, false}, {"Y", 1, .275, false}, {"pkg", 1, .55, true},
		{"Z", 2, .3025, false}, {"fX", 2, .45375, true},
	}
	if d := cmp.Diff(want, run("fA", p), approx); d != "" {
		t.Errorf("impact fA (-want +got):\n%s", d)
	}
	// Depth 1 cuts at the first hop.
	p.Depth = 1
	want = []affectedKey{{"X", 1, .55, false}, {"Y", 1, .275, false}, {"fA", 1, .55, true}}
	if d := cmp.Diff(want, run("S", p), approx); d != "" {
		t.Errorf("impact S depth 1 (-want +got):\n%s", d)
	}
	// Out: what T depends on (U), with the owners of both.
	p = DefaultImpactParams()
	p.Direction = DirectionOut
	want = []affectedKey{{"U", 1, .55, false}, {"fA", 1, .55, true}, {"pkg", 2, .3025, true}, {"fB", 2, .3025, true}}
	if d := cmp.Diff(want, run("T", p), approx); d != "" {
		t.Errorf("impact T out (-want +got):\n%s", d)
	}
	// History is walked only when named, both ways, and nothing else then.
	p = DefaultImpactParams()
	p.Relations = []uint32{5}
	want = []affectedKey{{"fB", 1, .55, false}}
	if d := cmp.Diff(want, run("S", p), approx); d != "" {
		t.Errorf("impact S --rel co (-want +got):\n%s", d)
	}
	z := node(t, e, "S")
	for name, q := range map[string]ImpactParams{
		"depth0": {Depth: 0, Decay: .5},
		"decay2": {Depth: 3, Decay: 2},
		"dir":    {Depth: 3, Decay: .5, Direction: 7},
	} {
		if _, err := e.Impact(z, q); !isInvalid(err) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestResolveOrigin(t *testing.T) {
	e := buildEngine(t, testGraph{keys: []string{"sym:bufio.Reader", "sym:io.Reader", "sym:io.ReaderAt", "sym:io.Writer"}, rels: defaultRels})
	for q, want := range map[string]string{"sym:io.Reader": "sym:io.Reader", "io.Reader": "sym:io.Reader", "sym:io.R": "sym:io.Reader", "io.Writr": "sym:io.Writer"} {
		n, matches, err := e.ResolveOrigin(q)
		if err != nil || len(matches) == 0 {
			t.Fatalf("%q: %v, %v", q, matches, err)
		}
		if got := keyOf(t, e, n); got != want {
			t.Errorf("ResolveOrigin(%q) = %s, want %s", q, got, want)
		}
	}
	if _, matches, err := e.ResolveOrigin("zzzzzz"); err != nil || len(matches) != 0 {
		t.Errorf("no match: %v, %v", matches, err)
	}
}
