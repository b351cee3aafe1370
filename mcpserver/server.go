package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures a Server.
type Options struct {
	// Defaults is the provenance recorded with writes whose arguments leave
	// a field empty (`memctl mcp --scope/--run/--task`). Its Scope is also
	// the default kv scope and the scope the memory-server tools work in.
	Defaults lmdbstore.WriteMeta
	// Logger receives the server's log (stderr in `memctl mcp`); nil
	// discards it.
	Logger *slog.Logger
	// MaxMessageBytes bounds one JSON-RPC message (0: DefaultMaxMessageBytes).
	MaxMessageBytes int
	// Version is reported to clients in the initialize handshake.
	Version string
	// Now is the clock stamped on observations (nil: time.Now).
	Now func() time.Time
	// NoRefresh: analysis and context calls answer from memory as it is,
	// never re-reading the tree the store follows (`memctl mcp
	// --no-refresh`; SPEC.md §9.10).
	NoRefresh bool
	// Tools is the tool set offered (`memctl mcp --tools`, ParseTools);
	// the zero value is DefaultTools.
	Tools ToolSelection
	// BeforeCall, when non-nil, runs before every tool call: a store bound
	// to a remote catches up there (`memctl mcp`; SPEC.md §13.5). Its
	// error is logged and the call goes on.
	BeforeCall func() error
}

// Server is memctl's MCP server over one open store. It is safe for
// concurrent calls; the store stays owned by the caller.
type Server struct {
	store *lmdbstore.Store
	opts  Options
	log   *slog.Logger
	mcp   *mcp.Server
	// snaps is the process's one engine-snapshot provider: the analysis
	// tools' snapshots and the context packs' (the file of the store
	// directory, kept mapped between calls, SPEC.md §12.5).
	snaps *enginesnap.Provider
	// contexts assembles context packs over snaps; coverage keeps what
	// their coverage read of the view's payloads.
	contexts *contextpack.Assembler
	coverage ops.CoverageMemo
	// refresh is kept between the refreshes before answers (parses,
	// the graph last written, the last git status: SPEC.md §9.10).
	refresh *freshness.Cache
	calls   sync.WaitGroup // tool calls in flight (Serve waits for them)
}

// New builds the server and registers every tool.
func New(store *lmdbstore.Store, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if !opts.Tools.all && opts.Tools.with == nil {
		opts.Tools, _ = ParseTools(DefaultTools)
	}
	s := &Server{store: store, opts: opts, log: opts.Logger, refresh: freshness.NewCache()}
	s.snaps = enginesnap.New(store, enginesnap.Options{
		Path:  filepath.Join(store.Path(), enginesnap.SnapshotFile),
		Clock: opts.Now,
		Logf:  func(format string, args ...any) { s.log.Info(fmt.Sprintf(format, args...)) },
		// An answer need not wait for the file's syncs (the next call and
		// the server's Close do).
		SyncLater: true,
	})
	s.contexts = contextpack.New(store, contextpack.Options{Snapshots: s.snaps, Clock: opts.Now})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "memctl", Title: "memctl memory", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       opts.Logger,
			Capabilities: capabilities(opts.Tools),
		})
	s.registerStoreTools()
	s.registerAnalysisTools()
	s.registerMemoryTools()
	return s
}

// capabilities: tools, and resources when the reference memory server's
// tools are offered (its memory://knowledge-graph resource comes with them).
func capabilities(t ToolSelection) *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	if offersReference(t) {
		c.Resources = &mcp.ResourceCapabilities{}
	}
	return c
}

func offersReference(t ToolSelection) bool {
	return slices.ContainsFunc(toolSets["reference"], t.offers)
}

// instructions is what a client may show the model about this server.
const instructions = "memctl is a versioned graph memory: nodes named by canonical keys " +
	"(file:path, sym:pkg.Name, decision:topic), edges between them through named relations, " +
	"and key/value entries for decisions, constraints and procedures. Every write is a " +
	"revision; every read can look at a past revision (at_rev) or time (at_time). " +
	"Before working on a file or symbol, call context: what applies there. Record a decision or " +
	"constraint with put_kv (payload applies_to globs) or put_node plus put_edge; when one " +
	"replaces another, supersede it. search finds keys; related and impact rank nodes over the graph."

// MCP is the underlying SDK server (tests connect it to in-memory transports).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Serve runs one session over newline-delimited JSON-RPC on in/out (the
// process's stdin/stdout) until in ends or ctx is cancelled.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	err := s.mcp.Run(ctx, &lineTransport{in: in, out: out, max: s.opts.MaxMessageBytes, log: s.log})
	// The session can end (input closed, ctx cancelled) while handlers still
	// run; the caller closes the store next, so wait for them.
	s.calls.Wait()
	s.contexts.Close()
	s.snaps.Close()
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// CodeUnavailable is the JSON-RPC error code of every request to a server
// that has no store (ServeUnavailable).
const CodeUnavailable = -32000

// ServeUnavailable speaks the protocol without a store: it answers every
// request but ping with a JSON-RPC error carrying reason (one line naming
// the store's path and the fix) until in ends or ctx is cancelled. A
// client then shows why the server cannot work, where a process that
// exited would show only "Connection closed".
func ServeUnavailable(ctx context.Context, in io.Reader, out io.Writer, reason string, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "memctl", Title: "memctl memory", Version: opts.Version},
		&mcp.ServerOptions{Logger: opts.Logger, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" || strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			opts.Logger.Warn("request refused: no store", "method", method)
			return nil, &jsonrpc.Error{Code: CodeUnavailable, Message: oneLine(reason)}
		}
	})
	err := srv.Run(ctx, &lineTransport{in: in, out: out, max: opts.MaxMessageBytes, log: opts.Logger})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// --- arguments shared by many tools ------------------------------------------

// ViewArgs select the committed state a read sees: the latest by default.
type ViewArgs struct {
	AtRev  *uint64 `json:"at_rev,omitempty" jsonschema:"read the state right after this revision (omit for the latest)"`
	AtTime string  `json:"at_time,omitempty" jsonschema:"read the state of the latest revision committed at or before this RFC 3339 time"`
}

func (v ViewArgs) at() (lmdbstore.At, error) {
	switch {
	case v.AtRev != nil && v.AtTime != "":
		return lmdbstore.At{}, invalidArg("at_rev and at_time are mutually exclusive")
	case v.AtRev != nil:
		return lmdbstore.AtRevision(lmdbstore.Revision(*v.AtRev)), nil
	case v.AtTime != "":
		t, err := time.Parse(time.RFC3339Nano, v.AtTime)
		if err != nil {
			return lmdbstore.At{}, invalidArg("at_time %q is not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)", v.AtTime)
		}
		return lmdbstore.AtTime(t), nil
	}
	return lmdbstore.At{}, nil
}

// ProvenanceArgs are the provenance of a write; empty fields take the
// server's defaults (--scope/--run/--task).
type ProvenanceArgs struct {
	Scope  string `json:"scope,omitempty" jsonschema:"scope recorded with the write (default: the server's --scope)"`
	RunID  string `json:"run_id,omitempty" jsonschema:"run id recorded with the write (default: the server's --run)"`
	TaskID string `json:"task_id,omitempty" jsonschema:"task id recorded with the write (default: the server's --task)"`
}

func (s *Server) meta(p ProvenanceArgs) lmdbstore.WriteMeta {
	m := s.opts.Defaults
	if p.Scope != "" {
		m.Scope = p.Scope
	}
	if p.RunID != "" {
		m.RunID = p.RunID
	}
	if p.TaskID != "" {
		m.TaskID = p.TaskID
	}
	return m
}

// read runs fn in one fresh read transaction at the view v selects. A
// point-in-time view is resolved first, so one before the retention
// horizon or after the latest revision fails before fn runs; rev is the
// revision the read sees.
func (s *Server) read(v ViewArgs, fn func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error) error {
	at, err := v.at()
	if err != nil {
		return err
	}
	return s.store.View(func(r *lmdbstore.ReadTxn) error {
		rev, err := r.Resolve(at)
		if err != nil {
			return err
		}
		return fn(r, at, rev)
	})
}

// write runs fn as one write transaction with the provenance p selects.
func (s *Server) write(p ProvenanceArgs, fn func(tx *lmdbstore.WriteTxn) error) (records.Commit, error) {
	c, err := s.store.Update(s.meta(p), fn)
	if err != nil {
		return records.Commit{}, err
	}
	return records.CommitOf(c), nil
}

// --- errors ------------------------------------------------------------------

// ErrInvalidArgument: a tool argument is malformed (beyond what the input
// schema checks). Store errors keep their own sentinels.
var ErrInvalidArgument = errors.New("invalid argument")

func invalidArg(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// describe turns an error into the one line a tool error carries, with a
// hint where the store's message alone does not say what to do.
func describe(err error) string {
	msg := oneLine(err.Error())
	if errors.Is(err, ops.ErrInvalid) && !errors.Is(err, ErrInvalidArgument) {
		msg = "invalid argument: " + msg // the operation's refusal, in this server's words
	}
	switch {
	case errors.Is(err, lmdbstore.ErrBeforeHorizon):
		msg += " (older revisions were compacted away; read at or after the horizon, see stats)"
	case errors.Is(err, lmdbstore.ErrCollision):
		msg += " (rename one of the keys)"
	case errors.Is(err, lmdbstore.ErrReadOnly):
		msg += " (the server cannot write to the store directory)"
	}
	return msg
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " ")
}
