package contextpack

import (
	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
)

// maxCachedOrphanViews bounds the orphan lists an Assembler keeps (one per
// view revision it answered at; a long-lived process mostly asks at the
// latest one).
const maxCachedOrphanViews = 4

// orphans is freshness.Orphans at revision view, computed once per view
// revision per Assembler. Finding them scans every live edge of the store
// (a memory edge may point anywhere), which on the Go standard library
// (777K edges) cost about 60 ms a call, most of a long-lived context call.
// The list depends only on the committed state at view: a committed
// revision never changes (history is append-only; a compaction horizon
// refuses views below it rather than changing them), so a cached list
// stays true. The returned slice is shared: callers must not modify it.
func (a *Assembler) orphans(r *lmdbstore.ReadTxn, view lmdbstore.Revision) ([]freshness.Orphan, error) {
	a.orphansMu.Lock()
	o, ok := a.orphanAt[view]
	a.orphansMu.Unlock()
	if ok {
		return o, nil
	}
	o, err := freshness.Orphans(r, lmdbstore.AtRevision(view))
	if err != nil {
		return nil, err
	}
	a.orphansMu.Lock()
	if a.orphanAt == nil || len(a.orphanAt) >= maxCachedOrphanViews {
		a.orphanAt = make(map[lmdbstore.Revision][]freshness.Orphan, maxCachedOrphanViews)
	}
	a.orphanAt[view] = o
	a.orphansMu.Unlock()
	return o, nil
}
