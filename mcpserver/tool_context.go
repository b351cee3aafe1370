package mcpserver

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
)

// ContextArgs is the input of context: `memctl context` (SPEC.md §12).
type ContextArgs struct {
	Targets   []string `json:"targets" jsonschema:"what the agent is working on: canonical keys, repository paths (lmdbstore/store.go, cli/) or queries resolved like related's"`
	Budget    *int     `json:"budget,omitempty" jsonschema:"at most this many o200k_base tokens of Markdown (default 2000)"`
	SinceRun  string   `json:"since_run,omitempty" jsonschema:"changes after the last revision of this run"`
	SinceTask string   `json:"since_task,omitempty" jsonschema:"changes after the last revision of this task"`
	Since     string   `json:"since,omitempty" jsonschema:"changes after this revision number or RFC 3339 time (default: since the previous run)"`
	ValidAt   string   `json:"valid_at,omitempty" jsonschema:"judge expiry at this RFC 3339 time (default: now)"`
	All       bool     `json:"all,omitempty" jsonschema:"show superseded and expired policies instead of counting them"`
	Feedback  bool     `json:"feedback,omitempty" jsonschema:"rank related code reading the feedback overlay (the feedback tool; SPEC 8.2.2)"`
	ViewArgs
	FreshArgs
}

// ContextResult is the answer of context: the pack as `memctl context
// --json` prints it, and its Markdown rendering.
type ContextResult struct {
	contextpack.PackJSON
	Markdown string `json:"markdown" jsonschema:"the pack rendered for a model, within the budget"`
}

func (s *Server) context(_ context.Context, a *ContextArgs) (ContextResult, error) {
	at, err := a.at()
	if err != nil {
		return ContextResult{}, err
	}
	req := contextpack.Request{Targets: a.Targets, At: at, All: a.All, Feedback: a.Feedback,
		Run: s.opts.Defaults.RunID, Task: s.opts.Defaults.TaskID}
	if a.Budget != nil {
		if *a.Budget <= 0 {
			return ContextResult{}, invalidArg("budget must be > 0")
		}
		req.Budget = *a.Budget
	}
	n := 0
	for _, v := range []string{a.SinceRun, a.SinceTask, a.Since} {
		if v != "" {
			n++
		}
	}
	switch {
	case n > 1:
		return ContextResult{}, invalidArg("since_run, since_task and since are mutually exclusive")
	case a.SinceRun != "":
		req.Since = contextpack.Since{Kind: contextpack.SinceRun, Run: a.SinceRun}
	case a.SinceTask != "":
		req.Since = contextpack.Since{Kind: contextpack.SinceTask, Task: a.SinceTask}
	case a.Since != "":
		if rev, err := strconv.ParseUint(a.Since, 10, 64); err == nil {
			req.Since = contextpack.Since{Kind: contextpack.SinceRevision, Rev: lmdbstore.Revision(rev)}
		} else if t, err := time.Parse(time.RFC3339Nano, a.Since); err == nil {
			req.Since = contextpack.Since{Kind: contextpack.SinceTime, Time: t}
		} else {
			return ContextResult{}, invalidArg("since %q is neither a revision number nor an RFC 3339 time", a.Since)
		}
	}
	if a.ValidAt != "" {
		t, err := time.Parse(time.RFC3339Nano, a.ValidAt)
		if err != nil {
			return ContextResult{}, invalidArg("valid_at %q is not an RFC 3339 time", a.ValidAt)
		}
		req.ValidAt = t
	}
	asOf := s.freshen(a.FreshArgs, a.ViewArgs)
	pack, err := s.contexts.Assemble(req)
	if errors.Is(err, contextpack.ErrBadRequest) {
		return ContextResult{}, invalidArg("%v", err)
	}
	if err != nil {
		return ContextResult{}, err
	}
	cov, err := ops.StoreCoverage(s.store, at, pack.Keys(), &s.coverage)
	if err != nil {
		return ContextResult{}, err
	}
	j := pack.JSON()
	j.AsOf, j.Coverage = asOf, cov
	md := pack.Markdown
	// The agent reads the Markdown: say there when it may be out of date
	// or the graph of the region is known to be incomplete.
	if cov != nil && cov.Partial {
		md = "> memctl: " + cov.Line() + "\n\n" + md
	}
	if asOf != nil && (len(asOf.Stale) > 0 || asOf.Error != "") {
		md = "> memctl: " + asOf.Line() + "\n\n" + md
	}
	return ContextResult{PackJSON: j, Markdown: md}, nil
}
