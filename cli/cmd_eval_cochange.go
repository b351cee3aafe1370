package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memctl/memctl/eval"
	"github.com/urfave/cli/v2"
)

func evalCochangeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "cochange",
		Usage: "replay the last commits of the git repository DIR: does memory predict which files change together?",
		Description: "For each of the last --commits non-merge commits changing 2 to 10 Go files (all\n" +
			"existing in the parent), builds memory as it was at the parent (ingest go and\n" +
			"ingest git of a worktree), asks each predictor which files relate to every\n" +
			"changed file, and scores recall@10 and hit@3 against the commit's other\n" +
			"changed files. SPEC.md §11.",
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
	Predictor string     `json:"predictor"`
	Dir       string     `json:"dir"`
	Head      string     `json:"head"`
	Commits   int        `json:"commits"`
	Queries   int        `json:"queries"`
	Recall    jsonNumber `json:"recall_at_10"`
	Hit       jsonNumber `json:"hit_at_3"`
	Answered  int        `json:"answered"`
	Seconds   jsonNumber `json:"seconds"`
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
		for _, s := range rep.Scores {
			rec := evalScoreJSON{Predictor: s.Predictor, Dir: rep.Dir, Head: rep.Head, Commits: len(rep.Commits),
				Queries: s.Queries, Recall: fixed(s.Recall, 4), Hit: fixed(s.Hit, 4), Answered: s.Answered,
				Seconds: fixed(rep.Elapsed.Seconds(), 1)}
			if err := k.out.record(rec); err != nil {
				return err
			}
		}
		return nil
	}
	first, last := rep.Commits[0].Hash, rep.Commits[len(rep.Commits)-1].Hash
	if err := k.out.textf("eval cochange %s: %d commits (%s..%s), %d queries, memory at each parent; %.1fs\n",
		rep.Dir, len(rep.Commits), first[:min(12, len(first))], last[:min(12, len(last))], rep.Queries, rep.Elapsed.Seconds()); err != nil {
		return err
	}
	tw := k.out.table()
	fmt.Fprintf(tw, "predictor\trecall@%d\thit@%d\tanswered\twhat\n", rep.K, rep.HitK)
	for _, s := range rep.Scores {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%d/%d\t%s\n", s.Predictor, s.Recall, s.Hit, s.Answered, s.Queries, s.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printEvalFeedback(k, rep)
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
