package contextpack

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
)

// DefaultBudget is the token budget of a pack when the request gives none.
const DefaultBudget = 2000

// Errors. They wrap the store's sentinels, so callers that map those to
// exit codes (the CLI) need nothing new.
var (
	// ErrNoMatch: a target is no live key, no repository path, and no
	// query matches a node.
	ErrNoMatch = fmt.Errorf("%w: no match", lmdbstore.ErrNotFound)
	// ErrBadRequest: a request the assembler refuses (no target, a budget
	// too small for the header and footer, a bad since).
	ErrBadRequest = fmt.Errorf("%w: bad context request", lmdbstore.ErrInvalid)
)

// SinceKind selects what "Changed since" compares with.
type SinceKind int

const (
	SincePreviousRun SinceKind = iota // the default
	SinceRun                          // after the last revision of Since.Run
	SinceTask                         // after the last revision of Since.Task
	SinceRevision                     // after Since.Rev
	SinceTime                         // after the revision Since.Time selects
)

// Since is what "Changed since" compares with.
type Since struct {
	Kind SinceKind
	Run  string
	Task string
	Rev  lmdbstore.Revision
	Time time.Time
}

// Request is one context query.
type Request struct {
	Targets []string     // canonical keys, repository paths or queries (§8.1)
	Budget  int          // tokens of the Markdown rendering; 0: DefaultBudget
	At      lmdbstore.At // the view; zero: the latest state
	Since   Since
	// ValidAt is the time validity is judged at; zero: the clock.
	ValidAt time.Time
	// All shows superseded and expired items instead of counting them.
	All bool
	// Run and Task are the caller's session (MEMCTL_RUN, MEMCTL_TASK):
	// the current run for SincePreviousRun, and the task whose own
	// operations are not "earlier" attempts.
	Run, Task string
	// Feedback: the related ranking reads the feedback overlay at the
	// view (SPEC.md §8.2.2).
	Feedback bool
}

// Options configures an Assembler.
type Options struct {
	// Snapshots provides the engine snapshots, shared with the process's
	// other readers of them (the MCP server's analysis tools); nil: the
	// Assembler makes its own from SnapshotPath, Clock and Logf, and
	// closes it with itself.
	Snapshots *enginesnap.Provider
	// SnapshotPath is the engine snapshot file; "" is SnapshotFile in the
	// store directory, "-" keeps engine snapshots in memory only.
	SnapshotPath string
	// Clock is the time source for ValidAt; nil: time.Now.
	Clock func() time.Time
	// Logf receives notes about the snapshot file (a failed write, a file
	// ignored); nil: discarded.
	Logf func(format string, args ...any)
	// SyncLater is enginesnap.Options.SyncLater for the provider the
	// Assembler makes (a one-shot command: Close waits for the file).
	SyncLater bool
}

// Assembler builds context packs over one store. Hold one per store for
// the life of a process: it keeps the engine snapshot mapped and its
// validity checked between calls. Safe for concurrent use.
type Assembler struct {
	store    *lmdbstore.Store
	clock    func() time.Time
	enc      *bpe.Encoding
	snaps    *enginesnap.Provider
	ownSnaps bool // made by New: closed by Close

	headersMu sync.Mutex
	headers   map[lmdbstore.Revision]lmdbstore.LogHeader // log headers read so far (they never change)

	orphansMu   sync.Mutex
	orphanAt    map[lmdbstore.Revision][]freshness.Orphan // orphans by view revision (orphans.go)
	orphansPath string                                    // the orphans file ("": none)
	orphanScans atomic.Int64                              // scans made (tests)

	related relatedMemo   // the related walk's rankings of the current snapshot
	places  neighbourMemo // what the view says about the nodes they place
	tokens  tokenMemo     // token counts of the line parts packs repeat

	// rankSlack is how many places past limit + skipped the first,
	// shorter rankings of a pack reach (related.go); rankFull ranks the
	// full top-k at once instead (tests compare the two).
	rankSlack   int
	rankFull    bool
	rankRetries atomic.Int64 // packs that ranked again to the full top-k (tests)
}

// header is the log header of rev (commit time, scope, run, task), read
// once per Assembler from its revs entry: not from the log record, which
// holds all the revision's operations, so reading (and checking) it costs
// as much as the revision is large — on a store ingested in one revision,
// tens of megabytes.
func (a *Assembler) header(r *lmdbstore.ReadTxn, rev lmdbstore.Revision) (lmdbstore.LogHeader, error) {
	a.headersMu.Lock()
	h, ok := a.headers[rev]
	a.headersMu.Unlock()
	if ok {
		return h, nil
	}
	h, err := r.RevisionHeader(rev)
	if err != nil {
		return h, err
	}
	a.headersMu.Lock()
	if a.headers == nil {
		a.headers = make(map[lmdbstore.Revision]lmdbstore.LogHeader)
	}
	a.headers[rev] = h
	a.headersMu.Unlock()
	return h, nil
}

// revisionTime is the commit time of rev (header).
func (a *Assembler) revisionTime(r *lmdbstore.ReadTxn, rev lmdbstore.Revision) (time.Time, error) {
	h, err := a.header(r, rev)
	return h.TS, err
}

// New returns an Assembler over s (which must stay open while it is used).
func New(s *lmdbstore.Store, opts Options) *Assembler {
	a := &Assembler{store: s, clock: opts.Clock, enc: bpe.O200kBase(), snaps: opts.Snapshots, rankSlack: defaultRankSlack}
	if a.clock == nil {
		a.clock = time.Now
	}
	path := opts.SnapshotPath
	switch path {
	case "":
		path = filepath.Join(s.Path(), SnapshotFile)
	case "-":
		path = ""
	}
	if path != "" {
		a.orphansPath = path + OrphansSuffix
	}
	if a.snaps == nil {
		a.snaps = enginesnap.New(s, enginesnap.Options{Path: path, Clock: a.clock, Logf: opts.Logf, SyncLater: opts.SyncLater})
		a.ownSnaps = true
	}
	return a
}

// Close unmaps the engine snapshots of a provider the Assembler made
// (calls in flight finish first: each holds its own reference); a shared
// one stays open for its owner to close.
func (a *Assembler) Close() error {
	if a.ownSnaps {
		return a.snaps.Close()
	}
	return nil
}

// SnapshotBuilds is how many Ranking engine snapshots the Assembler's
// provider exported.
func (a *Assembler) SnapshotBuilds() int { return a.snaps.Builds(enginesnap.Ranking) }

// Assemble builds the context pack req asks for, in one read transaction.
func (a *Assembler) Assemble(req Request) (*Pack, error) {
	if len(req.Targets) == 0 {
		return nil, fmt.Errorf("%w: no target", ErrBadRequest)
	}
	for _, t := range req.Targets {
		if strings.TrimSpace(t) == "" || !utf8.ValidString(t) {
			return nil, fmt.Errorf("%w: empty or invalid target %q", ErrBadRequest, t)
		}
	}
	if req.Budget == 0 {
		req.Budget = DefaultBudget
	}
	if req.Budget < 0 {
		return nil, fmt.Errorf("%w: budget %d tokens", ErrBadRequest, req.Budget)
	}
	validAt := req.ValidAt
	if validAt.IsZero() {
		validAt = a.clock()
	}
	var pack *Pack
	err := a.store.View(func(r *lmdbstore.ReadTxn) error {
		c := &call{a: a, r: r, req: req, validAt: validAt}
		defer c.done()
		var err error
		pack, err = c.run()
		return err
	})
	return pack, err
}

// call is one Assemble in its read transaction.
type call struct {
	a       *Assembler
	r       *lmdbstore.ReadTxn
	req     Request
	validAt time.Time
	view    lmdbstore.Revision
	at      lmdbstore.At
	snap    *enginesnap.Snap
	snapIn  SnapshotInfo
	keys    map[lmdbstore.NodeID]string // keyOf's cache: history asks for the same peers again and again
}

// keyOf is the canonical key of id, looked up once per call.
func (c *call) keyOf(id lmdbstore.NodeID) (string, error) {
	if k, ok := c.keys[id]; ok {
		return k, nil
	}
	k, err := c.r.KeyOf(id)
	if err != nil {
		return "", err
	}
	if c.keys == nil {
		c.keys = make(map[lmdbstore.NodeID]string)
	}
	c.keys[id] = k
	return k, nil
}

func (c *call) done() {
	if c.snap != nil {
		c.snap.Release()
	}
}

// engine returns the engine snapshot serving the view (kept for the call).
func (c *call) engine() (*enginesnap.Snap, error) {
	if c.snap != nil {
		return c.snap, nil
	}
	e, info, err := c.a.snapshotFor(c.r, c.view)
	if err != nil {
		return nil, err
	}
	c.snap, c.snapIn = e, info
	return e, nil
}

func (c *call) run() (*Pack, error) {
	var err error
	if c.view, err = c.r.Resolve(c.req.At); err != nil {
		return nil, err
	}
	c.at = lmdbstore.AtRevision(c.view)
	p := &Pack{Rev: c.view, Budget: c.req.Budget, Encoding: c.a.enc.Name()}
	if c.view > 0 {
		if p.TS, err = c.a.revisionTime(c.r, c.view); err != nil {
			return nil, err
		}
	}
	if p.Targets, err = c.resolveTargets(); err != nil {
		return nil, err
	}
	orphans, err := c.a.orphans(c.r, c.view)
	if err != nil {
		return nil, err
	}
	ap, err := applies(c.r, p.Targets, c.at, c.validAt, c.req.All, orphans)
	if err != nil {
		return nil, err
	}
	p.Applies, p.hidden = ap.items, ap.hidden
	limit := relatedLimit(c.req.Budget)
	if p.Related, err = c.related(p.Targets, limit); err != nil {
		return nil, err
	}
	p.Snapshot = c.snapIn
	if p.Since, err = c.resolveSince(); err != nil {
		return nil, err
	}
	if p.Changed, p.Attempted, err = c.history(p); err != nil {
		return nil, err
	}
	if err := p.fit(c.a.enc, &c.a.tokens); err != nil {
		return nil, err
	}
	return p, nil
}

// relatedLimit is how many related items a pack considers: more than a
// budget of that size can show (about 12 tokens a line).
func relatedLimit(budget int) int { return min(max(20, budget/12), 2000) }

// resolveTargets resolves every target: a live key or a repository path
// through the store, anything else as a query over the engine snapshot
// (every match a target). Duplicates are dropped.
func (c *call) resolveTargets() ([]Target, error) {
	var out []Target
	seen := map[string]bool{}
	add := func(t Target) error {
		if seen[t.Key] {
			return nil
		}
		seen[t.Key] = true
		if err := complete(c.r, &t, c.at); err != nil {
			return err
		}
		out = append(out, t)
		return nil
	}
	for _, q := range c.req.Targets {
		t, ok, err := resolveDirect(c.r, q, c.at)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := add(t); err != nil {
				return nil, err
			}
			continue
		}
		e, err := c.engine()
		if err != nil {
			return nil, err
		}
		_, matches, err := e.Engine.FindSeeds([]string{q}, engines.DefaultSeedParams())
		if err != nil {
			return nil, err
		}
		n := 0
		for _, m := range matches {
			key, err := e.Graph.Key(m.Node)
			if err != nil {
				return nil, err
			}
			node, live, err := liveNode(c.r, key, c.at)
			if err != nil {
				return nil, err
			}
			if !live {
				continue // in the snapshot but deleted at the view
			}
			n++
			if err := add(Target{Query: q, Key: key, Match: m.Kind.String(), Node: node}); err != nil {
				return nil, err
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: no node matches %q at revision %d", ErrNoMatch, q, c.view)
		}
	}
	return out, nil
}

// resolveSince finds the revision "Changed since" starts after.
func (c *call) resolveSince() (SinceInfo, error) {
	s := c.req.Since
	in := SinceInfo{Kind: s.Kind, Run: s.Run, Task: s.Task}
	switch s.Kind {
	case SinceRevision:
		if s.Rev > c.view {
			return in, fmt.Errorf("%w: --since %d is after the view (revision %d)", ErrBadRequest, s.Rev, c.view)
		}
		in.Rev, in.Found = s.Rev, true
		return in, nil
	case SinceTime:
		in.Time = s.Time
		rev, err := c.r.Resolve(lmdbstore.AtTime(s.Time))
		switch {
		case isNotFound(err):
			rev = 0 // before the first commit: everything is newer
		case errors.Is(err, lmdbstore.ErrBeforeHorizon):
			// The log is never pruned: a revision below the horizon is
			// still a valid boundary. Find it through the headers.
			rev, err = c.revAtTime(s.Time)
			if err != nil {
				return in, err
			}
		case err != nil:
			return in, err
		}
		in.Rev, in.Found = min(rev, c.view), true
		return in, nil
	}
	current := c.req.Run
	var found bool
	var rev lmdbstore.Revision
	visit := func(h lmdbstore.LogHeader) bool {
		switch s.Kind {
		case SinceRun:
			found = h.RunID == s.Run
		case SinceTask:
			found = h.TaskID == s.Task
		default:
			if h.RunID == "" {
				return true
			}
			if current == "" {
				current = h.RunID // the newest run is the current one
				return true
			}
			found = h.RunID != current
			if found {
				in.Run = h.RunID
			}
		}
		if found {
			rev = h.Rev
		}
		return !found
	}
	// Newest first, through the header cache (revisions are 1…view).
	for r := c.view; r >= 1; r-- {
		h, err := c.a.header(c.r, r)
		if err != nil {
			return in, err
		}
		if !visit(h) {
			break
		}
	}
	in.Current = current
	switch {
	case found:
		in.Rev, in.Found = rev, true
	case s.Kind == SinceRun:
		return in, fmt.Errorf("%w: run %q wrote no revision up to %d", lmdbstore.ErrNotFound, s.Run, c.view)
	case s.Kind == SinceTask:
		return in, fmt.Errorf("%w: task %q wrote no revision up to %d", lmdbstore.ErrNotFound, s.Task, c.view)
	}
	return in, nil
}

// revAtTime is the latest revision committed at or before t, from the log
// headers (below the retention horizon too).
func (c *call) revAtTime(t time.Time) (lmdbstore.Revision, error) {
	var rev lmdbstore.Revision
	err := c.r.LogHeaders(c.view, func(h lmdbstore.LogHeader) bool {
		if !h.TS.After(t) {
			rev = h.Rev
			return false
		}
		return true
	})
	return rev, err
}

// SinceInfo says what "Changed since" compared with.
type SinceInfo struct {
	Kind    SinceKind
	Run     string // SinceRun; for SincePreviousRun, the previous run found
	Task    string
	Time    time.Time
	Current string // SincePreviousRun: the run taken as the current one
	Rev     lmdbstore.Revision
	Found   bool // false: no previous run (nothing is listed as changed)
}

// kindName is the JSON name of a SinceKind.
func (k SinceKind) kindName() string {
	return [...]string{"previous_run", "run", "task", "rev", "time"}[k]
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
