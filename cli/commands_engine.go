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
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
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

// snapshotFlag is the snapshot file an engine command reads instead of the
// store.
func snapshotFlag() cli.Flag {
	return &cli.StringFlag{Name: "snapshot", Usage: "read snapshot `FILE` (written by memctl export) instead of the store"}
}

// engineFlags are the flags every engine command has: where the graph
// comes from.
func engineFlags() []cli.Flag {
	return append([]cli.Flag{snapshotFlag(), noRefreshFlag()}, readFlags()...)
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
	// coverage: what the answer's region could not see (impact, activate),
	// printed on stderr when partial (SPEC.md §8.7).
	coverage *records.Coverage
	env      Env
}

// cover records the coverage of the answer over keys.
func (k *engineCall) cover(keys []string) error {
	c, err := ops.Coverage(ops.EnginePayloads(k.eng), keys)
	if err != nil {
		return err
	}
	k.coverage = &c
	return nil
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
		var g *csr.Graph
		var asOf *records.AsOf
		if path := c.String("snapshot"); path != "" {
			if g, err = csr.Open(path); err != nil {
				return engineErr(fmt.Errorf("open snapshot %s: %w", path, err))
			}
			defer func() {
				if cerr := g.Close(); err == nil && cerr != nil {
					err = cerr
				}
			}()
			warnOlderSnapshot(env, c, path, g)
		} else {
			snap, a, done, err := storeSnapshot(env, c)
			if err != nil {
				return engineErr(err)
			}
			defer done()
			g, asOf = snap.Graph, a
		}
		eng, err := engines.New(g)
		if err != nil {
			return engineErr(err)
		}
		k := &engineCall{ctx: c, name: name, args: args, out: newOutput(env.Stdout, c.Bool("json")), graph: g, eng: eng, env: env}
		if err := run(k); err != nil {
			return engineErr(err)
		}
		if asOf != nil && !k.out.json {
			fmt.Fprintf(env.Stderr, "memctl: %s\n", asOf.Line())
		} else if asOf != nil {
			b, _ := records.Marshal(map[string]any{"as_of": asOf})
			fmt.Fprintf(env.Stderr, "%s\n", b)
		}
		if c := k.coverage; c != nil && c.Partial && !k.out.json {
			fmt.Fprintf(env.Stderr, "memctl: %s\n", c.Line())
		} else if c != nil && c.Partial {
			b, _ := records.Marshal(map[string]any{"coverage": c})
			fmt.Fprintf(env.Stderr, "%s\n", b)
		}
		return k.out.flush()
	}
}

// storeSnapshot is the engine snapshot of the store at the view the read
// flags select, after a refresh of the code graph (SPEC.md §8.6, §9.10).
// done releases the snapshot and closes the store.
func storeSnapshot(env Env, c *cli.Context) (snap *enginesnap.Snap, asOf *records.AsOf, done func(), err error) {
	k := &call{ctx: c, env: env, name: c.Command.Name}
	at, err := k.at()
	if err != nil {
		return nil, nil, nil, err
	}
	s, asOf, err := k.openFresh(at)
	if err != nil {
		k.close()
		return nil, nil, nil, err
	}
	p := enginesnap.New(s, enginesnap.Options{})
	snap, _, err = p.At(enginesnap.Exact, at)
	if err != nil {
		k.close()
		return nil, nil, nil, err
	}
	return snap, asOf, func() { snap.Release(); k.close() }, nil
}

// warnOlderSnapshot warns, on stderr, when the snapshot file is older than
// the store (--db): the revisions between them are not in the answer.
func warnOlderSnapshot(env Env, c *cli.Context, path string, g *csr.Graph) {
	k := &call{ctx: c, env: env, name: c.Command.Name}
	defer k.close()
	s, err := k.open(true)
	if err != nil {
		return // no store to compare with
	}
	var rev lmdbstore.Revision
	if s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }) != nil {
		return
	}
	if snapRev := lmdbstore.Revision(g.Revision()); snapRev < rev {
		fmt.Fprintf(env.Stderr, "memctl: warning: %s is of revision %d; the store is at %d (revisions %d..%d are not in this answer; run memctl export, or leave out --snapshot to read the store)\n",
			path, snapRev, rev, snapRev+1, rev)
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
