package engines

import (
	"testing"

	"github.com/memctl/memctl/snapshot"
)

// tieGraph: s uses a, b, c (weight 1: all three tie at δ). c is also used
// by x, y, z and b by x, so PageRank orders c > b > a, the reverse of node
// order.
var tieGraph = testGraph{
	keys: []string{"a", "b", "c", "s", "x", "y", "z"},
	edges: []testEdge{
		{3, 0, 1, 1}, {3, 1, 1, 1}, {3, 2, 1, 1},
		{4, 2, 1, 1}, {5, 2, 1, 1}, {6, 2, 1, 1}, {4, 1, 1, 1},
	},
}

func activatedKeys(t *testing.T, e *Engine, p ActivationParams) []string {
	t.Helper()
	got, err := e.Activate([]Seed{{node(t, e, "s"), 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, sc := range got {
		keys = append(keys, keyOf(t, e, sc.Node))
	}
	return keys
}

func TestActivationTiesByPageRank(t *testing.T) {
	p := DefaultActivationParams()
	// Without a stored PageRank: node order.
	plain := buildEngine(t, tieGraph)
	if got, want := activatedKeys(t, plain, p), []string{"s", "a", "b", "c"}; !equalStrings(got, want) {
		t.Errorf("no pagerank: %v, want %v", got, want)
	}
	// With it: the more central first.
	e, err := engineFromBytes(t, snapshotBytes(t, tieGraph, snapshot.WriterOptions{Extra: PageRankSection}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := activatedKeys(t, e, p), []string{"s", "c", "b", "a"}; !equalStrings(got, want) {
		t.Errorf("pagerank tie-break: %v, want %v", got, want)
	}
	// KeyPrefix keeps matching keys only, in the same order, and the top K
	// counts only them.
	p.KeyPrefix, p.TopK = "b", 1
	if got, want := activatedKeys(t, e, p), []string{"b"}; !equalStrings(got, want) {
		t.Errorf("key prefix b: %v, want %v", got, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
