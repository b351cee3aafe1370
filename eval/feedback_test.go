package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
)

// TestCochangeFeedback: the replay feeds back each scored commit (and the
// warm-up), the store-backed variant answers exactly as the in-memory one
// with the same rates, the baseline is added, and the intervals hold their
// means.
func TestCochangeFeedback(t *testing.T) {
	r, _ := history(t)
	work := t.TempDir()
	p := ops.DefaultFeedbackParams()
	var queries []Query
	opts := Options{Commits: 2, Predictors: []Predictor{Lexical()}, Work: work, Trace: func(q Query) { queries = append(queries, q) },
		Feedback: &FeedbackOptions{Variants: []ops.FeedbackParams{p, p}, Warmup: 1}}
	rep, err := Cochange(r.dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range rep.Scores {
		names = append(names, s.Predictor)
	}
	twin := feedbackName(1, p)
	if d := cmp.Diff([]string{"lexical", "activate", "feedback", twin}, names); d != "" {
		t.Errorf("predictors (-want +got):\n%s", d)
	}
	for _, q := range queries {
		if d := cmp.Diff(q.Answers["feedback"], q.Answers[twin]); d != "" {
			t.Errorf("%s %s: store and memory variants differ:\n%s", q.Commit, q.File, d)
		}
	}
	if len(rep.Feedback) != 2 {
		t.Fatalf("feedback scores: %+v", rep.Feedback)
	}
	for _, f := range rep.Feedback {
		for _, iv := range []Interval{f.Recall, f.Hit, f.DRecall, f.DHit, f.BaseRecall, f.BaseH} {
			if iv.Lo > iv.Mean+1e-12 || iv.Hi < iv.Mean-1e-12 {
				t.Errorf("%s: interval %v does not hold its mean", f.Predictor, iv)
			}
		}
	}
	// Warm-up (xz) and the two replayed commits (xy 2, xy 3): three
	// feedback revisions; x.go learnt y.go.
	s, err := lmdbstore.Open(work+"/store", lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(func(rt *lmdbstore.ReadTxn) error {
		o, err := ops.ReadFeedback(rt, lmdbstore.At{})
		if err != nil {
			return err
		}
		if o.Clock != 3 || o.Strength("file:x.go", "file:y.go", p) <= 0 || o.Strength("file:x.go", "file:z.go", p) <= 0 {
			t.Errorf("overlay: clock %d, pairs %v", o.Clock, o.Pairs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
