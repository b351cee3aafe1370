package contextpack

// The orphans of a view (SPEC.md §9.8) and where a pack finds them.
// Finding them scans every edge of the memory relations (a memory edge
// may point anywhere), which on the Go standard library (777K edges)
// decodes every adjacency chunk: ~46 cpu-ms, most of a one-shot call. The
// list depends only on the committed state at the view's revision (a
// committed revision never changes: history is append-only, and a
// compaction horizon refuses views below it rather than changing them),
// so it is kept: in memory per view revision by a long-lived Assembler,
// and for the latest revision in the orphans file beside the engine
// snapshot (SPEC.md §12.5), so the next process reads it instead:
//
//	{"rev":R,"commit_time":NS,"orphans":[{"item",…},…]}
//
// R and NS name the revision (its commit time as the store records it);
// the file is used only when both match the view, else ignored and
// rewritten. It is a cache: written under a temporary name and renamed,
// not synced; a missing, unreadable or damaged file is never an error.

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
)

// OrphansSuffix names the orphans file: the engine snapshot file's name
// with this suffix (context.snap.orphans).
const OrphansSuffix = ".orphans"

// maxCachedOrphanViews bounds the orphan lists an Assembler keeps (one per
// view revision it answered at; a long-lived process mostly asks at the
// latest one).
const maxCachedOrphanViews = 4

// orphansFile is the content of the orphans file.
type orphansFile struct {
	Rev        uint64             `json:"rev"`
	CommitTime int64              `json:"commit_time"`
	Orphans    []freshness.Orphan `json:"orphans"`
}

// orphans is freshness.Orphans at revision view: kept in memory, read from
// the orphans file, or found and kept. The returned slice is shared:
// callers must not modify it.
func (a *Assembler) orphans(r *lmdbstore.ReadTxn, view lmdbstore.Revision) ([]freshness.Orphan, error) {
	a.orphansMu.Lock()
	o, ok := a.orphanAt[view]
	a.orphansMu.Unlock()
	if ok {
		return o, nil
	}
	var ts int64
	if view > 0 {
		t, err := a.revisionTime(r, view)
		if err != nil {
			return nil, err
		}
		ts = t.UnixNano()
	}
	if o, ok = a.readOrphans(view, ts); !ok {
		a.orphanScans.Add(1)
		var err error
		if o, err = freshness.Orphans(r, lmdbstore.AtRevision(view)); err != nil {
			return nil, err
		}
		if view == r.Revision() {
			a.writeOrphans(orphansFile{Rev: uint64(view), CommitTime: ts, Orphans: o})
		}
	}
	a.orphansMu.Lock()
	if a.orphanAt == nil || len(a.orphanAt) >= maxCachedOrphanViews {
		a.orphanAt = make(map[lmdbstore.Revision][]freshness.Orphan, maxCachedOrphanViews)
	}
	a.orphanAt[view] = o
	a.orphansMu.Unlock()
	return o, nil
}

// readOrphans reads the orphans file when it names revision view with
// commit time ts.
func (a *Assembler) readOrphans(view lmdbstore.Revision, ts int64) ([]freshness.Orphan, bool) {
	if a.orphansPath == "" {
		return nil, false
	}
	b, err := os.ReadFile(a.orphansPath)
	if err != nil {
		return nil, false
	}
	var f orphansFile
	if json.Unmarshal(b, &f) != nil || f.Rev != uint64(view) || f.CommitTime != ts {
		return nil, false
	}
	return f.Orphans, true
}

// writeOrphans replaces the orphans file (best effort: a lost write costs
// the next process one scan).
func (a *Assembler) writeOrphans(f orphansFile) {
	if a.orphansPath == "" {
		return
	}
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.tmp-%d", a.orphansPath, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return
	}
	if err := os.Rename(tmp, a.orphansPath); err != nil {
		_ = os.Remove(tmp)
	}
}

// OrphanScans is how many times the Assembler scanned the store for
// orphans (neither kept nor read from the orphans file).
func (a *Assembler) OrphanScans() int { return int(a.orphanScans.Load()) }
