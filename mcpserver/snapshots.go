package mcpserver

// Engine snapshots. The engines read a CSR snapshot, not the store; the
// server's analysis tools ask the process's one enginesnap.Provider (shared
// with its context assembler) for an Exact snapshot at the view: what an
// export at that revision, judged at the server's clock, holds. The
// provider owns the rules (package enginesnap, SPEC.md §10.3): kept
// across kv writes and payload-only node puts, rebuilt on anything else
// the engines can see or at the first valid-time bound.

import (
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
)

// engineSnap is the snapshot one analysis call reads.
type engineSnap struct {
	rev   lmdbstore.Revision // the view's revision: the snapshot serves it
	graph *csr.Graph
	eng   *engines.Engine
	snap  *enginesnap.Snap
}

// pageRank is the snapshot's PageRank: the stored section (the unweighted
// defaults, written with the export), or computed when weighted.
func (e *engineSnap) pageRank(weighted bool) ([]float64, error) {
	return e.snap.PageRank(weighted)
}

// snapshot returns the engine snapshot at the view v selects. Exact
// snapshots are held in memory, valid for as long as the caller
// references them, so the provider's reference is dropped at once.
func (s *Server) snapshot(v ViewArgs) (*engineSnap, error) {
	at, err := v.at()
	if err != nil {
		return nil, err
	}
	var e *engineSnap
	err = s.store.View(func(r *lmdbstore.ReadTxn) error {
		rev, err := r.Resolve(at)
		if err != nil {
			return err
		}
		sn, built, err := s.snaps.Get(r, enginesnap.Exact, rev)
		if err != nil {
			return err
		}
		defer sn.Release()
		if built {
			s.log.Debug("engine snapshot built", "rev", rev, "nodes", sn.Graph.NumNodes(), "edges", sn.Graph.NumEdges())
		}
		e = &engineSnap{rev: rev, graph: sn.Graph, eng: sn.Engine, snap: sn}
		return nil
	})
	return e, err
}

// FreshArgs: whether an answer first brings the code graph in step with
// the working tree (SPEC.md §9.10).
type FreshArgs struct {
	Refresh *bool `json:"refresh,omitempty" jsonschema:"re-read the files changed since the last ingest before answering (default true; false answers from memory as it is and lists them as stale)"`
}

// freshen refreshes the code graph the store follows before an answer at
// the latest view (a past view is history: nothing to refresh), unless
// the call or the server (--no-refresh) turns it off, and says what the
// answer is as of. Nil when the store follows no tree. A failed refresh
// is logged and reported in the record; the answer reads memory as it is.
func (s *Server) freshen(f FreshArgs, v ViewArgs) *records.AsOf {
	if v.AtRev != nil || v.AtTime != "" {
		return nil
	}
	refresh := !s.opts.NoRefresh && (f.Refresh == nil || *f.Refresh)
	a, _, err := ops.Freshen(s.store, refresh, s.refresh) // with a cache, nothing is left running
	if err != nil {
		s.log.Warn("refresh before answering", "err", err)
		return nil
	}
	if a.Error != "" {
		s.log.Warn("refresh before answering failed; answering from memory", "err", a.Error)
	}
	if a.Commit == "" && len(a.Stale) == 0 && len(a.Refreshed) == 0 && a.Error == "" {
		return nil
	}
	return &a
}
