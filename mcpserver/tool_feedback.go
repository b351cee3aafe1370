package mcpserver

import (
	"context"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
)

// FeedbackArgs: feedback (the CLI's feedback).
type FeedbackArgs struct {
	Target  string   `json:"target" jsonschema:"the key an answer was about (the query of related, a target of context)"`
	Useful  []string `json:"useful,omitempty" jsonschema:"keys of the answer's items that were useful for the target"`
	Useless []string `json:"useless,omitempty" jsonschema:"keys of the answer's items that were useless for the target"`
	ProvenanceArgs
}

func (s *Server) feedback(_ context.Context, a *FeedbackArgs) (records.Commit, error) {
	c, err := ops.Feedback(s.store, s.meta(a.ProvenanceArgs),
		[]ops.FeedbackRequest{{Target: a.Target, Useful: a.Useful, Useless: a.Useless}}, ops.DefaultFeedbackParams())
	if err != nil {
		return records.Commit{}, err
	}
	return records.CommitOf(c), nil
}

// feedbackOverlay is the overlay at rev when on, else nil.
func (s *Server) feedbackOverlay(on bool, rev lmdbstore.Revision) (*ops.FeedbackOverlay, error) {
	if !on {
		return nil, nil
	}
	var o *ops.FeedbackOverlay
	err := s.store.View(func(r *lmdbstore.ReadTxn) error {
		var err error
		o, err = ops.ReadFeedback(r, lmdbstore.AtRevision(rev))
		return err
	})
	return o, err
}
