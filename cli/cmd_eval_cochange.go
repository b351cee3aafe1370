package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memctl/memctl/eval"
	"github.com/memctl/memctl/ingest"
	"github.com/urfave/cli/v2"
)

func evalCochangeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "cochange",
		Usage: "replay the last commits of the git repository DIR: does memory predict which files change together?",
		Description: "For each of the last --commits non-merge commits changing 2 to 10 source files\n" +
			"(Go, Python, TypeScript, JavaScript, Rust; all existing in the parent), builds\n" +
			"memory as it was at the parent (ingest code and ingest git of a worktree), asks\n" +
			"each predictor which files relate to every changed file, and scores recall@10\n" +
			"and hit@3 against the commit's other changed files, each with a bootstrap 95 %\n" +
			"interval over commits, and the first predictor's margin over each other one\n" +
			"(paired by commit). SPEC.md §11.",
		Args: []string{"DIR"},
		Flags: append(evalFeedbackFlags(), append(walkFlags(),
			&cli.IntFlag{Name: "commits", Value: 30, Usage: "replay the newest `N` qualifying commits"},
			&cli.IntFlag{Name: "skip", Usage: "skip the newest `M` qualifying commits first (an earlier window)"},
			&cli.StringSliceFlag{Name: "predictor", Usage: "score predictor `NAME` (repeatable; default activate, cochange, samedir, pagerank, lexical; also activate-graph, activate-static, context-2k, context-8k, repomap-2k, repomap-8k)"},
			&cli.StringFlag{Name: "work", Usage: "keep the eval store in `DIR` (reused by the next run; default: a temporary directory)"},
			&cli.BoolFlag{Name: "syntax-only", Usage: "ingest without type-checking"},
			&cli.BoolFlag{Name: "trace", Usage: "print every query's answers (text: on stderr; --json: one \"query\" object each)"},
		)...),
		Run: runEvalCochange,
	})
}

// evalScoreJSON is one predictor's line of `eval cochange --json`.
type evalScoreJSON struct {
	Predictor string            `json:"predictor"`
	Dir       string            `json:"dir"`
	Head      string            `json:"head"`
	Commits   int               `json:"commits"`
	Queries   int               `json:"queries"`
	Languages map[string]int    `json:"languages"`
	Recall    jsonNumber        `json:"recall_at_10"`
	RecallCI  [2]jsonNumber     `json:"recall_at_10_ci"`
	Hit       jsonNumber        `json:"hit_at_3"`
	HitCI     [2]jsonNumber     `json:"hit_at_3_ci"`
	Margin    *evalMarginJSON   `json:"margin,omitempty"`
	Answered  int               `json:"answered"`
	Resamples int               `json:"resamples"`
	Fallbacks []ingest.Fallback `json:"fallbacks"`
	Seed      uint64            `json:"seed"`
	Seconds   jsonNumber        `json:"seconds"`
}

// evalMarginJSON is the first predictor's lead over this one, paired by
// commit: each metric [mean, lo, hi].
type evalMarginJSON struct {
	Of     string        `json:"of"`
	Recall [3]jsonNumber `json:"recall_at_10"`
	Hit    [3]jsonNumber `json:"hit_at_3"`
}

// ci is an interval's bounds as JSON numbers of four decimals.
func ci(i eval.Interval) [2]jsonNumber { return [2]jsonNumber{fixed(i.Lo, 4), fixed(i.Hi, 4)} }

// withCI is an interval as [mean, lo, hi], four decimals.
func withCI(i eval.Interval) [3]jsonNumber {
	return [3]jsonNumber{fixed(i.Mean, 4), fixed(i.Lo, 4), fixed(i.Hi, 4)}
}

// evalQueryJSON is one query of `eval cochange --trace --json`.
type evalQueryJSON struct {
	Query   string              `json:"query"`
	Commit  string              `json:"commit"`
	Want    []string            `json:"want"`
	Answers map[string][]string `json:"answers"`
}

func runEvalCochange(k *call) error {
	preds, err := eval.PickPredictors(splitList(k.ctx.StringSlice("predictor")))
	if err != nil {
		return usageErr("eval cochange: %v", err)
	}
	bar := newProgressBar(k.env)
	defer bar.done()
	opts := eval.Options{
		Commits:    k.ctx.Int("commits"),
		Skip:       k.ctx.Int("skip"),
		Walk:       walkOptions(k),
		SyntaxOnly: k.ctx.Bool("syntax-only"),
		Work:       k.ctx.String("work"),
		Predictors: preds,
		Progress:   bar.update,
	}
	if opts.Feedback, err = evalFeedbackOptions(k); err != nil {
		return err
	}
	var traceErr error
	if k.ctx.Bool("trace") {
		opts.Trace = func(q eval.Query) {
			if k.out.json {
				if err := k.out.record(evalQueryJSON{Query: q.File, Commit: q.Commit, Want: q.Want, Answers: q.Answers}); err != nil && traceErr == nil {
					traceErr = err
				}
				return
			}
			fmt.Fprintf(k.env.Stderr, "\r\033[K%s %s want %s\n", q.Commit[:min(12, len(q.Commit))], q.File, strings.Join(q.Want, " "))
			for _, p := range preds {
				fmt.Fprintf(k.env.Stderr, "  %-10s %s\n", p.Name, strings.Join(q.Answers[p.Name], " "))
			}
		}
	}
	rep, err := eval.Cochange(k.args[0], opts)
	bar.done()
	switch {
	case errors.Is(err, eval.ErrInvalid), errors.Is(err, eval.ErrNotGitRepo):
		return withCode(ExitUsage, fmt.Errorf("eval cochange: %w", err))
	case errors.Is(err, eval.ErrNoCommits):
		return withCode(ExitNotFound, fmt.Errorf("eval cochange: %w", err))
	case err != nil:
		return fmt.Errorf("eval cochange: %w", err)
	case traceErr != nil:
		return traceErr
	}
	if k.out.json {
		if err := printEvalFeedback(k, rep); err != nil {
			return err
		}
		if rep.Fallbacks == nil {
			rep.Fallbacks = []ingest.Fallback{} // [] in JSON, as ingest prints it
		}
		for _, s := range rep.Scores {
			rec := evalScoreJSON{Predictor: s.Predictor, Dir: rep.Dir, Head: rep.Head, Commits: len(rep.Commits),
				Queries: s.Queries, Languages: rep.Languages,
				Recall: fixed(s.Recall, 4), RecallCI: ci(s.RecallCI), Hit: fixed(s.Hit, 4), HitCI: ci(s.HitCI),
				Answered: s.Answered, Resamples: rep.Resamples, Seed: eval.BootstrapSeed, Fallbacks: rep.Fallbacks,
				Seconds: fixed(rep.Elapsed.Seconds(), 1)}
			if m := s.Margin; m != nil {
				rec.Margin = &evalMarginJSON{Of: m.Of, Recall: withCI(m.Recall), Hit: withCI(m.Hit)}
			}
			if err := k.out.record(rec); err != nil {
				return err
			}
		}
		return nil
	}
	first, last := rep.Commits[0].Hash, rep.Commits[len(rep.Commits)-1].Hash
	if err := k.out.textf("eval cochange %s: %d commits (%s..%s), %d queries (%s), memory at each parent; %.1fs\n",
		rep.Dir, len(rep.Commits), first[:min(12, len(first))], last[:min(12, len(last))], rep.Queries,
		languageCounts(rep.Languages), rep.Elapsed.Seconds()); err != nil {
		return err
	}
	tw := k.out.table()
	fmt.Fprintf(tw, "predictor\trecall@%d\thit@%d\tanswered\twhat\n", rep.K, rep.HitK)
	for _, s := range rep.Scores {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\n", s.Predictor, ivText(s.RecallCI, false), ivText(s.HitCI, false),
			s.Answered, s.Queries, s.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Scores) > 1 {
		if err := k.out.textf("margin of %s over each, paired by commit:\n", rep.Scores[0].Predictor); err != nil {
			return err
		}
		tw = k.out.table()
		fmt.Fprintf(tw, "over\tΔ recall@%d\tΔ hit@%d\n", rep.K, rep.HitK)
		for _, s := range rep.Scores[1:] {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Predictor, ivText(s.Margin.Recall, true), ivText(s.Margin.Hit, true))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := k.out.textf("[95 %% interval: percentile bootstrap over the %d commits, %d resamples, seed %d]\n",
		len(rep.Commits), rep.Resamples, eval.BootstrapSeed); err != nil {
		return err
	}
	// Go read from syntax alone resolves fewer calls: say so (SPEC.md §9.6).
	for _, l := range fallbackLines(rep.Fallbacks) {
		if err := k.out.textf("%s\n", l); err != nil {
			return err
		}
	}
	return printEvalFeedback(k, rep)
}

// ivText is "M [LO, HI]" with two decimals, signed for a margin.
func ivText(i eval.Interval, signed bool) string {
	f := "%.2f [%.2f, %.2f]"
	if signed {
		f = "%+.2f [%+.2f, %+.2f]"
	}
	return fmt.Sprintf(f, i.Mean, i.Lo, i.Hi)
}

// languageCounts is "go 40, python 12": queries by language, most first,
// ties by name.
func languageCounts(by map[string]int) string {
	langs := make([]string, 0, len(by))
	for l := range by {
		langs = append(langs, l)
	}
	slices.SortFunc(langs, func(a, b string) int {
		if by[a] != by[b] {
			return by[b] - by[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(langs))
	for i, l := range langs {
		parts[i] = fmt.Sprintf("%s %d", l, by[l])
	}
	return strings.Join(parts, ", ")
}

// jsonNumber is a number printed as given.
type jsonNumber = json.Number

// fixed is x rounded to digits decimals, as a JSON number.
func fixed(x float64, digits int) jsonNumber {
	return jsonNumber(strconv.FormatFloat(x, 'f', digits, 64))
}

// splitList flattens repeatable, comma-separated flag values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
