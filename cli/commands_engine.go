package cli

// The engine commands: activate, resonate, pagerank and impact, one
// cmd_<verb>.go each. They read a snapshot file (never the store) through
// csr and engines. This file holds what they share: opening the snapshot,
// resolving relation names, printing ranked nodes, and the mapping of engine
// errors to exit codes. Output formats are SPEC.md §8.6.

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/snapshot"
	"github.com/urfave/cli/v2"
)

func engineCommands(env Env) []*cli.Command {
	return []*cli.Command{
		activateCommand(env),
		resonateCommand(env),
		pagerankCommand(env),
		impactCommand(env),
	}
}

// snapshotFlag is the snapshot file every engine command reads.
func snapshotFlag() cli.Flag {
	return &cli.StringFlag{Name: "snapshot", Usage: "snapshot `FILE` to read (written by memctl export; required)"}
}

func topFlag(def int) cli.Flag {
	return &cli.IntFlag{Name: "top", Value: def, Usage: "print at most `K` results (0: all)"}
}

func relFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "rel", Usage: "follow only relation `NAME` (repeatable, or comma-separated)"}
}

// engineCall is one run of an engine command: the mounted snapshot, the
// engine over it and the output (closed by runEngine).
type engineCall struct {
	ctx   *cli.Context
	name  string
	args  []string
	out   *output
	graph *csr.Graph
	eng   *engines.Engine
}

// engineAction wraps run: it checks the positional arguments (at least min,
// at most max; max < 0 for no limit), mounts --snapshot, runs, maps errors
// to exit codes and prints only on success.
func engineAction(env Env, minArgs, maxArgs int, argsUsage string, run func(*engineCall) error) cli.ActionFunc {
	return func(c *cli.Context) (err error) {
		name := c.Command.Name
		args := c.Args().Slice()
		if len(args) < minArgs || (maxArgs >= 0 && len(args) > maxArgs) {
			return usageErr("%s needs %s, got %d argument(s)", name, argsUsage, len(args))
		}
		for _, a := range args {
			if !utf8.ValidString(a) {
				return usageErr("%s: argument %q is not valid UTF-8", name, a)
			}
		}
		if c.Int("top") < 0 {
			return usageErr("%s: --top must be >= 0", name)
		}
		path := c.String("snapshot")
		if path == "" {
			return usageErr("%s needs --snapshot FILE", name)
		}
		g, err := csr.Open(path)
		if err != nil {
			return engineErr(fmt.Errorf("open snapshot %s: %w", path, err))
		}
		defer func() {
			if cerr := g.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
		eng, err := engines.New(g)
		if err != nil {
			return engineErr(err)
		}
		k := &engineCall{ctx: c, name: name, args: args, out: newOutput(env.Stdout, c.Bool("json")), graph: g, eng: eng}
		if err := run(k); err != nil {
			return engineErr(err)
		}
		return k.out.flush()
	}
}

// engineErr gives engine and snapshot errors their exit codes: bad
// parameters 2, a damaged snapshot 3, an unreadable file 5.
func engineErr(err error) error {
	var ee *ExitError
	switch {
	case err == nil || errors.As(err, &ee):
		return err
	case errors.Is(err, engines.ErrInvalidArgument):
		return withCode(ExitUsage, err)
	case errors.Is(err, snapshot.ErrCorrupt):
		return withCode(ExitCorrupt, err)
	case errors.Is(err, snapshot.ErrNewerVersion), errors.Is(err, snapshot.ErrUnsupported):
		return withCode(ExitUsage, err)
	}
	return err
}

// textScore is a score in text output: 6 significant digits.
func textScore(x records.Score) string { return strconv.FormatFloat(float64(x), 'g', 6, 64) }

// scored prints ranked nodes: text "SCORE  KEY" rows, or one JSON object per
// node.
func (k *engineCall) scored(recs []records.ScoredNode) error {
	if k.out.json {
		for _, r := range recs {
			if err := k.out.record(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := k.out.table()
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\n", textScore(r.Score), textCell(r.Key))
	}
	return tw.Flush()
}
