package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImpactJSON checks the blast radius of pkg/d.go in the fixture: its
// dependents within 3 hops with distance and score (SPEC §8.5).
func TestImpactJSON(t *testing.T) {
	snap := writeFixture(t, false)
	got := jsonLines(t, ok(t, "--json", "impact", "--snapshot", snap, "pkg/d.go"))
	want := []map[string]any{
		{"key": "pkg/c.go", "distance": n("1"), "score": n("0.55")},
		{"key": "pkg/a.go", "distance": n("2"), "score": n("0.07562500000000001")},
		{"key": "pkg/b.go", "distance": n("2"), "score": n("0.15125000000000002")},
		{"key": "pkg/e.go", "distance": n("3"), "score": n("0.04159375000000001")},
	}
	// Order: score descending.
	want[1], want[2] = want[2], want[1]
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
