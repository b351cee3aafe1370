package eval

// `eval cochange --feedback` (SPEC.md §11.4): does use teach the ranking?
// After each replayed commit, the files it changed together are fed back
// as useful for each other (one feedback revision per commit); later
// commits are scored by the related ranking reading the overlay, beside
// the same ranking without it, with bootstrap intervals over commits.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
)

// FeedbackOptions turns the feedback replay on.
type FeedbackOptions struct {
	// Variants are the overlay's rates to score, one predictor each. The
	// first is written to the work store (ops.Feedback) and read back at
	// each parent (ops.ReadFeedback); the others are kept in memory by the
	// same update (ops.FeedbackOverlay.Apply), so one run scores a grid.
	Variants []ops.FeedbackParams
	// Warmup feeds back this many qualifying commits older than the
	// window first, without scoring them (they need no memory).
	Warmup int
	// Baseline is the predictor the variants are compared with
	// ("activate" when empty); it is added to the run when missing.
	Baseline string
	// Bootstrap is the number of resamples of the intervals (default 2000).
	Bootstrap int
}

// FeedbackScore is one variant against the baseline over the same
// queries.
type FeedbackScore struct {
	Predictor         string
	Params            ops.FeedbackParams
	Recall, Hit       Interval // the variant's
	DRecall, DHit     Interval // variant − baseline, paired by query
	BaseRecall, BaseH Interval // the baseline's
}

// feedbackName is the predictor name of variant i.
func feedbackName(i int, p ops.FeedbackParams) string {
	if i == 0 {
		return "feedback"
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return "feedback-r" + f(p.Rate) + "-h" + f(p.HalfLife) + "-w" + f(p.Weight)
}

// feedbackReplay is the state of one run's replay.
type feedbackReplay struct {
	opts    FeedbackOptions
	hitK    int
	names   []string               // predictor name per variant
	mem     []*ops.FeedbackOverlay // per variant (index 0 unused: the store holds it)
	store   *lmdbstore.Store
	perCom  map[string]map[string][2]float64 // commit → predictor → Σ recall, Σ hit
	queries map[string]int                   // commit → queries
	order   []string                         // commits in replay order
}

// setupFeedback adds the variants' predictors (and the baseline) to opts
// and collects every query's scores through opts.Trace.
func setupFeedback(opts *Options) (*feedbackReplay, error) {
	fo := *opts.Feedback
	if len(fo.Variants) == 0 {
		fo.Variants = []ops.FeedbackParams{ops.DefaultFeedbackParams()}
	}
	if fo.Baseline == "" {
		fo.Baseline = "activate"
	}
	if fo.Bootstrap == 0 {
		fo.Bootstrap = 2000
	}
	if fo.Warmup < 0 {
		return nil, fmt.Errorf("%w: feedback warm-up must be >= 0", ErrInvalid)
	}
	fr := &feedbackReplay{opts: fo, hitK: opts.HitK, perCom: map[string]map[string][2]float64{}, queries: map[string]int{}}
	if !slices.ContainsFunc(opts.Predictors, func(p Predictor) bool { return p.Name == fo.Baseline }) {
		base, err := PickPredictors([]string{fo.Baseline})
		if err != nil {
			return nil, fmt.Errorf("%w: feedback baseline: %v", ErrInvalid, err)
		}
		opts.Predictors = append(opts.Predictors, base...)
	}
	for i, v := range fo.Variants {
		if _, err := (&ops.FeedbackOverlay{Pairs: map[string]map[string]ops.FeedbackEntry{}}).Apply(
			[]ops.FeedbackRequest{{Target: "a", Useful: []string{"b"}}}, v); err != nil {
			return nil, fmt.Errorf("%w: feedback variant %d: %v", ErrInvalid, i+1, err)
		}
		name := feedbackName(i, v)
		if slices.Contains(fr.names, name) {
			return nil, fmt.Errorf("%w: feedback variant %s given twice", ErrInvalid, name)
		}
		fr.names = append(fr.names, name)
		fr.mem = append(fr.mem, ops.NewFeedbackOverlay())
		opts.Predictors = append(opts.Predictors, fr.predictor(i))
	}
	trace := opts.Trace
	opts.Trace = func(q Query) {
		if _, ok := fr.perCom[q.Commit]; !ok {
			fr.perCom[q.Commit] = map[string][2]float64{}
			fr.order = append(fr.order, q.Commit)
		}
		fr.queries[q.Commit]++
		for name, got := range q.Answers {
			r, h := recallHit(got, q.Want, fr.hitK)
			s := fr.perCom[q.Commit][name]
			fr.perCom[q.Commit][name] = [2]float64{s[0] + r, s[1] + h}
		}
		if trace != nil {
			trace(q)
		}
	}
	return fr, nil
}

// predictor is variant i: memctl's answer (Activate) reading the overlay.
func (fr *feedbackReplay) predictor(i int) Predictor {
	p := fr.opts.Variants[i]
	doc := fmt.Sprintf("activate reading the feedback overlay (rate %g, half-life %g, weight %g)", p.Rate, p.HalfLife, p.Weight)
	if i == 0 {
		doc += ", through the store"
	}
	return Predictor{
		Name: fr.names[i],
		Doc:  doc,
		Open: func(m *Memory) (Ranker, error) {
			o := fr.mem[i]
			if i == 0 {
				err := m.Store.View(func(r *lmdbstore.ReadTxn) error {
					var err error
					o, err = ops.ReadFeedback(r, lmdbstore.At{})
					return err
				})
				if err != nil {
					return nil, err
				}
			}
			return func(file string) ([]string, error) {
				n, ok := m.FileNode(file)
				if !ok {
					return nil, nil
				}
				seeds := []engines.Seed{{Node: n, Score: 1}}
				rp := engines.DefaultRelatedParams()
				rp.TopK, rp.Kind = 0, "file"
				rp.FeedbackWeight = p.Weight
				var err error
				if rp.Feedback, err = o.Links(m.Graph, seeds, p); err != nil {
					return nil, err
				}
				rs, err := m.Engine.Related(seeds, rp)
				if err != nil {
					return nil, err
				}
				var out []string
				for _, r := range rs {
					if f, ok := m.FilePath(r.Node); ok && !strings.EqualFold(f, file) {
						out = append(out, f)
					}
				}
				return out, nil
			}, nil
		},
	}
}

// start clears the work store's overlay (a reused --work directory keeps
// one from an earlier run) and feeds back the warm-up commits.
func (fr *feedbackReplay) start(s *lmdbstore.Store, repo *Repo, window []Commit, opts Options) error {
	fr.store = s
	_, err := s.Update(lmdbstore.WriteMeta{RunID: "eval"}, func(tx *lmdbstore.WriteTxn) error {
		kvs, err := tx.Reader().ListKV(ops.FeedbackScope, ops.FeedbackNamespace, lmdbstore.At{})
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			if err := tx.DeleteKV(ops.FeedbackScope, ops.FeedbackNamespace, kv.Key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || fr.opts.Warmup == 0 {
		return err
	}
	warm, err := repo.Commits(fr.opts.Warmup, opts.Skip+len(window), opts.Rule)
	if err != nil && !errors.Is(err, ErrNoCommits) {
		return err
	}
	for _, c := range warm {
		if err := fr.after(c); err != nil {
			return err
		}
	}
	return nil
}

// after feeds commit c back: each changed file's other changed files are
// useful for it; one feedback revision.
func (fr *feedbackReplay) after(c Commit) error {
	var reqs []ops.FeedbackRequest
	for _, f := range c.Files {
		q := ops.FeedbackRequest{Target: "file:" + f}
		for _, g := range c.Files {
			if g != f {
				q.Useful = append(q.Useful, "file:"+g)
			}
		}
		if len(q.Useful) > 0 {
			reqs = append(reqs, q)
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	for i, v := range fr.opts.Variants {
		if i == 0 {
			if _, err := ops.Feedback(fr.store, lmdbstore.WriteMeta{RunID: "eval", TaskID: "feedback " + short(c.Hash)}, reqs, v); err != nil {
				return fmt.Errorf("feedback after %s: %w", short(c.Hash), err)
			}
			continue
		}
		if _, err := fr.mem[i].Apply(reqs, v); err != nil {
			return err
		}
	}
	return nil
}

// scores compares every variant with the baseline: means over queries and
// bootstrap intervals over commits (bootstrap.go: a commit's queries share
// its files, so they are resampled together).
func (fr *feedbackReplay) scores() []FeedbackScore {
	rs := NewResamples(len(fr.order), fr.opts.Bootstrap, BootstrapSeed)
	counts := make([]float64, len(fr.order))
	for j, c := range fr.order {
		counts[j] = float64(fr.queries[c])
	}
	// per-commit sums of metric k of predictor pred.
	sums := func(pred string, k int) []float64 {
		out := make([]float64, len(fr.order))
		for j, c := range fr.order {
			out[j] = fr.perCom[c][pred][k]
		}
		return out
	}
	base := fr.opts.Baseline
	var out []FeedbackScore
	baseRecall, baseHit := sums(base, 0), sums(base, 1)
	for i, name := range fr.names {
		recall, hit := sums(name, 0), sums(name, 1)
		out = append(out, FeedbackScore{
			Predictor: name, Params: fr.opts.Variants[i],
			Recall: rs.Ratio(recall, counts), Hit: rs.Ratio(hit, counts),
			DRecall: rs.Paired(recall, baseRecall, counts), DHit: rs.Paired(hit, baseHit, counts),
			BaseRecall: rs.Ratio(baseRecall, counts), BaseH: rs.Ratio(baseHit, counts),
		})
	}
	return out
}
