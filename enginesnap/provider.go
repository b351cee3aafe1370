package enginesnap

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// ErrClosed: the provider was closed.
var ErrClosed = errors.New("engine snapshot provider closed")

// Options configures a Provider.
type Options struct {
	// Path is the file Ranking snapshots of the latest view are written
	// to and mapped from (SnapshotFile in the store directory, for the
	// context command); "" keeps every snapshot in memory.
	Path string
	// Clock is the time items are judged valid or expired at, and the
	// time Exact snapshots are checked against; nil: time.Now.
	Clock func() time.Time
	// Logf receives notes about the file (a failed write, a file
	// ignored); nil: discarded.
	Logf func(format string, args ...any)
	// SyncLater answers from a new export as soon as it is written, its
	// syncs and rename into Path running on another goroutine; the
	// provider's next call and Close wait for them. Without it a call
	// returns once the file is in place (another provider finds it at
	// once).
	SyncLater bool
}

// Snap is one engine snapshot: an export and the engine over it.
type Snap struct {
	Graph      *csr.Graph
	Engine     *engines.Engine
	Rev        lmdbstore.Revision // the revision exported
	CommitTime int64              // of Rev, as the file records it
	Path       string             // the file it is mapped from; "" in memory

	kind    Kind
	ranking []uint32  // the ranking relations' ids
	validAt time.Time // when items were judged valid (zero: unknown, a file)

	mu     sync.Mutex // guards lo, hi, until
	lo, hi lmdbstore.Revision
	until  time.Time // Exact: the first valid-time bound after validAt (zero: none)

	refs atomic.Int64 // holders, +1 while a provider slot holds it
}

// Release drops the caller's reference; the last one unmaps a file. A
// snapshot held in memory (every Exact one, and Ranking ones of views the
// file does not serve) stays valid while anything references it: its
// memory is the garbage collector's.
func (s *Snap) Release() {
	if s.refs.Add(-1) == 0 && s.Path != "" {
		_ = s.Graph.Close()
	}
}

func (s *Snap) acquire() { s.refs.Add(1) }

// RankingRelations are the ids of the relations IsRankingRelation
// accepts, in this snapshot.
func (s *Snap) RankingRelations() []uint32 { return s.ranking }

// PageRank is the stored section (the unweighted defaults, written with
// every export here) or, weighted, computed.
func (s *Snap) PageRank(weighted bool) ([]float64, error) {
	return engines.StoredOrComputedPageRank(s.Engine, weighted)
}

func newSnap(g *csr.Graph, k Kind, path string) (*Snap, error) {
	eng, err := engines.New(g)
	if err != nil {
		_ = g.Close()
		return nil, err
	}
	rels, err := g.Relations()
	if err != nil {
		_ = g.Close()
		return nil, err
	}
	s := &Snap{Graph: g, Engine: eng, Rev: lmdbstore.Revision(g.Revision()), CommitTime: g.CommitTime(), Path: path, kind: k}
	s.lo, s.hi = s.Rev, s.Rev
	for _, r := range rels {
		if IsRankingRelation(r.Name) {
			s.ranking = append(s.ranking, r.ID)
		}
	}
	s.refs.Store(1)
	return s, nil
}

// exportOptions: every export carries the PageRank section `memctl
// export` writes by default, so ties rank as on a default export.
func exportOptions() snapshot.WriterOptions {
	return snapshot.WriterOptions{Extra: engines.PageRankSection}
}

// slots are the snapshots of one kind: the latest view's and one
// point-in-time one.
type slots struct {
	mu        sync.Mutex // held while looking up or building: one export at a time
	cur, past *Snap
	file      fileState
	builds    atomic.Int64
	fromBase  atomic.Int64 // exports that started from the previous one
}

// Provider keeps the engine snapshots of one store. Safe for concurrent
// use; hold one per store for the life of a process.
type Provider struct {
	store  *lmdbstore.Store
	path   string
	clock  func() time.Time
	logf   func(format string, args ...any)
	kinds  [numKinds]slots
	closed atomic.Bool
	later  bool // Options.SyncLater
	// pending waits for the file an export is putting in place (nil:
	// none; see exportFile), guarded by fileMu.
	fileMu  sync.Mutex
	pending func()
}

// New returns a Provider over s (which must stay open while it is used).
func New(s *lmdbstore.Store, opts Options) *Provider {
	p := &Provider{store: s, path: opts.Path, clock: opts.Clock, logf: opts.Logf, later: opts.SyncLater}
	if p.clock == nil {
		p.clock = time.Now
	}
	if p.logf == nil {
		p.logf = func(string, ...any) {}
	}
	return p
}

// Builds is how many snapshots of kind k this provider exported.
func (p *Provider) Builds(k Kind) int { return int(p.kinds[k].builds.Load()) }

// FromBase is how many of those exports started from the snapshot they
// replaced (storesnap.Base: its nodes reused where the log shows them
// unchanged).
func (p *Provider) FromBase(k Kind) int { return int(p.kinds[k].fromBase.Load()) }

// Close drops the provider's references (calls holding a snapshot finish
// on it first), once the file an export is putting in place is there.
func (p *Provider) Close() error {
	p.closed.Store(true)
	for k := range p.kinds {
		sl := &p.kinds[k]
		sl.mu.Lock()
		p.awaitFile()
		for _, slot := range []**Snap{&sl.cur, &sl.past} {
			if *slot != nil {
				(*slot).Release()
				*slot = nil
			}
		}
		sl.mu.Unlock()
	}
	return nil
}

// At is Get in a read transaction of its own, with at resolved in it:
// the one call a command makes for the snapshot at its view.
func (p *Provider) At(k Kind, at lmdbstore.At) (*Snap, lmdbstore.Revision, error) {
	var s *Snap
	var view lmdbstore.Revision
	err := p.store.View(func(r *lmdbstore.ReadTxn) error {
		var err error
		if view, err = r.Resolve(at); err != nil {
			return err
		}
		s, _, err = p.Get(r, k, view)
		return err
	})
	return s, view, err
}

// Get returns a referenced snapshot of kind k serving view (a revision r
// holds; r's revision is taken as the latest) and whether this call
// exported it. Release it when done.
func (p *Provider) Get(r *lmdbstore.ReadTxn, k Kind, view lmdbstore.Revision) (*Snap, bool, error) {
	if p.closed.Load() {
		return nil, false, ErrClosed
	}
	sl := &p.kinds[k]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	p.awaitFile()
	now := p.clock()
	for _, s := range []*Snap{sl.cur, sl.past} {
		if s == nil {
			continue
		}
		ok, err := s.serves(r, view, now)
		if err != nil {
			return nil, false, err
		}
		if ok {
			p.saveValidity(sl, s)
			s.acquire()
			return s, false, nil
		}
	}
	// newest: the view is the latest any call has seen (a call in an
	// older transaction than one already served goes to memory).
	newest := view == r.Revision() && (sl.cur == nil || sl.cur.Rev <= view)
	persist := k == Ranking && p.path != ""
	if persist {
		// Another process may have exported a newer file.
		s, err := p.openFile(r, sl)
		if err != nil {
			return nil, false, err
		}
		if s != nil {
			ok, err := s.serves(r, view, now)
			if err != nil {
				s.Release()
				return nil, false, err
			}
			if ok || newest {
				replace(&sl.cur, s)
			} else {
				s.Release()
			}
			if ok {
				p.saveValidity(sl, s)
				s.acquire()
				return s, false, nil
			}
		}
	}
	if k == Exact && p.path != "" && newest {
		// The Ranking file holds the same export; with its valid-time
		// window recorded it serves Exact's rules too (a fresh process's
		// first analysis call maps it instead of exporting).
		s, err := p.openExact(r, sl)
		if err != nil {
			return nil, false, err
		}
		if s != nil {
			ok, err := s.serves(r, view, now)
			if err == nil && ok {
				replace(&sl.cur, s)
				s.acquire()
				return s, false, nil
			}
			s.Release()
			if err != nil {
				return nil, false, err
			}
		}
	}
	// Export: the latest view to the file (when it can be written), any
	// other into memory.
	var s *Snap
	var err error
	if persist && newest {
		if s, err = p.exportFile(sl, view, now); err != nil {
			p.logf("context: writing %s failed, exporting in memory: %v", p.path, err)
			s = nil
		}
	}
	if s == nil {
		if s, err = p.exportMemory(k, sl, view, now); err != nil {
			return nil, false, err
		}
	}
	sl.builds.Add(1)
	// The latest view's snapshot (and the file) in cur, any other in past:
	// a past view never displaces the snapshot later calls will want.
	if s.Path != "" || newest {
		replace(&sl.cur, s)
	} else {
		replace(&sl.past, s)
	}
	p.saveValidity(sl, s)
	s.acquire()
	return s, true, nil
}

func (p *Provider) exportMemory(k Kind, sl *slots, view lmdbstore.Revision, now time.Time) (*Snap, error) {
	m, err := storesnap.ExportInMemoryFrom(p.store, lmdbstore.AtRevision(view), lmdbstore.StatusFilter{ValidAt: now}, exportOptions(), sl.base())
	if err != nil {
		return nil, err
	}
	g, err := csr.FromBytes(m.Bytes)
	if err != nil {
		return nil, err
	}
	s, err := newSnap(g, k, "")
	if err != nil {
		return nil, err
	}
	s.validAt, s.until = m.ValidAt, m.ValidUntil
	if m.FromBase {
		sl.fromBase.Add(1)
	}
	return s, nil
}

// base is the export a new one of this kind starts from
// (storesnap.Base): the latest view's snapshot, when the valid-at window
// of its content is known; nil otherwise. Every snapshot here is a plain
// export (nothing included) at its own valid-at time; storesnap checks
// the rest.
func (sl *slots) base() *storesnap.Base {
	s := sl.cur
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.validAt.IsZero() {
		return nil
	}
	return &storesnap.Base{File: s.Graph.File(), ValidAt: s.validAt, ValidUntil: s.until}
}

// replace installs s in slot, retiring what was there.
func replace(slot **Snap, s *Snap) {
	if old := *slot; old != nil && old != s {
		old.Release()
	}
	*slot = s
}
