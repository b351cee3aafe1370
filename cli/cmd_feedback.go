package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func feedbackCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "feedback",
		Usage: "teach the related ranking what was useful or useless for TARGET (one revision)",
		Description: "TARGET is the key an answer was about (activate, context); --useful and\n" +
			"--useless name items of that answer (keys; repeatable or comma-separated).\n" +
			"Each item's learned strength for TARGET moves halfway towards +1 (useful) or\n" +
			"-1 (useless); strengths halve every 80 feedback revisions. The overlay is kv\n" +
			"entries memctl/feedback/..., readable with list-kv and diff-since at any\n" +
			"revision. activate --feedback and context --feedback read it. SPEC.md §8.2.2.",
		Args: []string{"TARGET"},
		Flags: append(writeFlags(true),
			&cli.StringSliceFlag{Name: "useful", Usage: "item `KEY` that was useful for TARGET (repeatable)"},
			&cli.StringSliceFlag{Name: "useless", Usage: "item `KEY` that was useless for TARGET (repeatable)"},
		),
		Run: runFeedback,
	})
}

func runFeedback(k *call) error {
	req := ops.FeedbackRequest{Target: k.args[0], Useful: splitList(k.ctx.StringSlice("useful")), Useless: splitList(k.ctx.StringSlice("useless"))}
	s, err := k.open(false)
	if err != nil {
		return err
	}
	c, err := ops.Feedback(s, k.meta(), []ops.FeedbackRequest{req}, ops.DefaultFeedbackParams())
	if err != nil {
		return err
	}
	return k.out.commit(c)
}

// feedbackFlag is --feedback of the commands whose related ranking reads
// the overlay (activate, context).
func feedbackFlag() cli.Flag {
	return &cli.BoolFlag{Name: "feedback", Usage: "related: read the feedback overlay (memctl feedback) at the answer's revision (SPEC.md §8.2.2; off by default)"}
}

// feedbackOverlay is the overlay of the store (--db) at the snapshot's
// revision when --feedback is given, else nil.
func (k *engineCall) feedbackOverlay() (*ops.FeedbackOverlay, error) {
	if !k.ctx.Bool("feedback") {
		return nil, nil
	}
	c := &call{ctx: k.ctx, env: k.env, name: k.name}
	defer c.close()
	s, err := c.open(true)
	if err != nil {
		return nil, err
	}
	var o *ops.FeedbackOverlay
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		var err error
		o, err = ops.ReadFeedback(r, lmdbstore.AtRevision(lmdbstore.Revision(k.graph.Revision())))
		return err
	})
	return o, err
}
