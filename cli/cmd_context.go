package cli

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func contextCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:      "context",
		Usage:     "what applies here: policies, related code, changes and attempts for TARGET, within a token budget",
		ArgsUsage: "TARGET...",
		Description: "A TARGET is a canonical key, a repository path (a file or a directory, relative\n" +
			"to the ingested root) or a query resolved like activate's. The answer has four\n" +
			"sections (Applies here, Related, Changed since, Attempted), most important\n" +
			"first, cut to --budget o200k_base tokens (SPEC.md §12). The engine snapshot it\n" +
			"needs is kept in the store directory (context.snap) and rebuilt only when the\n" +
			"code graph changed.",
		Flags: append(readFlags(),
			&cli.IntFlag{Name: "budget", Value: contextpack.DefaultBudget, Usage: "at most `TOKENS` tokens of output (o200k_base)"},
			feedbackFlag(),
			&cli.StringFlag{Name: "since-run", Usage: "changes after the last revision of run `R`"},
			&cli.StringFlag{Name: "since-task", Usage: "changes after the last revision of task `T`"},
			&cli.StringFlag{Name: "since", Usage: "changes after revision `REV` or the revision TIME selects (default: since the previous run)"},
			&cli.BoolFlag{Name: "all", Usage: "show superseded and expired items instead of counting them"},
			&cli.StringFlag{Name: "valid-at", Usage: "judge expiry at `TIME` (RFC 3339; default: now)"},
			noRefreshFlag(),
		),
		Action: func(c *cli.Context) error { return runContext(c, env) },
	}
}

func runContext(c *cli.Context, env Env) (err error) {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageErr("context needs at least one TARGET")
	}
	for _, a := range args {
		if !utf8.ValidString(a) || strings.TrimSpace(a) == "" {
			return usageErr("context: TARGET %q is empty or not valid UTF-8", a)
		}
	}
	k := &call{ctx: c, env: env, name: "context", args: args, out: newOutput(env.Stdout, c.Bool("json"))}
	defer func() {
		if cerr := k.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	req, err := contextRequest(k)
	if err != nil {
		return err
	}
	s, asOf, err := k.openFresh(req.At)
	if err != nil {
		return err
	}
	a := contextpack.New(s, contextpack.Options{SyncLater: true, Logf: func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "memctl: "+format+"\n", args...)
	}})
	defer a.Close()
	pack, err := a.Assemble(req)
	if err != nil {
		return err
	}
	cov, err := ops.StoreCoverage(s, req.At, pack.Keys(), nil)
	if err != nil {
		return err
	}
	if k.out.json {
		j := pack.JSON()
		j.AsOf, j.Coverage = asOf, cov
		if err := k.out.record(j); err != nil {
			return err
		}
	} else if err := k.out.textf("%s", pack.Markdown); err != nil {
		return err
	}
	k.asOfLine(asOf)
	if cov != nil && cov.Partial && !k.out.json {
		fmt.Fprintf(env.Stderr, "memctl: %s\n", cov.Line())
	}
	return k.out.flush()
}

// contextRequest reads the flags into a request.
func contextRequest(k *call) (contextpack.Request, error) {
	c := k.ctx
	at, err := k.at()
	if err != nil {
		return contextpack.Request{}, err
	}
	req := contextpack.Request{Targets: k.args, Budget: c.Int("budget"), At: at, All: c.Bool("all"), Feedback: c.Bool("feedback")}
	if req.Budget <= 0 {
		return req, usageErr("context: --budget must be > 0")
	}
	meta := k.meta()
	req.Run, req.Task = meta.RunID, meta.TaskID
	n := 0
	for _, f := range []string{"since-run", "since-task", "since"} {
		if c.IsSet(f) {
			n++
		}
	}
	if n > 1 {
		return req, usageErr("context: --since-run, --since-task and --since are mutually exclusive")
	}
	switch {
	case c.IsSet("since-run"):
		req.Since = contextpack.Since{Kind: contextpack.SinceRun, Run: c.String("since-run")}
	case c.IsSet("since-task"):
		req.Since = contextpack.Since{Kind: contextpack.SinceTask, Task: c.String("since-task")}
	case c.IsSet("since"):
		v := c.String("since")
		if rev, err := strconv.ParseUint(v, 10, 64); err == nil {
			req.Since = contextpack.Since{Kind: contextpack.SinceRevision, Rev: lmdbstore.Revision(rev)}
		} else if t, err := parseTime(v); err == nil {
			req.Since = contextpack.Since{Kind: contextpack.SinceTime, Time: t}
		} else {
			return req, usageErr("context: --since %q is neither a revision number nor an RFC 3339 time", v)
		}
	}
	if c.IsSet("valid-at") {
		t, err := parseTime(c.String("valid-at"))
		if err != nil {
			return req, usageErr("context: --valid-at: %v", err)
		}
		req.ValidAt = t
	}
	return req, nil
}
