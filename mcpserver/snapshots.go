package mcpserver

// Engine snapshots. The engines read a CSR snapshot, not the store, so the
// server exports one in memory (storesnap.ExportBytes: one read
// transaction at one revision) when an analysis call needs a revision it
// does not hold. The latest one is kept while the store stays at its
// revision: a call first reads the store's current revision (a fresh read
// transaction, so commits by other processes count), and rebuilds when the
// store moved in a way the engines can see. One point-in-time snapshot
// (at_rev / at_time) is kept beside it. A snapshot is immutable, so calls
// that hold an old one finish on it while the next call builds a new one.
//
// The engines read keys, relations and edges, never node types or
// payloads. So when every operation committed since the latest snapshot is
// a kv write or a put of a node the snapshot already holds as live (a new
// payload or type: what add_observations writes), the snapshot still gives
// exactly the answers a new export would, and is carried forward to the new
// revision instead of rebuilt (stillValid).

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

	pr *pageRankCache // shared by the revisions the snapshot is carried to
}

// pageRankCache is a snapshot's unweighted PageRank, computed on first use.
type pageRankCache struct {
	once  sync.Once
	ranks []float64
	err   error
}

// pageRank is the unweighted default PageRank of the snapshot, computed
// once; weighted is computed per call.
func (e *engineSnap) pageRank(weighted bool) ([]float64, error) {
	if weighted {
		return engines.StoredOrComputedPageRank(e.eng, true)
	}
	e.pr.once.Do(func() { e.pr.ranks, e.pr.err = engines.StoredOrComputedPageRank(e.eng, false) })
	return e.pr.ranks, e.pr.err
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
	for _, e := range []*engineSnap{c.latest, c.past} {
		if e != nil && e.rev == rev {
			return e, nil
		}
	}
	if c.latest != nil && c.latest.rev < rev {
		ok, err := s.stillValid(c.latest, rev)
		if err != nil {
			return nil, err
		}
		if ok {
			// A new value: calls still holding the old one keep its rev.
			s.log.Debug("engine snapshot carried forward", "from", c.latest.rev, "to", rev)
			c.latest = &engineSnap{rev: rev, graph: c.latest.graph, eng: c.latest.eng, pr: c.latest.pr}
			return c.latest, nil
		}
	}
	start := time.Now()
	b, err := storesnap.ExportBytes(s.store, lmdbstore.AtRevision(rev), snapshot.WriterOptions{})
	if err != nil {
		return nil, err
	}
	g, err := csr.FromBytes(b)
	if err != nil {
		return nil, err
	}
	eng, err := engines.New(g)
	if err != nil {
		return nil, err
	}
	e := &engineSnap{rev: rev, graph: g, eng: eng, pr: &pageRankCache{}}
	if at.IsLatest() || c.latest == nil || rev > c.latest.rev {
		c.latest = e
	} else {
		c.past = e
	}
	s.log.Debug("engine snapshot built", "rev", rev, "nodes", g.NumNodes(), "edges", g.NumEdges(),
		"bytes", len(b), "took", time.Since(start))
	return e, nil
}

// maxCarryOps bounds the log read that decides whether a snapshot can be
// carried forward; past it, rebuilding is cheaper to reason about.
const maxCarryOps = 10000

// errNotCarried stops that log read at the first operation the engines see.
var errNotCarried = errors.New("snapshot invalidated")

// stillValid reports whether every operation after e.rev up to rev leaves
// what the engines read unchanged: kv writes, and puts of nodes e holds as
// live nodes.
func (s *Server) stillValid(e *engineSnap, rev lmdbstore.Revision) (bool, error) {
	n := 0
	err := s.store.View(func(r *lmdbstore.ReadTxn) error {
		return r.DiffSince(lmdbstore.AtRevision(e.rev), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			if op.Rev > rev {
				return nil
			}
			if n++; n > maxCarryOps {
				return errNotCarried
			}
			switch op.Kind {
			case lmdbstore.OpPutKV, lmdbstore.OpDelKV:
				return nil
			case lmdbstore.OpPutNode:
				idx, ok, err := e.graph.LookupKey(op.NodeKey)
				if err != nil {
					return err
				}
				if ok {
					node, err := e.graph.Node(idx)
					if err != nil {
						return err
					}
					if !node.Missing {
						return nil
					}
				}
			}
			return errNotCarried
		})
	})
	if errors.Is(err, errNotCarried) {
		return false, nil
	}
	return err == nil, err
}
