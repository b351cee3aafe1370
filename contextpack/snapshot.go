package contextpack

// The engine snapshot. "Related" is ranked by the engines, which read a
// CSR snapshot (SPEC.md §7, §8), so a pack needs one whose ranking graph
// is the store's at the view. The Assembler asks an enginesnap.Provider
// for a Ranking snapshot (SPEC.md §12.5): the provider owns where it
// lives (context.snap in the store directory, mapped; a past view in
// memory) and when it is reused (only an edge write of a ranking
// relation changes it); see package enginesnap.

import (
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// SnapshotFile and ValidityFile are the names, in the store directory, of
// the engine snapshot and of its validity range.
const (
	SnapshotFile = enginesnap.SnapshotFile
	ValidityFile = enginesnap.ValidityFile
)

// SnapshotInfo says which engine snapshot ranked a pack's Related items.
type SnapshotInfo struct {
	Rev   lmdbstore.Revision // the revision it was exported at
	Built bool               // exported by this call
	Path  string             // "" when held in memory
}

// snapshotFor returns a referenced engine snapshot serving view (release
// it when done).
func (a *Assembler) snapshotFor(r *lmdbstore.ReadTxn, view lmdbstore.Revision) (*enginesnap.Snap, SnapshotInfo, error) {
	s, built, err := a.snaps.Get(r, enginesnap.Ranking, view)
	if err != nil {
		return nil, SnapshotInfo{}, err
	}
	return s, SnapshotInfo{Rev: s.Rev, Built: built, Path: s.Path}, nil
}
