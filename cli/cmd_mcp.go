package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/mcpserver"
	"github.com/urfave/cli/v2"
)

func mcpCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "mcp",
		Usage: "serve the store to an agent over the Model Context Protocol (JSON-RPC on stdin/stdout)",
		Description: "A long-lived server: one process per agent, any number on one store. Every tool\n" +
			"call sees every commit made before it; every write is one revision. --scope/--run/--task\n" +
			"are recorded with writes that do not give their own (SPEC.md §10). Logs go to stderr.",
		Flags: append(writeFlags(true),
			&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "stderr log `LEVEL`: debug (every call), info, warn or error"},
			noRefreshFlag(),
		),
		Run: runMCP,
	})
}

func runMCP(k *call) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(k.ctx.String("log-level"))); err != nil {
		return usageErr("mcp: --log-level %q is not one of debug, info, warn, error", k.ctx.String("log-level"))
	}
	s, err := k.open(false)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(k.env.Stderr, &slog.HandlerOptions{Level: level}))
	var rev lmdbstore.Revision
	if err := s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }); err != nil {
		return err
	}
	srv := mcpserver.New(s, mcpserver.Options{Defaults: k.meta(), Logger: logger, NoRefresh: k.ctx.Bool("no-refresh")})
	logger.Info("memctl mcp serving", "db", k.dbPath(), "rev", rev)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Serve(ctx, k.stdin(), k.env.Stdout)
}
