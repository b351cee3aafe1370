package ops

// Freshness before an answer (SPEC.md §9.10): context, the engine
// commands and the MCP analysis tools call Freshen first, so an answer
// sees the working tree as it is now, and say what it is as of. A store
// that follows no tree (its code was never ingested with `ingest code`)
// answers from memory as it is.

import (
	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// Freshen brings the code graph s follows in step with its tree, unless
// refresh is false, and returns what an answer read at the latest revision
// is as of. A refresh that fails is not the answer's failure: the answer
// reads memory as it is, and the record carries the stale files and the
// error. cache is a long-lived process's refresh cache (nil: none; then
// the refresh cache file is saved while the caller answers, and the
// caller calls wait before it exits).
func Freshen(s *lmdbstore.Store, refresh bool, cache *freshness.Cache) (a records.AsOf, wait func(), err error) {
	res, tracked, err := freshness.RefreshTracked(s, !refresh, cache)
	out := records.AsOf{Commit: res.Commit, Dirty: res.Dirty, Stale: res.Stale}
	if res.Refreshed {
		out.Refreshed = res.Changed
	}
	if err != nil {
		out.Error = err.Error()
	}
	if !tracked || res.AsOf == 0 {
		if verr := s.View(func(r *lmdbstore.ReadTxn) error { out.Rev = uint64(r.Revision()); return nil }); verr != nil {
			res.Wait()
			return out, func() {}, verr
		}
	} else {
		out.Rev = uint64(res.AsOf)
	}
	return out, res.Wait, nil
}
