package engines

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type affectedKey struct {
	Key      string
	Distance int
	Score    float64
}

func impactByKey(t *testing.T, e *Engine, as []Affected) []affectedKey {
	t.Helper()
	out := make([]affectedKey, len(as))
	for i, a := range as {
		out[i] = affectedKey{keyOf(t, e, a.Node), a.Distance, a.Score}
	}
	return out
}

// impactGraph: x uses y (1), w uses y (.5), y uses z (1), v uses x (1),
// u uses v (1); p -related- z (bidirectional); z uses q (1).
var impactGraph = testGraph{
	keys: []string{"p", "q", "u", "v", "w", "x", "y", "z"},
	edges: []testEdge{
		{5, 6, 1, 1}, {4, 6, 1, .5}, {6, 7, 1, 1}, {3, 5, 1, 1}, {2, 3, 1, 1},
		{7, 0, 2, 1}, {7, 1, 1, 1},
	},
}

func TestImpactHandComputed(t *testing.T) {
	e := buildEngine(t, impactGraph)
	z := node(t, e, "z")
	p := DefaultImpactParams()
	got, err := e.Impact(z, p)
	if err != nil {
		t.Fatal(err)
	}
	// In-edges of z: y (hop 1, .55). p is reached through the bidirectional
	// relation both ways (hop 1, .55). Hop 2: x (.3025), w (.15125). Hop 3:
	// v (.166375). u is at hop 4, beyond depth 3.
	want := []affectedKey{{"p", 1, .55}, {"y", 1, .55}, {"x", 2, .3025}, {"v", 3, .166375}, {"w", 2, .15125}}
	if d := cmp.Diff(want, impactByKey(t, e, got), approx); d != "" {
		t.Errorf("in (-want +got):\n%s", d)
	}
	p.Direction = DirectionOut
	got, err = e.Impact(z, p)
	if err != nil {
		t.Fatal(err)
	}
	want = []affectedKey{{"p", 1, .55}, {"q", 1, .55}}
	if d := cmp.Diff(want, impactByKey(t, e, got), approx); d != "" {
		t.Errorf("out (-want +got):\n%s", d)
	}
	p.Direction = DirectionBoth
	p.Depth = 1
	p.Relations = []uint32{1}
	got, err = e.Impact(z, p)
	if err != nil {
		t.Fatal(err)
	}
	want = []affectedKey{{"q", 1, .55}, {"y", 1, .55}}
	if d := cmp.Diff(want, impactByKey(t, e, got), approx); d != "" {
		t.Errorf("both, depth 1, uses (-want +got):\n%s", d)
	}
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
