package mcpserver

// Engine snapshots. The engines read a CSR snapshot, not the store, so the
// server exports one in memory (storesnap.ExportInMemory: one read
// transaction at one revision, with the PageRank section `memctl export`
// writes, so ties rank as in the CLI) when an analysis call needs a
// revision it does not hold. The latest one is kept while the store
// stays at its revision: a call first reads the store's current revision
// (a fresh read transaction, so commits by other processes count), and
// rebuilds when the store moved in a way the engines can see. One point-in-time snapshot
// (at_rev / at_time) is kept beside it. A snapshot is immutable, so calls
// that hold an old one finish on it while the next call builds a new one.
//
// The engines read keys, relations and edges, never node types or
// payloads. So when every operation committed since the latest snapshot is
// a kv write or a put of a node the snapshot already holds as live (a new
// payload or type: what add_observations writes), the snapshot still gives
// exactly the answers a new export would, and is carried forward to the new
// revision instead of rebuilt (stillValid).
//
// Valid time: an export leaves out what is not valid at the time it was
// made, so a snapshot serves only until the first valid-time bound of the
// items that decide its content (storesnap.InMemory.ValidUntil), even at
// the same revision; and a write carried forward must leave every item as
// valid now as it was (a put's valid time contains now, and so did the
// kv entry's before), its own bounds lowering the snapshot's ValidUntil.

import (
	"errors"
	"sync"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// engineSnap is one in-memory snapshot and the engine over it.
type engineSnap struct {
	rev   lmdbstore.Revision
	graph *csr.Graph
	eng   *engines.Engine
	// validAt, validUntil: the valid-at times it serves (zero validUntil:
	// no end).
	validAt, validUntil time.Time
}

// serves reports whether e's content is what an export judged at now
// holds.
func (e *engineSnap) serves(now time.Time) bool {
	return !now.Before(e.validAt) && (e.validUntil.IsZero() || now.Before(e.validUntil))
}

// pageRank is the snapshot's PageRank: the stored section (the unweighted
// defaults, written with the export), or computed when weighted.
func (e *engineSnap) pageRank(weighted bool) ([]float64, error) {
	return engines.StoredOrComputedPageRank(e.eng, weighted)
}

type snapshotCache struct {
	mu     sync.Mutex // held while looking up or building: one export at a time
	latest *engineSnap
	past   *engineSnap
}

// snapshot returns the engine snapshot at the view v selects.
func (s *Server) snapshot(v ViewArgs) (*engineSnap, error) {
	at, err := v.at()
	if err != nil {
		return nil, err
	}
	var rev lmdbstore.Revision
	err = s.store.View(func(r *lmdbstore.ReadTxn) error {
		var err error
		rev, err = r.Resolve(at)
		return err
	})
	if err != nil {
		return nil, err
	}
	c := &s.snaps
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for _, e := range []*engineSnap{c.latest, c.past} {
		if e != nil && e.rev == rev && e.serves(now) {
			return e, nil
		}
	}
	if l := c.latest; l != nil && l.rev < rev && l.serves(now) {
		until, ok, err := s.stillValid(l, rev, now)
		if err != nil {
			return nil, err
		}
		if ok {
			// A new value: calls still holding the old one keep its rev.
			s.log.Debug("engine snapshot carried forward", "from", l.rev, "to", rev)
			c.latest = &engineSnap{rev: rev, graph: l.graph, eng: l.eng, validAt: l.validAt, validUntil: until}
			return c.latest, nil
		}
	}
	start := time.Now()
	m, err := storesnap.ExportInMemory(s.store, lmdbstore.AtRevision(rev), lmdbstore.StatusFilter{ValidAt: now}, snapshot.WriterOptions{Extra: engines.PageRankSection})
	if err != nil {
		return nil, err
	}
	g, err := csr.FromBytes(m.Bytes)
	if err != nil {
		return nil, err
	}
	eng, err := engines.New(g)
	if err != nil {
		return nil, err
	}
	e := &engineSnap{rev: rev, graph: g, eng: eng, validAt: m.ValidAt, validUntil: m.ValidUntil}
	if at.IsLatest() || c.latest == nil || rev > c.latest.rev {
		c.latest = e
	} else {
		c.past = e
	}
	s.log.Debug("engine snapshot built", "rev", rev, "nodes", g.NumNodes(), "edges", g.NumEdges(),
		"bytes", len(m.Bytes), "valid_until", m.ValidUntil, "took", time.Since(start))
	return e, nil
}

// maxCarryOps bounds the log read that decides whether a snapshot can be
// carried forward; past it, rebuilding is cheaper to reason about.
const maxCarryOps = 10000

// errNotCarried stops that log read at the first operation the engines see.
var errNotCarried = errors.New("snapshot invalidated")

// stillValid reports whether every operation after e.rev up to rev leaves
// what the engines read, judged at now, unchanged: kv writes that leave
// the entry valid now if it was, and puts of nodes e holds as live whose
// valid time contains now. until is e's validUntil lowered to the next
// bound of the valid times those operations wrote.
func (s *Server) stillValid(e *engineSnap, rev lmdbstore.Revision, now time.Time) (until time.Time, ok bool, err error) {
	until = e.validUntil
	note := func(v lmdbstore.Validity) { until = lmdbstore.EarlierBound(until, v.NextChange(now)) }
	n := 0
	err = s.store.View(func(r *lmdbstore.ReadTxn) error {
		return r.DiffSince(lmdbstore.AtRevision(e.rev), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			if op.Rev > rev {
				return nil
			}
			if n++; n > maxCarryOps {
				return errNotCarried
			}
			switch op.Kind {
			case lmdbstore.OpPutKV, lmdbstore.OpDelKV:
				// The entry's address may end edges: it must be as valid
				// now as it was when e was exported.
				before, err := r.ValidTime(lmdbstore.KVAddress(op.Scope, op.Namespace, op.Key), lmdbstore.AtRevision(e.rev))
				if err != nil {
					return err
				}
				if before.Contains(now) && (op.Kind == lmdbstore.OpDelKV || op.Valid.Contains(now)) {
					note(op.Valid)
					return nil
				}
			case lmdbstore.OpPutNode:
				idx, ok, err := e.graph.LookupKey(op.NodeKey)
				if err != nil {
					return err
				}
				if ok && op.Valid.Contains(now) {
					node, err := e.graph.Node(idx)
					if err != nil {
						return err
					}
					if !node.Missing {
						note(op.Valid)
						return nil
					}
				}
			}
			return errNotCarried
		})
	})
	if errors.Is(err, errNotCarried) {
		return time.Time{}, false, nil
	}
	return until, err == nil, err
}
