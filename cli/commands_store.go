package cli

// The store commands: memctl's verbs over lmdbstore, one cmd_<verb>.go each.
// This file holds what they share: the global flags, the read and write flag
// sets, opening the store, and the mapping of store errors to exit codes.
//
// Invariants every verb keeps:
//   - only init creates a store; every other verb fails on a missing one;
//   - reads open the store read-only (they never take the writer lock);
//   - a write is one store.Update: it commits whole or not at all;
//   - output is buffered and printed only when the command succeeds, so a
//     failed command prints exactly one line, on stderr.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/replica"
	"github.com/memctl/memctl/secretscan"
	"github.com/urfave/cli/v2"
)

// defaultDBPath is the store directory when neither --db nor MEMCTL_DB says.
const defaultDBPath = "./.memctl"

// Environment variables read through Env.Getenv (never os.Getenv, so tests
// stay hermetic).
const (
	envDB        = "MEMCTL_DB"
	envTelemetry = "MEMCTL_TELEMETRY"
	envNoSync    = "MEMCTL_NOSYNC"
	envRun       = "MEMCTL_RUN"
	envTask      = "MEMCTL_TASK"
	envScope     = "MEMCTL_SCOPE"
)

func globalFlags(env Env) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "db", Usage: "store directory `PATH` (env " + envDB + "; default " + defaultDBPath + ")"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object per line (SPEC.md §6)"},
		&cli.StringFlag{Name: "telemetry", Usage: "append telemetry events to `FILE` as JSON lines (env " + envTelemetry + ")"},
		&cli.BoolFlag{Name: "no-sync", Usage: "do not fsync at commit: commits survive killed processes but not OS crashes (env " + envNoSync + "=1)"},
		&cli.BoolFlag{Name: "allow-secrets", Usage: "store keys and payloads as given, without replacing secrets by [REDACTED:kind] (SPEC §2)"},
	}
}

func storeCommands(env Env) []*cli.Command {
	return []*cli.Command{
		initCommand(env),
		putNodeCommand(env),
		getNodeCommand(env),
		delNodeCommand(env),
		putEdgeCommand(env),
		delEdgeCommand(env),
		getOutCommand(env),
		getInCommand(env),
		putKVCommand(env),
		getKVCommand(env),
		listKVCommand(env),
		delKVCommand(env),
		supersedeCommand(env),
		feedbackCommand(env),
		relCommand(env),
		diffSinceCommand(env),
		batchCommand(env),
		compactCommand(env),
		vacuumCommand(env),
		checkCommand(env),
		statsCommand(env),
		orphansCommand(env),
		remoteCommand(env),
		syncCommand(env),
		statusCommand(env),
		cloneCommand(env),
		publishSnapshotCommand(env),
	}
}

// classifyStoreError maps the store's sentinel errors to exit codes.
func classifyStoreError(err error) (int, bool) {
	switch {
	case errors.Is(err, lmdbstore.ErrCorrupt), errors.Is(err, lmdbstore.ErrNewerSchema):
		return ExitCorrupt, true
	case errors.Is(err, lmdbstore.ErrCollision), errors.Is(err, lmdbstore.ErrNotEmpty):
		return ExitConflict, true
	case errors.Is(err, lmdbstore.ErrNotFound):
		return ExitNotFound, true
	case errors.Is(err, lmdbstore.ErrInvalid),
		errors.Is(err, lmdbstore.ErrUnknownRelation),
		errors.Is(err, lmdbstore.ErrBeforeHorizon),
		errors.Is(err, lmdbstore.ErrNotExist),
		errors.Is(err, lmdbstore.ErrExists),
		errors.Is(err, lmdbstore.ErrReadOnly),
		errors.Is(err, lmdbstore.ErrPermission):
		return ExitUsage, true
	case errors.Is(err, lmdbstore.ErrMapFull), errors.Is(err, lmdbstore.ErrDiskFull):
		return ExitUnexpected, true
	}
	return 0, false
}

// --- flag sets ---------------------------------------------------------------

// readFlags select the state a read sees: latest by default.
func readFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Uint64Flag{Name: "at-rev", Usage: "read the state right after revision `N`"},
		&cli.StringFlag{Name: "at", Usage: "read the state at `TIME` (RFC 3339): the latest revision committed at or before it"},
		&cli.StringFlag{Name: "at-commit", Usage: "read the state as of git commit `SHA` of the tree the store follows: the last revision ingested at it or its nearest ingested ancestor"},
	}
}

// writeFlags are the provenance of a write. put-kv and del-kv take the scope
// as an argument, so they leave out --scope.
func writeFlags(withScope bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.StringFlag{Name: "run", Usage: "run id `R` recorded with the write"},
		&cli.StringFlag{Name: "task", Usage: "task id `T` recorded with the write"},
	}
	if withScope {
		fs = append(fs, &cli.StringFlag{Name: "scope", Usage: "scope `S` recorded with the write"})
	}
	return fs
}

// validityFlags set the valid time of a node or kv entry (SPEC.md §4).
func validityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "valid-from", Usage: "the fact holds from `TIME` (RFC 3339) on"},
		&cli.StringFlag{Name: "valid-until", Usage: "the fact holds until `TIME` (RFC 3339, exclusive)"},
	}
}

// statusFlags select which memory items listing reads show (SPEC.md §4).
func statusFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "valid-at", Usage: "valid time `TIME` (RFC 3339) items are judged at (default: now)"},
		&cli.BoolFlag{Name: "include-superseded", Usage: "also show items a newer one supersedes"},
		&cli.BoolFlag{Name: "include-expired", Usage: "also show items not valid at --valid-at"},
	}
}

// validity is --valid-from / --valid-until.
func (k *call) validity() (lmdbstore.Validity, error) {
	var v lmdbstore.Validity
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"valid-from", &v.From}, {"valid-until", &v.Until}} {
		if !k.ctx.IsSet(f.name) {
			continue
		}
		t, err := parseTime(k.ctx.String(f.name))
		if err != nil {
			return v, usageErr("--%s: %v", f.name, err)
		}
		*f.t = t
	}
	if !v.From.IsZero() && !v.Until.IsZero() && !v.Until.After(v.From) {
		return v, usageErr("--valid-until must be after --valid-from")
	}
	return v, nil
}

// statusFilter is --valid-at (default: now), --include-superseded and
// --include-expired.
func (k *call) statusFilter() (lmdbstore.StatusFilter, error) {
	f := lmdbstore.StatusFilter{
		ValidAt:           time.Now(),
		IncludeSuperseded: k.ctx.Bool("include-superseded"),
		IncludeExpired:    k.ctx.Bool("include-expired"),
	}
	if k.ctx.IsSet("valid-at") {
		t, err := parseTime(k.ctx.String("valid-at"))
		if err != nil {
			return f, usageErr("--valid-at: %v", err)
		}
		f.ValidAt = t
	}
	return f, nil
}

func payloadFlag() cli.Flag {
	return &cli.StringFlag{Name: "payload", Usage: "payload as a `JSON` value, @FILE for a file's contents, - for standard input"}
}

// --- verbs ---------------------------------------------------------------------

// verbSpec describes one command: its exact positional arguments, its flags
// and what it runs.
type verbSpec struct {
	Name        string
	Usage       string
	Description string
	Args        []string // names of the positional arguments, all required
	// ArgsOrFlag names a flag that stands in for the positional
	// arguments: with it set, none are given (diff-since --commit).
	ArgsOrFlag string
	Flags      []cli.Flag
	Run        func(*call) error
}

func verbCommand(env Env, spec verbSpec) *cli.Command {
	return &cli.Command{
		Name:        spec.Name,
		Usage:       spec.Usage,
		Description: spec.Description,
		ArgsUsage:   strings.Join(spec.Args, " "),
		Flags:       spec.Flags,
		Action:      func(c *cli.Context) error { return runVerb(c, env, spec) },
	}
}

// call is one run of a verb: its context, arguments, output and the store
// it opened (closed by runVerb).
type call struct {
	ctx   *cli.Context
	env   Env
	name  string // the command path, e.g. "rel add"
	args  []string
	out   *output
	store *lmdbstore.Store
	tele  *os.File
	// teleFailed: telemetry could not be opened or written; it was said
	// once on stderr and is off for the rest of the command.
	teleFailed bool
	// derivedWrites: the command writes only what memctl derives from code
	// (ingest), so its writes skip secret scanning.
	derivedWrites bool
	// remotes are the connections the call dialed (a bound store's
	// remote, commands_replica.go); closed with the call.
	remotes []*replica.Remote
	// noCatchUp: open a bound store without catching up first (status).
	noCatchUp bool
	// offline: open a bound store without its remote at all (compact,
	// which writes no revision; a revision written so is refused).
	offline bool
	// stopHeap ends the answering commands' heap floor (openFresh).
	stopHeap func()
	// pending is work the call left running (openFresh: the refresh
	// cache file's save); close waits for it.
	pending []func()
}

func runVerb(c *cli.Context, env Env, spec verbSpec) (err error) {
	name := strings.TrimPrefix(c.Command.FullName(), "memctl ")
	args := c.Args().Slice()
	if spec.ArgsOrFlag != "" && c.IsSet(spec.ArgsOrFlag) {
		if len(args) != 0 {
			return usageErr("%s: --%s replaces %s; give one or the other", name, spec.ArgsOrFlag, strings.Join(spec.Args, " "))
		}
	} else if len(args) != len(spec.Args) {
		if len(spec.Args) == 0 {
			return usageErr("%s takes no arguments, got %d", name, len(args))
		}
		return usageErr("%s needs %d argument(s) (%s), got %d", name, len(spec.Args), strings.Join(spec.Args, " "), len(args))
	}
	for i, a := range args {
		if !utf8.ValidString(a) {
			return usageErr("%s: %s is not valid UTF-8", name, spec.Args[i])
		}
	}
	// Flag values end up in the store too (paths need not be UTF-8).
	for _, f := range c.LocalFlagNames() {
		if v := c.String(f); !utf8.ValidString(v) {
			return usageErr("%s: --%s is not valid UTF-8", name, f)
		}
	}
	k := &call{ctx: c, env: env, name: name, args: args, out: newOutput(env.Stdout, c.Bool("json"))}
	defer func() {
		if cerr := k.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := spec.Run(k); err != nil {
		return err
	}
	return k.out.flush()
}

// dbPath is --db, else $MEMCTL_DB, else ./.memctl.
func (k *call) dbPath() string {
	if p := k.ctx.String("db"); p != "" {
		return p
	}
	if p := k.env.Getenv(envDB); p != "" {
		return p
	}
	return defaultDBPath
}

// options builds the store options: telemetry from --telemetry or
// $MEMCTL_TELEMETRY, opened for appending (each event is one Write, so
// several processes can share the file).
func (k *call) options(readOnly bool) (lmdbstore.Options, error) {
	opts := lmdbstore.Options{
		ReadOnly: readOnly,
		NoSync:   k.ctx.Bool("no-sync") || k.env.Getenv(envNoSync) == "1",
		Session:  k.meta(),
	}
	path := k.ctx.String("telemetry")
	if path == "" {
		path = k.env.Getenv(envTelemetry)
	}
	if path != "" && k.tele == nil && !k.teleFailed {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			k.teleWarn(err)
		} else {
			k.tele = f
		}
	}
	if k.tele != nil {
		opts.Telemetry = teleWriter{k}
	}
	// Secrets never stored: every write's keys and payloads are scanned,
	// unless the caller opts out (--allow-secrets) or the writer is ingest,
	// whose keys and payloads memctl derives from code structure (paths,
	// names, hashes), never free text.
	// A reader with telemetry has one too: its read events name the keys
	// the caller asked for (SPEC §5).
	if !k.ctx.Bool("allow-secrets") && (!readOnly && !k.derivedWrites || k.tele != nil) {
		opts.Redactor = secretscan.Lazy{}
	}
	return opts, nil
}

// teleWarn says once on stderr that telemetry failed, and turns it off:
// telemetry never fails a command (SPEC.md §5).
func (k *call) teleWarn(err error) {
	if k.teleFailed {
		return
	}
	k.teleFailed = true
	fmt.Fprintf(k.env.Stderr, "memctl: warning: telemetry off: %v\n", err)
}

// teleWriter writes telemetry events to the call's file; the first failed
// write warns and ends telemetry (a full disk or a revoked file must not
// print a line per event).
type teleWriter struct{ k *call }

func (w teleWriter) Write(b []byte) (int, error) {
	if w.k.teleFailed || w.k.tele == nil {
		return len(b), nil
	}
	n, err := w.k.tele.Write(b)
	if err != nil {
		w.k.teleWarn(err)
	}
	return n, err
}

// open opens the existing store at dbPath.
func (k *call) open(readOnly bool) (*lmdbstore.Store, error) {
	if k.store != nil {
		return k.store, nil
	}
	opts, err := k.options(readOnly)
	if err != nil {
		return nil, err
	}
	path := k.dbPath()
	addr, bound, err := replica.ReadBinding(path)
	if err != nil {
		return nil, err
	}
	var s *lmdbstore.Store
	if bound {
		s, err = k.openBound(path, addr, readOnly, opts)
	} else {
		s, err = lmdbstore.Open(path, opts)
	}
	if err != nil {
		if errors.Is(err, lmdbstore.ErrNotExist) {
			return nil, fmt.Errorf("%w %s (create one with: memctl --db %s init)", lmdbstore.ErrNotExist, path, path)
		}
		return nil, err // the store's errors name the path
	}
	k.store = s
	return s, nil
}

func (k *call) close() error {
	var err error
	for _, wait := range k.pending {
		wait()
	}
	k.pending = nil
	if k.stopHeap != nil {
		k.stopHeap()
		k.stopHeap = nil
	}
	if k.store != nil {
		err = k.store.Close()
		k.store = nil
	}
	k.closeRemotes()
	if k.tele != nil {
		if cerr := k.tele.Close(); err == nil {
			err = cerr
		}
		k.tele = nil
	}
	return err
}

// at is the view selected by --at-rev or --at (latest when neither).
func (k *call) at() (lmdbstore.At, error) {
	hasRev, hasTime, hasCommit := k.ctx.IsSet("at-rev"), k.ctx.IsSet("at"), k.ctx.IsSet("at-commit")
	switch {
	case hasRev && hasTime, hasRev && hasCommit, hasTime && hasCommit:
		return lmdbstore.At{}, usageErr("--at-rev, --at and --at-commit are mutually exclusive")
	case hasCommit:
		return k.atCommit("--at-commit", k.ctx.String("at-commit"))
	case hasRev:
		return lmdbstore.AtRevision(lmdbstore.Revision(k.ctx.Uint64("at-rev"))), nil
	case hasTime:
		t, err := parseTime(k.ctx.String("at"))
		if err != nil {
			return lmdbstore.At{}, usageErr("--at: %v", err)
		}
		return lmdbstore.AtTime(t), nil
	}
	return lmdbstore.At{}, nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (e.g. 2006-01-02T15:04:05Z)", s)
	}
	return t, nil
}

// view runs fn in one read transaction of a read-only store, at the view the
// read flags select. A point-in-time view is resolved first so that one
// older than the retention horizon, or newer than the store, fails cleanly.
func (k *call) view(fn func(r *lmdbstore.ReadTxn, at lmdbstore.At) error) error {
	at, err := k.at()
	if err != nil {
		return err
	}
	s, err := k.open(true)
	if err != nil {
		return err
	}
	return s.View(func(r *lmdbstore.ReadTxn) error {
		if !at.IsLatest() {
			if _, err := r.Resolve(at); err != nil {
				return err
			}
		}
		return fn(r, at)
	})
}

// meta is the provenance of this invocation: the --scope/--run/--task flags
// where the command has them, else $MEMCTL_SCOPE/$MEMCTL_RUN/$MEMCTL_TASK, so
// a harness can tag every call of a run (writes and read telemetry alike).
func (k *call) meta() lmdbstore.WriteMeta {
	return lmdbstore.WriteMeta{
		Scope:  k.flagOrEnv("scope", envScope),
		RunID:  k.flagOrEnv("run", envRun),
		TaskID: k.flagOrEnv("task", envTask),
	}
}

// flagOrEnv is flag's value, else the variable env's (a flag wins).
func (k *call) flagOrEnv(flag, env string) string {
	if v := k.ctx.String(flag); v != "" {
		return v
	}
	return k.env.Getenv(env)
}

// update runs fn as one write transaction.
func (k *call) update(fn func(tx *lmdbstore.WriteTxn) error) (lmdbstore.Commit, error) {
	s, err := k.open(false)
	if err != nil {
		return lmdbstore.Commit{}, err
	}
	return s.Update(k.meta(), fn)
}

// write runs fn as one write transaction and prints the commit.
func (k *call) write(fn func(tx *lmdbstore.WriteTxn) error) error {
	c, err := k.update(fn)
	if err != nil {
		return err
	}
	return k.out.commit(c)
}

// payload is --payload, checked to be one JSON value (nil when not given).
func (k *call) payload() (json.RawMessage, error) {
	if !k.ctx.IsSet("payload") {
		return nil, nil
	}
	return k.parsePayload("--payload", k.ctx.String("payload"))
}

// maxPayloadArg bounds a payload read from a file or stdin.
const maxPayloadArg = 256 << 20

// parsePayload reads a payload argument: JSON text, `@FILE` (the file's
// contents) or `-` (standard input, read to the end), so payloads larger
// than the argument list allows can be given (SPEC §6.2). Neither form is
// valid JSON text, so there is no ambiguity.
func (k *call) parsePayload(what, s string) (json.RawMessage, error) {
	var b []byte
	switch {
	case s == "-":
		var err error
		if b, err = io.ReadAll(io.LimitReader(k.stdin(), maxPayloadArg+1)); err != nil {
			return nil, usageErr("%s -: reading standard input: %v", what, err)
		}
	case strings.HasPrefix(s, "@"):
		f, err := os.Open(s[1:])
		if err != nil {
			return nil, usageErr("%s %s: %v", what, s, unwrapPathError(err))
		}
		defer f.Close()
		if b, err = io.ReadAll(io.LimitReader(f, maxPayloadArg+1)); err != nil {
			return nil, usageErr("%s %s: %v", what, s, unwrapPathError(err))
		}
	default:
		b = []byte(s)
	}
	if len(b) > maxPayloadArg {
		return nil, usageErr("%s is larger than %d MiB", what, maxPayloadArg>>20)
	}
	if !json.Valid(b) {
		return nil, usageErr("%s is not valid JSON: %s", what, jsonSyntaxError(string(b)))
	}
	return json.RawMessage(b), nil
}

// unwrapPathError drops the *os.PathError's repetition of the path.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// jsonSyntaxError explains why s is not valid JSON.
func jsonSyntaxError(s string) string {
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		return "not a single value"
	}
	return err.Error()
}

// stdin is the command's standard input (never nil).
func (k *call) stdin() io.Reader {
	if k.env.Stdin == nil {
		return strings.NewReader("")
	}
	return k.env.Stdin
}

// noRefreshFlag turns off the refresh before an answer (SPEC.md §9.10).
func noRefreshFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-refresh", Usage: "answer from memory as it is: do not re-read files changed since the last ingest (the answer lists them as stale)"}
}

// openFresh opens the store for an answer at view at. For the latest
// view of a store that follows a code tree, it first brings the code
// graph in step (unless --no-refresh), which needs the store writable; a
// store that cannot be opened for writing is read as it is. The AsOf is
// nil when the store follows no tree and nothing is worth saying.
func (k *call) openFresh(at lmdbstore.At) (*lmdbstore.Store, *records.AsOf, error) {
	past := at != (lmdbstore.At{})
	refresh := !k.ctx.Bool("no-refresh") && !past
	if k.stopHeap == nil {
		k.stopHeap = startHeapFloor(k.env.Getenv, answerHeapFloor)
	}
	s, err := k.open(!refresh)
	if err != nil && refresh && !errors.Is(err, lmdbstore.ErrNotExist) {
		if s, err = k.open(true); err == nil {
			refresh = false
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if past {
		return s, nil, nil
	}
	a, wait, err := ops.Freshen(s, refresh, nil) // one process, one refresh: no cache to keep
	if err != nil {
		return nil, nil, err
	}
	k.pending = append(k.pending, wait) // the cache file's save, while the command answers
	if a.Commit == "" && len(a.Stale) == 0 && len(a.Refreshed) == 0 && a.Error == "" {
		return s, nil, nil
	}
	return s, &a, nil
}

// asOfLine prints what the answer is as of on stderr (text mode; JSON
// carries it as a field).
func (k *call) asOfLine(a *records.AsOf) {
	if a != nil && !k.out.json {
		fmt.Fprintf(k.env.Stderr, "memctl: %s\n", a.Line())
	}
}

// atCommit is the view of a git commit (anything git rev-parse takes) of
// the tree the store follows (SPEC.md §9.7): the last revision ingested at
// it, or at its nearest ingested ancestor.
func (k *call) atCommit(flag, commit string) (lmdbstore.At, error) {
	s, err := k.open(true)
	if err != nil {
		return lmdbstore.At{}, err
	}
	dir, _, ok := freshness.Tracked(s)
	if !ok {
		return lmdbstore.At{}, usageErr("%s: the store follows no git tree (run memctl ingest code DIR in a git work tree first)", flag)
	}
	res, err := freshness.ResolveCommit(s, dir, commit)
	var ce *freshness.CommitError
	switch {
	case errors.As(err, &ce):
		return lmdbstore.At{}, usageErr("%s: %v", flag, err)
	case errors.Is(err, freshness.ErrNoRevisionAtCommit):
		return lmdbstore.At{}, fmt.Errorf("%w: %s: no revision was ingested at %s or an ancestor of it", lmdbstore.ErrNotFound, flag, commit)
	case err != nil:
		return lmdbstore.At{}, err
	}
	return lmdbstore.AtRevision(res.Rev), nil
}
