package enginesnap

// The persisted Ranking snapshot (SPEC.md §12.5): SnapshotFile, a CSR
// export of the latest view written by snapshot.WriteFile (temporary
// name, sync, rename) and mapped in place, and ValidityFile beside it,
// the JSON range of revisions it is known to serve:
//
//	{"rev":R,"commit_time":NS,"lo":LO,"hi":HI,"valid_at":VA,"valid_until":VU}
//
// R and NS name the export (its header's revision and commit time); the
// range is used only when both match the mapped file and LO ≤ R ≤ HI ≤
// the store's revision. Anything else is ignored: the range starts again
// at [R, R] and is widened by reading the log. VA and VU (unix ns; VU 0:
// none; both absent in files of older writers) are the export's valid-time
// window (storesnap.Window): with them, the file also serves Exact
// snapshots (an analysis tool's first call maps it instead of exporting),
// under Exact's rules from [R, R].

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/storesnap"
)

// SnapshotFile and ValidityFile are the names, in the store directory, of
// the persisted engine snapshot and of its validity range.
const (
	SnapshotFile = "context.snap"
	ValidityFile = "context.snap.valid"
)

// validity is the content of ValidityFile.
type validity struct {
	Rev        uint64 `json:"rev"`
	CommitTime int64  `json:"commit_time"`
	Lo         uint64 `json:"lo"`
	Hi         uint64 `json:"hi"`
	ValidAt    int64  `json:"valid_at,omitempty"`
	ValidUntil int64  `json:"valid_until,omitempty"`
}

// matches reports whether v was written for s's export.
func (v validity) matches(s *Snap) bool {
	return v.Rev == uint64(s.Rev) && v.CommitTime == s.CommitTime
}

// window sets s's valid-time window from v; false when v has none.
func (v validity) window(s *Snap) bool {
	if v.ValidAt == 0 {
		return false
	}
	s.validAt = time.Unix(0, v.ValidAt)
	if v.ValidUntil != 0 {
		s.until = time.Unix(0, v.ValidUntil)
	}
	return true
}

// fileState is what a provider knows of the file.
type fileState struct {
	mod   time.Time // modification time of the file mapped in cur
	saved validity  // the range last written, or read from the file and used
}

func (p *Provider) validityPath() string {
	return filepath.Join(filepath.Dir(p.path), ValidityFile)
}

// openFile maps the file when it exists and belongs to this store's
// history; nil when it does not. A file the reader refuses is treated as
// absent (the next export replaces it).
func (p *Provider) openFile(r *lmdbstore.ReadTxn, sl *slots) (*Snap, error) {
	fi, err := os.Stat(p.path)
	if err != nil {
		return nil, nil
	}
	if sl.cur != nil && sl.cur.Path != "" && fi.ModTime().Equal(sl.file.mod) {
		return nil, nil // already mapped: only a newer file is worth opening
	}
	s, err := p.mapFile(r, Ranking)
	if s == nil || err != nil {
		return nil, err
	}
	sl.file.mod = fi.ModTime()
	if v, ok := p.loadValidity(); ok && v.matches(s) &&
		v.Lo <= v.Hi && v.Lo <= uint64(s.Rev) && uint64(s.Rev) <= v.Hi && v.Hi <= uint64(r.Revision()) {
		s.lo, s.hi = lmdbstore.Revision(v.Lo), lmdbstore.Revision(v.Hi)
		v.window(s)
		sl.file.saved = v // on disk already: saveValidity writes only a wider range
	}
	return s, nil
}

// openExact maps the file as an Exact snapshot of its own revision when
// the validity file gives the export's valid-time window; nil when it
// does not, or the file is absent or not of this history.
func (p *Provider) openExact(r *lmdbstore.ReadTxn, sl *slots) (*Snap, error) {
	fi, err := os.Stat(p.path)
	if err != nil || fi.ModTime().Equal(sl.file.mod) {
		return nil, nil // absent, or tried already as it is
	}
	sl.file.mod = fi.ModTime()
	v, ok := p.loadValidity()
	if !ok {
		return nil, nil
	}
	s, err := p.mapFile(r, Exact)
	if s == nil || err != nil {
		return nil, err
	}
	if !v.matches(s) || !v.window(s) {
		s.Release()
		return nil, nil
	}
	return s, nil // lo = hi = its revision: Exact's rules widen it
}

// mapFile maps the file as a snapshot of kind k when the reader accepts
// it, it carries the sections every export writes, and it belongs to this
// store's history; nil otherwise (the next export replaces it).
func (p *Provider) mapFile(r *lmdbstore.ReadTxn, k Kind) (*Snap, error) {
	g, err := csr.Open(p.path)
	if err != nil {
		p.logf("context: ignoring %s: %v", p.path, err)
		return nil, nil
	}
	s, err := newSnap(g, k, p.path)
	if err != nil {
		p.logf("context: ignoring %s: %v", p.path, err)
		return nil, nil
	}
	_, ranked, _ := g.PageRank()
	_, lexicon := g.File().Lexicon()
	if (!ranked || !lexicon) && g.NumNodes() > 0 {
		// Written before the export carried PageRank (it breaks ties)
		// or the lexicon (format 3.0: every process would rebuild it):
		// rebuilt like a file of another history.
		s.Release()
		return nil, nil
	}
	same, err := sameHistory(r, s)
	if err != nil || !same {
		s.Release()
		return nil, err
	}
	return s, nil
}

// sameHistory reports whether s was exported from this store's history:
// its revision exists with the same commit time.
func sameHistory(r *lmdbstore.ReadTxn, s *Snap) (bool, error) {
	if s.Rev == 0 {
		return true, nil // the empty graph
	}
	if s.Rev > r.Revision() {
		return false, nil
	}
	// From meta when s.Rev is the latest (no log record is opened).
	t, err := r.CommitTime(s.Rev)
	if err != nil {
		return false, err
	}
	return t.UnixNano() == s.CommitTime, nil
}

// exportFile exports view to the file and maps it. With SyncLater the
// export is mapped from its temporary file while its syncs and rename run
// on another goroutine (p.pending); whatever looks at the file next waits
// for them first (awaitFile).
func (p *Provider) exportFile(sl *slots, view lmdbstore.Revision, now time.Time) (*Snap, error) {
	sg, w, err := storesnap.ExportFileStaged(p.store, p.path, lmdbstore.AtRevision(view), lmdbstore.StatusFilter{ValidAt: now}, exportOptions(), sl.base())
	if err != nil {
		return nil, err
	}
	name := sg.Temp()
	if !p.later {
		if err := sg.Commit(); err != nil {
			return nil, err
		}
		name = p.path
	}
	fi, err := os.Stat(name)
	var s *Snap
	if err == nil {
		var g *csr.Graph
		if g, err = csr.Open(name); err == nil {
			s, err = newSnap(g, Ranking, p.path)
		}
	}
	if err != nil {
		if p.later {
			sg.Abort()
		}
		return nil, err
	}
	s.validAt, s.until = w.ValidAt, w.ValidUntil
	if w.FromBase {
		sl.fromBase.Add(1)
	}
	sl.file.mod = fi.ModTime() // the rename keeps it
	if p.later {
		done := make(chan error, 1)
		go func() { done <- sg.Commit() }()
		p.fileMu.Lock()
		p.pending = func() {
			if err := <-done; err != nil {
				p.logf("context: writing %s failed: %v", p.path, err)
			}
		}
		p.fileMu.Unlock()
	}
	return s, nil
}

// awaitFile waits for the syncs and rename of the last export exportFile
// left running (SyncLater): every call that may look at the file (Get,
// of any kind) and Close wait for it first.
func (p *Provider) awaitFile() {
	p.fileMu.Lock()
	defer p.fileMu.Unlock()
	if p.pending != nil {
		p.pending()
		p.pending = nil
	}
}

func (p *Provider) loadValidity() (validity, bool) {
	b, err := os.ReadFile(p.validityPath())
	if err != nil {
		return validity{}, false
	}
	var v validity
	if json.Unmarshal(b, &v) != nil {
		return validity{}, false
	}
	return v, true
}

// saveValidity records s's range beside the file when it widened (best
// effort: a lost update only costs a later process one more log read).
func (p *Provider) saveValidity(sl *slots, s *Snap) {
	if s.Path == "" || s.kind != Ranking {
		return // the file's range is judged by Ranking's rules only
	}
	s.mu.Lock()
	v := validity{Rev: uint64(s.Rev), CommitTime: s.CommitTime, Lo: uint64(s.lo), Hi: uint64(s.hi)}
	if !s.validAt.IsZero() {
		v.ValidAt = s.validAt.UnixNano()
		if !s.until.IsZero() {
			v.ValidUntil = s.until.UnixNano()
		}
	}
	s.mu.Unlock()
	if v == sl.file.saved {
		return
	}
	b, _ := json.Marshal(v)
	tmp := fmt.Sprintf("%s.tmp-%d", p.validityPath(), os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return
	}
	if err := os.Rename(tmp, p.validityPath()); err != nil {
		_ = os.Remove(tmp)
		return
	}
	sl.file.saved = v
}
