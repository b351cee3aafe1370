package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/mcpserver"
	"github.com/memctl/memctl/replica"
	"github.com/urfave/cli/v2"
)

func mcpCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "mcp",
		Usage: "serve the store to an agent over the Model Context Protocol (JSON-RPC on stdin/stdout)",
		Description: "A long-lived server: one process per agent, any number on one store. Every tool\n" +
			"call sees every commit made before it; every write is one revision. --scope/--run/--task\n" +
			"are recorded with writes that do not give their own (SPEC.md §10). Logs go to stderr.\n" +
			"--tools picks the tools offered: core (default), memory, analysis, reference (the\n" +
			"reference memory server's nine), all; comma-separated, +TOOL adds one, -TOOL drops one.\n" +
			"Without a store the server still starts and answers every request with an error naming\n" +
			"the path and the fix; --init creates the store instead.",
		Flags: append(writeFlags(true),
			&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "stderr log `LEVEL`: debug (every call), info, warn or error"},
			&cli.StringFlag{Name: "tools", Value: mcpserver.DefaultTools, Usage: "the tools offered: `SETS` core, memory, analysis, reference or all, and +TOOL / -TOOL, comma-separated"},
			&cli.BoolFlag{Name: "init", Usage: "create the store at --db when there is none"},
			noRefreshFlag(),
			&cli.IntFlag{Name: "snapshot-every", Usage: "on a store bound to a remote: publish a bootstrap snapshot (as publish-snapshot) once the store is `N` revisions past the published one (0: never)"},
		),
		Run: runMCP,
	})
}

func runMCP(k *call) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(k.ctx.String("log-level"))); err != nil {
		return usageErr("mcp: --log-level %q is not one of debug, info, warn, error", k.ctx.String("log-level"))
	}
	tools, err := mcpserver.ParseTools(k.ctx.String("tools"))
	if err != nil {
		return usageErr("mcp: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(k.env.Stderr, &slog.HandlerOptions{Level: level}))
	// The server refreshes and rebuilds engine snapshots between answers:
	// the same heap floor as the one-shot answering commands.
	defer startHeapFloor(k.env.Getenv, answerHeapFloor)()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := openForMCP(k)
	if errors.Is(err, lmdbstore.ErrNotExist) {
		// Serve anyway: a client sees this reason, not "Connection closed".
		path := k.dbPath()
		reason := fmt.Sprintf("memctl: no store at %s: create it with `memctl --db %s init`, or start the server with `memctl --db %s mcp --init`", path, path, path)
		logger.Error("no store; answering every request with an error", "db", path)
		return mcpserver.ServeUnavailable(ctx, k.stdin(), k.env.Stdout, reason, mcpserver.Options{Logger: logger})
	}
	if err != nil {
		return err
	}
	var rev lmdbstore.Revision
	if err := s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }); err != nil {
		return err
	}
	every := k.ctx.Int("snapshot-every")
	if every < 0 {
		return usageErr("mcp: --snapshot-every must be ≥ 0, got %d", every)
	}
	before := k.beforeCall(s)
	var snaps *snapshotter
	if every > 0 && before != nil {
		snaps = newSnapshotter(k.remotes[len(k.remotes)-1], s, lmdbstore.Revision(every), logger)
		catchUp := before
		before = func() error {
			err := catchUp()
			snaps.maybe()
			return err
		}
	}
	srv := mcpserver.New(s, mcpserver.Options{Defaults: k.meta(), Logger: logger, NoRefresh: k.ctx.Bool("no-refresh"), Tools: tools,
		BeforeCall: before})
	logger.Info("memctl mcp serving", "db", k.dbPath(), "rev", rev)
	err = srv.Serve(ctx, k.stdin(), k.env.Stdout)
	if snaps != nil {
		snaps.maybe() // the last calls' writes too
		snaps.wait()  // before the store closes
	}
	return err
}

// snapshotter publishes a bootstrap snapshot from memctl mcp once the
// store is `every` revisions past the published one (SPEC.md §13.6), one
// upload at a time, in the background.
type snapshotter struct {
	r     *replica.Remote
	s     *lmdbstore.Store
	every lmdbstore.Revision
	log   *slog.Logger

	mu      sync.Mutex
	last    lmdbstore.Revision // the published snapshot's revision
	known   bool               // last has been read from the remote
	running bool
	wg      sync.WaitGroup
}

func newSnapshotter(r *replica.Remote, s *lmdbstore.Store, every lmdbstore.Revision, log *slog.Logger) *snapshotter {
	return &snapshotter{r: r, s: s, every: every, log: log}
}

// maybe starts an upload when one is due and none is running.
func (p *snapshotter) maybe() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return
	}
	if !p.known {
		rev, err := p.r.SnapshotRev()
		if err != nil {
			p.log.Warn("cannot read the published snapshot's revision", "err", err)
			return
		}
		p.last, p.known = rev, true
	}
	var rev lmdbstore.Revision
	if p.s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }) != nil || rev < p.last+p.every {
		return
	}
	p.running = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		info, err := p.r.PublishSnapshot(p.s, os.TempDir())
		p.mu.Lock()
		defer p.mu.Unlock()
		p.running = false
		if err != nil {
			p.log.Warn("publishing a snapshot failed", "err", err)
			return
		}
		p.last = info.Rev
		p.log.Info("published a snapshot", "rev", info.Rev, "bytes", info.Bytes)
	}()
}

func (p *snapshotter) wait() { p.wg.Wait() }

// openForMCP opens the store; with --init it creates a missing one (a
// server started at the same moment may create it first: then it opens).
func openForMCP(k *call) (*lmdbstore.Store, error) {
	s, err := k.open(false)
	if !errors.Is(err, lmdbstore.ErrNotExist) || !k.ctx.Bool("init") {
		return s, err
	}
	opts, err := k.options(false)
	if err != nil {
		return nil, err
	}
	s, err = lmdbstore.Init(k.dbPath(), opts)
	if errors.Is(err, lmdbstore.ErrExists) {
		return k.open(false)
	}
	if err != nil {
		return nil, err
	}
	k.store = s // closed with the call
	return s, nil
}
