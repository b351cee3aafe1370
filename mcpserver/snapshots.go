package mcpserver

// Engine snapshots. The engines read a CSR snapshot, not the store, so the
// server exports one in memory (storesnap.ExportBytes: one read
// transaction at one revision) when an analysis call needs a revision it
// does not hold. The latest one is kept while the store stays at its
// revision: a call first reads the store's current revision (a fresh read
// transaction, so commits by other processes count), and rebuilds when the
// store moved. One point-in-time snapshot (at_rev / at_time) is kept
// beside it. A snapshot is immutable, so calls that hold an old one finish
// on it while the next call builds a new one.

import (
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

	prOnce sync.Once // unweighted PageRank, computed on first use
	ranks  []float64
	prErr  error
}

// pageRank is the unweighted default PageRank of the snapshot, computed
// once; weighted is computed per call.
func (e *engineSnap) pageRank(weighted bool) ([]float64, error) {
	if weighted {
		return engines.StoredOrComputedPageRank(e.eng, true)
	}
	e.prOnce.Do(func() { e.ranks, e.prErr = engines.StoredOrComputedPageRank(e.eng, false) })
	return e.ranks, e.prErr
}

type snapshotCache struct {
	mu     sync.Mutex // held while looking up or building: one export at a time
	latest *engineSnap
	past   *engineSnap
	builds int // exports so far (tests read it through Stats)
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
	e := &engineSnap{rev: rev, graph: g, eng: eng}
	c.builds++
	if at.IsLatest() || c.latest == nil || rev > c.latest.rev {
		c.latest = e
	} else {
		c.past = e
	}
	s.log.Debug("engine snapshot built", "rev", rev, "nodes", g.NumNodes(), "edges", g.NumEdges(),
		"bytes", len(b), "took", time.Since(start))
	return e, nil
}

// SnapshotBuilds is how many engine snapshots the server has exported.
func (s *Server) SnapshotBuilds() int {
	s.snaps.mu.Lock()
	defer s.snaps.mu.Unlock()
	return s.snaps.builds
}
