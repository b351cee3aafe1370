package engines

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRelatedFeedbackHandComputed checks the overlay's effect on codeGraph
// against a ranking worked by hand (SPEC.md §8.2.2).
func TestRelatedFeedbackHandComputed(t *testing.T) {
	e := buildEngine(t, codeGraph)
	F, G, H, s2 := node(t, e, "F"), node(t, e, "G"), node(t, e, "H"), node(t, e, "s2")
	p := relatedNoTime()
	p.Depth = 1
	// Without feedback, one step from F: s1, s2 1 each, H .3×.5 = .15
	// (S(F) = 2.15); G is not reached.
	k := 2.15
	want := []keyed{{"F", 1}, {"s1", 1 / k}, {"s2", 1 / k}, {"H", .15 / k}}
	got, err := e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, byKey(t, e, got), approx); d != "" {
		t.Fatalf("no feedback (-want +got):\n%s", d)
	}

	// G found useful for F (W .6, φ .5: link strength .3) joins F's
	// edges: S(F) = 2.45, and G (.3) now ranks above H (.15). s2 found
	// useless (W −.8) keeps its share of the walk but scores × .2, below G.
	p.Feedback = Feedback{F: {{Node: G, W: .6}, {Node: s2, W: -.8}}}
	p.FeedbackWeight = .5
	k = 2.45
	want = []keyed{{"F", 1}, {"s1", 1 / k}, {"G", .3 / k}, {"s2", .2 / k}, {"H", .15 / k}}
	got, err = e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, byKey(t, e, got), approx); d != "" {
		t.Errorf("feedback (-want +got):\n%s", d)
	}

	// Depth 2: G's mass goes on along its edge to t1 (contains, 1: all of
	// it), and H's back to F.
	p.Depth = 2
	got, err = e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	scores := map[string]float64{}
	for _, r := range byKey(t, e, got) {
		scores[r.Key] = r.Score
	}
	// t1 gets .3/k from G and (1/k) × .2 from s1 (calls .25 of s1's 1.25).
	if w := .3/k + .2/k; math.Abs(scores["t1"]-w) > 1e-12 {
		t.Errorf("depth 2: t1 = %v, want %v", scores["t1"], w)
	}

	// Links of a node that is not a seed are not walked.
	p.Depth = 1
	p.Feedback = Feedback{H: {{Node: G, W: 1}}}
	got, err = e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]keyed{{"F", 1}, {"s1", 1 / 2.15}, {"s2", 1 / 2.15}, {"H", .15 / 2.15}}, byKey(t, e, got), approx); d != "" {
		t.Errorf("non-seed links (-want +got):\n%s", d)
	}
}

func TestRelatedFeedbackInvalid(t *testing.T) {
	e := buildEngine(t, codeGraph)
	F := node(t, e, "F")
	for name, p := range map[string]func(*RelatedParams){
		"strength above 1": func(p *RelatedParams) { p.Feedback = Feedback{F: {{Node: F + 1, W: 1.5}}} },
		"NaN strength":     func(p *RelatedParams) { p.Feedback = Feedback{F: {{Node: F + 1, W: math.NaN()}}} },
		"item out of range": func(p *RelatedParams) {
			p.Feedback = Feedback{F: {{Node: 99, W: .5}}}
		},
		"negative weight": func(p *RelatedParams) { p.Feedback = Feedback{F: {{Node: F + 1, W: .5}}}; p.FeedbackWeight = -1 },
	} {
		q := relatedNoTime()
		p(&q)
		if _, err := e.Related([]Seed{{F, 1}}, q); !isInvalid(err) {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}
}
