package eval

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/treesitter"
)

// Options configures an evaluation.
type Options struct {
	Commits int // how many qualifying commits to replay (newest)
	Skip    int // skip the newest Skip qualifying commits first
	// K is the cut-off of recall (default 10); HitK that of hit (default 3).
	K, HitK int
	Rule    CommitRule
	Walk    ingest.WalkOptions
	// SyntaxOnly ingests without type-checking (faster, fewer edges).
	SyntaxOnly bool
	// Work is the directory holding the store and the worktree; "" makes a
	// temporary one, removed at the end. A given one keeps the store, so a
	// second run ingests only what differs.
	Work       string
	Predictors []Predictor
	// Progress is called before each commit and at the end (Phase
	// "commits", Done of Total).
	Progress func(ingest.Progress)
	// Trace, when set, receives every query's answers.
	Trace func(Query)
	// Feedback, when set, replays feedback after each commit and scores
	// rankings that read it (feedback.go, SPEC.md §11.4).
	Feedback *FeedbackOptions
}

// Query is one question of a co-change evaluation and each predictor's
// answer (the first K source files other than the query).
type Query struct {
	Commit  string
	File    string
	Want    []string            // the commit's other changed source files
	Answers map[string][]string // by predictor name
}

// Score is one predictor's result over every query of a run.
type Score struct {
	Predictor string
	Doc       string
	Queries   int
	Recall    float64 // mean recall@K
	Hit       float64 // share of queries with a wanted file among the first HitK
	Answered  int     // queries with a non-empty answer
	// RecallCI and HitCI are Recall and Hit with their bootstrap 95 %
	// intervals over commits (bootstrap.go).
	RecallCI, HitCI Interval
	// Margin is the first predictor's lead over this one, paired by
	// commit; nil for the first predictor.
	Margin *Margin
}

// Margin is one predictor's score minus another's over the same queries,
// with intervals from the same resamples of commits (paired).
type Margin struct {
	Of          string // the predictor ahead when positive (the run's first)
	Recall, Hit Interval
}

// CochangeReport is the result of one `eval cochange` run.
type CochangeReport struct {
	Dir     string
	Head    string
	K, HitK int
	Commits []Commit
	Queries int
	// Languages counts the queries by the language of the queried file.
	Languages map[string]int
	Scores    []Score // in the order of Options.Predictors
	// Resamples is the number of bootstrap resamples of the intervals.
	Resamples int
	// Fallbacks are the Go packages read from syntax alone at some parent
	// although type-checking was asked for (their calls resolve less), by
	// package path.
	Fallbacks []ingest.Fallback
	Elapsed   time.Duration
	// Feedback compares each feedback variant with its baseline (with
	// Options.Feedback only).
	Feedback []FeedbackScore
}

func (o *Options) defaults() error {
	if o.K == 0 {
		o.K = 10
	}
	if o.HitK == 0 {
		o.HitK = 3
	}
	if o.Rule == (CommitRule{}) {
		o.Rule = DefaultCommitRule
		o.Rule.Walk = o.Walk
	}
	switch {
	case o.Commits < 1:
		return fmt.Errorf("%w: commits must be at least 1", ErrInvalid)
	case o.Skip < 0:
		return fmt.Errorf("%w: skip must be >= 0", ErrInvalid)
	case o.K < 1 || o.HitK < 1:
		return fmt.Errorf("%w: cut-offs must be at least 1", ErrInvalid)
	case len(o.Predictors) == 0:
		return fmt.Errorf("%w: no predictor", ErrInvalid)
	}
	return nil
}

// ErrInvalid marks bad options.
var ErrInvalid = errors.New("invalid evaluation options")

// Cochange replays the qualifying commits of the repository holding dir
// and scores every predictor (SPEC.md §11.1).
func Cochange(dir string, opts Options) (rep *CochangeReport, err error) {
	start := time.Now()
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	var fb *feedbackReplay
	if opts.Feedback != nil {
		if fb, err = setupFeedback(&opts); err != nil {
			return nil, err
		}
	}
	repo, err := OpenRepo(dir)
	if err != nil {
		return nil, err
	}
	commits, err := repo.Commits(opts.Commits, opts.Skip, opts.Rule)
	if err != nil {
		return nil, err
	}
	if len(commits) == 0 {
		return nil, fmt.Errorf("%w in %s: none of its non-merge commits changes %d to %d source files that all exist in the parent",
			ErrNoCommits, dir, opts.Rule.MinFiles, opts.Rule.MaxFiles)
	}
	work := opts.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "memctl-eval-"); err != nil {
			return nil, err
		}
		defer func() {
			if rerr := os.RemoveAll(work); err == nil && rerr != nil {
				err = rerr
			}
		}()
	}
	b, err := newBuilder(repo, work, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := b.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if fb != nil {
		if err := fb.start(b.store, repo, commits, opts); err != nil {
			return nil, err
		}
	}
	rep = &CochangeReport{Dir: dir, Head: repo.Head, K: opts.K, HitK: opts.HitK, Commits: commits,
		Languages: map[string]int{}, Resamples: BootstrapResamples}
	sums := make([]Score, len(opts.Predictors))
	// Per predictor and commit: the commit's queries' total recall and
	// hit; per commit: its number of queries (for the intervals).
	recalls, hits := make([][]float64, len(sums)), make([][]float64, len(sums))
	for i, p := range opts.Predictors {
		sums[i] = Score{Predictor: p.Name, Doc: p.Doc}
		recalls[i], hits[i] = make([]float64, len(commits)), make([]float64, len(commits))
	}
	counts := make([]float64, len(commits))
	progress := func(done int) {
		if opts.Progress != nil {
			opts.Progress(ingest.Progress{Phase: "commits", Done: done, Total: len(commits)})
		}
	}
	for ci, c := range commits {
		progress(ci)
		m, err := b.at(c.Parent)
		if err != nil {
			return nil, err
		}
		rankers := make([]Ranker, len(opts.Predictors))
		for i, p := range opts.Predictors {
			if rankers[i], err = p.Open(m); err != nil {
				return nil, fmt.Errorf("predictor %s at %s: %w", p.Name, short(c.Parent), err)
			}
		}
		for _, f := range c.Files {
			want := make([]string, 0, len(c.Files)-1)
			for _, g := range c.Files {
				if g != f {
					want = append(want, g)
				}
			}
			q := Query{Commit: c.Hash, File: f, Want: want, Answers: map[string][]string{}}
			rep.Queries++
			rep.Languages[treesitter.LangOf(f)]++
			counts[ci]++
			for i, rank := range rankers {
				got, err := rank(f)
				if err != nil {
					return nil, fmt.Errorf("predictor %s at %s, query %s: %w", opts.Predictors[i].Name, short(c.Parent), f, err)
				}
				k := opts.K
				if opts.Predictors[i].Budgeted {
					k = len(got)
				}
				got = firstSourceFiles(got, f, k)
				q.Answers[opts.Predictors[i].Name] = got
				r, h := recallHit(got, want, opts.HitK)
				s := &sums[i]
				s.Queries++
				recalls[i][ci] += r
				hits[i][ci] += h
				if len(got) > 0 {
					s.Answered++
				}
			}
			if opts.Trace != nil {
				opts.Trace(q)
			}
		}
		if fb != nil {
			if err := fb.after(c); err != nil {
				return nil, err
			}
		}
	}
	progress(len(commits))
	rs := NewResamples(len(commits), rep.Resamples, BootstrapSeed)
	for i := range sums {
		s := &sums[i]
		s.RecallCI, s.HitCI = rs.Ratio(recalls[i], counts), rs.Ratio(hits[i], counts)
		s.Recall, s.Hit = s.RecallCI.Mean, s.HitCI.Mean
		if i > 0 {
			s.Margin = &Margin{Of: sums[0].Predictor,
				Recall: rs.Paired(recalls[0], recalls[i], counts), Hit: rs.Paired(hits[0], hits[i], counts)}
		}
	}
	rep.Scores = sums
	rep.Fallbacks = slices.SortedFunc(slices.Values(b.fallbacks), func(x, y ingest.Fallback) int {
		return strings.Compare(x.Package, y.Package)
	})
	if fb != nil {
		rep.Feedback = fb.scores()
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// firstSourceFiles keeps the first k distinct source files of got (files
// of a language ingest reads, treesitter.LangOf) other than query.
func firstSourceFiles(got []string, query string, k int) []string {
	out := make([]string, 0, k)
	seen := map[string]bool{query: true}
	for _, f := range got {
		if len(out) == k {
			break
		}
		if treesitter.LangOf(f) == "" || seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, strings.Clone(f)) // predictors may answer with strings of the mapped snapshot
	}
	return out
}

// recallHit scores one answer: the share of want among got, and 1 when one
// of got's first hitK is wanted.
func recallHit(got, want []string, hitK int) (recall, hit float64) {
	if len(want) == 0 {
		return 0, 0
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	found := 0
	for i, g := range got {
		if wanted[g] {
			found++
			if i < hitK {
				hit = 1
			}
		}
	}
	return float64(found) / float64(len(want)), hit
}
