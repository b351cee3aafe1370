package cli

// The --feedback flags of `eval cochange` (SPEC.md §11.4).

import (
	"fmt"
	"strconv"

	"github.com/memctl/memctl/eval"
	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func evalFeedbackFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "feedback", Usage: "feed back each commit's files as useful for each other and score activate reading the overlay against activate without it (SPEC.md §11.4)"},
		&cli.StringSliceFlag{Name: "feedback-rate", Usage: "with --feedback: rate `R` (repeatable or comma-separated: a grid with the other lists)"},
		&cli.StringSliceFlag{Name: "feedback-half-life", Usage: "with --feedback: half-life `H` in feedback revisions (repeatable)"},
		&cli.StringSliceFlag{Name: "feedback-weight", Usage: "with --feedback: link weight `W` of a useful item (repeatable)"},
		&cli.IntFlag{Name: "feedback-warmup", Usage: "with --feedback: first feed back the `N` qualifying commits before the window"},
	}
}

// evalFeedbackOptions reads the --feedback flags: every combination of the
// listed rates, half-lives and weights, the defaults where a list is empty,
// the first combination written to the store.
func evalFeedbackOptions(k *call) (*eval.FeedbackOptions, error) {
	on := k.ctx.Bool("feedback")
	for _, f := range []string{"feedback-rate", "feedback-half-life", "feedback-weight", "feedback-warmup"} {
		if k.ctx.IsSet(f) && !on {
			return nil, usageErr("eval cochange: --%s needs --feedback", f)
		}
	}
	if !on {
		return nil, nil
	}
	d := ops.DefaultFeedbackParams()
	lists := make([][]float64, 3)
	for i, f := range []struct {
		name string
		def  float64
	}{{"feedback-rate", d.Rate}, {"feedback-half-life", d.HalfLife}, {"feedback-weight", d.Weight}} {
		for _, v := range splitList(k.ctx.StringSlice(f.name)) {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, usageErr("eval cochange: --%s %q is not a number", f.name, v)
			}
			lists[i] = append(lists[i], x)
		}
		if len(lists[i]) == 0 {
			lists[i] = []float64{f.def}
		}
	}
	fo := &eval.FeedbackOptions{Warmup: k.ctx.Int("feedback-warmup")}
	for _, r := range lists[0] {
		for _, h := range lists[1] {
			for _, w := range lists[2] {
				fo.Variants = append(fo.Variants, ops.FeedbackParams{Rate: r, HalfLife: h, Weight: w, Floor: d.Floor})
			}
		}
	}
	return fo, nil
}

// evalFeedbackJSON is one variant's line of `eval cochange --feedback --json`.
type evalFeedbackJSON struct {
	Feedback  string     `json:"feedback"`
	Baseline  string     `json:"baseline"`
	Rate      float64    `json:"rate"`
	HalfLife  float64    `json:"half_life"`
	Weight    float64    `json:"weight"`
	Recall    [3]float64 `json:"recall_at_10"`
	Hit       [3]float64 `json:"hit_at_3"`
	DRecall   [3]float64 `json:"d_recall_at_10"`
	DHit      [3]float64 `json:"d_hit_at_3"`
	BaseRecal [3]float64 `json:"baseline_recall_at_10"`
}

// printEvalFeedback prints the comparison of every feedback variant with
// its baseline: means with bootstrap 95 % intervals over commits.
func printEvalFeedback(k *call, rep *eval.CochangeReport) error {
	if len(rep.Feedback) == 0 {
		return nil
	}
	iv := func(i eval.Interval) [3]float64 { return [3]float64{round4(i.Mean), round4(i.Lo), round4(i.Hi)} }
	if k.out.json {
		for _, f := range rep.Feedback {
			rec := evalFeedbackJSON{Feedback: f.Predictor, Baseline: "activate", Rate: f.Params.Rate, HalfLife: f.Params.HalfLife, Weight: f.Params.Weight,
				Recall: iv(f.Recall), Hit: iv(f.Hit), DRecall: iv(f.DRecall), DHit: iv(f.DHit), BaseRecal: iv(f.BaseRecall)}
			if err := k.out.record(rec); err != nil {
				return err
			}
		}
		return nil
	}
	if err := k.out.textf("\nfeedback against activate, mean [bootstrap 95 %% interval over commits]; activate recall@%d %s, hit@%d %s\n",
		rep.K, rep.Feedback[0].BaseRecall, rep.HitK, rep.Feedback[0].BaseH); err != nil {
		return err
	}
	tw := k.out.table()
	fmt.Fprintf(tw, "predictor\trecall@%d\tΔ recall\thit@%d\tΔ hit\n", rep.K, rep.HitK)
	for _, f := range rep.Feedback {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Predictor, f.Recall, f.DRecall, f.Hit, f.DHit)
	}
	return tw.Flush()
}

func round4(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 4, 64), 64)
	return v
}
