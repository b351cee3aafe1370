package contextpack

// The engine snapshot. "Related" is ranked by the engines, which read a
// CSR snapshot (SPEC.md §7, §8), so a pack needs one whose ranking graph
// is the store's at the view. The Assembler keeps it itself (SPEC.md
// §12.5):
//
//   - where: the file context.snap in the store directory, written
//     atomically (snapshot.WriteFile) and mapped in place, so a one-shot
//     process pays only an mmap; a point-in-time view it cannot serve is
//     exported in memory instead;
//   - what counts as a change: only put_edge/del_edge operations of a
//     ranking relation (every relation but the vocabulary's unranked ones,
//     roles.Ranked: constrains, decided_for, supersedes, contradicts). Node writes and policy edges do not change
//     the ranking (Related reads node data from the store at the view), so
//     recording a decision never costs an export;
//   - staleness: a snapshot of revision S whose commit time matches the
//     store's commit time of S serves every view V such that no ranking
//     operation lies between S and V; that range, [Lo, Hi], is kept in
//     context.snap.valid beside the file and widened as later revisions
//     are checked (each revision's log record is read once). A view outside
//     the range after a ranking write is exported anew: never a stale
//     answer, at the price of one export.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// SnapshotFile and ValidityFile are the names, in the store directory, of
// the engine snapshot and of its validity range.
const (
	SnapshotFile = "context.snap"
	ValidityFile = "context.snap.valid"
)

// rankingExport is how the engine snapshot is written: with the PageRank
// section `memctl export` writes by default, so Related breaks ties as
// `activate` does on a default export.
func rankingExport() snapshot.WriterOptions {
	return snapshot.WriterOptions{Extra: engines.PageRankSection}
}

// engineSnap is one engine snapshot and the views it serves.
type engineSnap struct {
	graph      *csr.Graph
	eng        *engines.Engine
	rev        lmdbstore.Revision // the revision exported
	commitTime int64
	rels       []uint32 // the ranking relations' ids in this snapshot
	onDisk     bool

	mu     sync.Mutex // guards lo, hi
	lo, hi lmdbstore.Revision

	refs atomic.Int64 // calls using it, +1 while an Assembler slot holds it
}

func (e *engineSnap) acquire() { e.refs.Add(1) }

// release drops one reference; the last one unmaps the snapshot.
func (e *engineSnap) release() {
	if e.refs.Add(-1) == 0 {
		_ = e.graph.Close()
	}
}

func newEngineSnap(g *csr.Graph, onDisk bool) (*engineSnap, error) {
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
	e := &engineSnap{graph: g, eng: eng, rev: lmdbstore.Revision(g.Revision()), commitTime: g.CommitTime(), onDisk: onDisk}
	e.lo, e.hi = e.rev, e.rev
	for _, r := range rels {
		if roles.Ranked(r.Name) {
			e.rels = append(e.rels, r.ID)
		}
	}
	e.refs.Store(1)
	return e, nil
}

// validity is the content of ValidityFile.
type validity struct {
	Rev        uint64 `json:"rev"`
	CommitTime int64  `json:"commit_time"`
	Lo         uint64 `json:"lo"`
	Hi         uint64 `json:"hi"`
}

// SnapshotInfo says which engine snapshot ranked a pack's Related items.
type SnapshotInfo struct {
	Rev   lmdbstore.Revision // the revision it was exported at
	Built bool               // exported by this call
	Path  string             // "" when held in memory
}

// rankingOp reports whether op changes the ranking graph.
func rankingOp(op lmdbstore.Op) bool {
	return (op.Kind == lmdbstore.OpPutEdge || op.Kind == lmdbstore.OpDelEdge) && roles.Ranked(op.Rel)
}

// errRanking stops a log walk at the first ranking operation.
var errRanking = errors.New("ranking operation")

// unchanged reports whether revisions (from, to] hold no ranking
// operation.
func unchanged(r *lmdbstore.ReadTxn, from, to lmdbstore.Revision) (bool, error) {
	for rev := from + 1; rev <= to; rev++ {
		err := r.RevisionOps(rev, func(op lmdbstore.Op) error {
			if rankingOp(op) {
				return errRanking
			}
			return nil
		})
		if errors.Is(err, errRanking) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// serves reports whether e serves view (widening its range when the
// revisions between show no ranking operation).
func (e *engineSnap) serves(r *lmdbstore.ReadTxn, view lmdbstore.Revision) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case view >= e.lo && view <= e.hi:
		return true, nil
	case view > e.hi:
		ok, err := unchanged(r, e.hi, view)
		if err != nil || !ok {
			return false, err
		}
		e.hi = view
	default:
		ok, err := unchanged(r, view, e.lo)
		if err != nil || !ok {
			return false, err
		}
		e.lo = view
	}
	return true, nil
}

// sameHistory reports whether e was exported from this store's history:
// its revision exists with the same commit time.
func (e *engineSnap) sameHistory(r *lmdbstore.ReadTxn, revisionTime func(*lmdbstore.ReadTxn, lmdbstore.Revision) (time.Time, error)) (bool, error) {
	if e.rev == 0 {
		return true, nil // the empty graph
	}
	if e.rev > r.Revision() {
		return false, nil
	}
	t, err := revisionTime(r, e.rev)
	if err != nil {
		return false, err
	}
	return t.UnixNano() == e.commitTime, nil
}

// snapshotFor returns a referenced engine snapshot serving view (release
// it when done).
func (a *Assembler) snapshotFor(r *lmdbstore.ReadTxn, view lmdbstore.Revision) (*engineSnap, SnapshotInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range []*engineSnap{a.cur, a.past} {
		if e == nil {
			continue
		}
		ok, err := e.serves(r, view)
		if err != nil {
			return nil, SnapshotInfo{}, err
		}
		if ok {
			a.saveValidity(e)
			e.acquire()
			return e, a.info(e, false), nil
		}
	}
	latest := r.Revision()
	// Another process may have exported a newer file.
	if a.snapPath != "" {
		e, err := a.openFile(r)
		if err != nil {
			return nil, SnapshotInfo{}, err
		}
		if e != nil {
			ok, err := e.serves(r, view)
			if err != nil {
				e.release()
				return nil, SnapshotInfo{}, err
			}
			if ok || view == latest {
				a.replace(&a.cur, e)
			} else {
				e.release()
			}
			if ok {
				a.saveValidity(e)
				e.acquire()
				return e, a.info(e, false), nil
			}
		}
	}
	// Export. The latest view goes to the file (when the directory is
	// writable), a past one into memory.
	var e *engineSnap
	var err error
	if view == latest && a.snapPath != "" {
		e, err = a.exportFile(view)
		if err != nil {
			a.logf("context: writing %s failed, exporting in memory: %v", a.snapPath, err)
			e = nil
		}
	}
	if e == nil {
		b, err := storesnap.ExportBytes(a.store, lmdbstore.AtRevision(view), rankingExport())
		if err != nil {
			return nil, SnapshotInfo{}, err
		}
		g, err := csr.FromBytes(b)
		if err != nil {
			return nil, SnapshotInfo{}, err
		}
		if e, err = newEngineSnap(g, false); err != nil {
			return nil, SnapshotInfo{}, err
		}
	}
	a.builds.Add(1)
	if e.onDisk || view == latest {
		a.replace(&a.cur, e)
	} else {
		a.replace(&a.past, e)
	}
	a.saveValidity(e)
	e.acquire()
	return e, a.info(e, true), nil
}

func (a *Assembler) info(e *engineSnap, built bool) SnapshotInfo {
	in := SnapshotInfo{Rev: e.rev, Built: built}
	if e.onDisk {
		in.Path = a.snapPath
	}
	return in
}

// replace installs e in slot, retiring what was there.
func (a *Assembler) replace(slot **engineSnap, e *engineSnap) {
	if old := *slot; old != nil && old != e {
		old.release()
	}
	*slot = e
}

// openFile maps the snapshot file when it exists and belongs to this
// store's history; nil when it does not. A file the reader refuses is
// treated as absent (the next export replaces it).
func (a *Assembler) openFile(r *lmdbstore.ReadTxn) (*engineSnap, error) {
	if a.cur != nil && a.cur.onDisk {
		// Already mapped: only a newer file is worth opening.
		fi, err := os.Stat(a.snapPath)
		if err != nil || fi.ModTime().Equal(a.curMod) {
			return nil, nil
		}
	}
	fi, err := os.Stat(a.snapPath)
	if err != nil {
		return nil, nil
	}
	g, err := csr.Open(a.snapPath)
	if err != nil {
		a.logf("context: ignoring %s: %v", a.snapPath, err)
		return nil, nil
	}
	e, err := newEngineSnap(g, true)
	if err != nil {
		a.logf("context: ignoring %s: %v", a.snapPath, err)
		return nil, nil
	}
	if _, ranked, _ := g.PageRank(); !ranked && g.NumNodes() > 0 {
		// Written before the export carried PageRank (it breaks ties):
		// rebuilt like a file of another history.
		e.release()
		return nil, nil
	}
	same, err := e.sameHistory(r, a.revisionTime)
	if err != nil || !same {
		e.release()
		return nil, err
	}
	a.curMod = fi.ModTime()
	if v, ok := a.loadValidity(); ok && v.Rev == uint64(e.rev) && v.CommitTime == e.commitTime &&
		v.Lo <= v.Hi && v.Lo <= uint64(e.rev) && uint64(e.rev) <= v.Hi && v.Hi <= uint64(r.Revision()) {
		e.lo, e.hi = lmdbstore.Revision(v.Lo), lmdbstore.Revision(v.Hi)
	}
	return e, nil
}

// exportFile exports view to the snapshot file and maps it.
func (a *Assembler) exportFile(view lmdbstore.Revision) (*engineSnap, error) {
	if _, _, err := storesnap.Export(a.store, a.snapPath, lmdbstore.AtRevision(view), rankingExport()); err != nil {
		return nil, err
	}
	fi, err := os.Stat(a.snapPath)
	if err != nil {
		return nil, err
	}
	g, err := csr.Open(a.snapPath)
	if err != nil {
		return nil, err
	}
	e, err := newEngineSnap(g, true)
	if err != nil {
		return nil, err
	}
	a.curMod = fi.ModTime()
	return e, nil
}

func (a *Assembler) validityPath() string {
	return filepath.Join(filepath.Dir(a.snapPath), ValidityFile)
}

func (a *Assembler) loadValidity() (validity, bool) {
	b, err := os.ReadFile(a.validityPath())
	if err != nil {
		return validity{}, false
	}
	var v validity
	if json.Unmarshal(b, &v) != nil {
		return validity{}, false
	}
	return v, true
}

// saveValidity records e's range beside the file when it widened (best
// effort: a lost update only costs a later process one more log read).
func (a *Assembler) saveValidity(e *engineSnap) {
	if !e.onDisk || a.snapPath == "" {
		return
	}
	e.mu.Lock()
	v := validity{Rev: uint64(e.rev), CommitTime: e.commitTime, Lo: uint64(e.lo), Hi: uint64(e.hi)}
	e.mu.Unlock()
	if v == a.savedValidity {
		return
	}
	b, _ := json.Marshal(v)
	tmp := fmt.Sprintf("%s.tmp-%d", a.validityPath(), os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return
	}
	if err := os.Rename(tmp, a.validityPath()); err != nil {
		_ = os.Remove(tmp)
		return
	}
	a.savedValidity = v
}
