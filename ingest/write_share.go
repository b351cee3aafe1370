package ingest

import (
	"github.com/memctl/memctl/lmdbstore"
)

// WriteShare makes the share of the store that owns selects equal to g, in
// one write transaction: one revision, or none when nothing differs. The
// share is the owned nodes and their out-edges of the code relations
// (GoRelations); file nodes another writer holds keep their git field.
// It is how an ingest that is not a language of Languages (`ingest scip`,
// SPEC.md §9.7) writes incrementally as WriteCode does.
func WriteShare(s *lmdbstore.Store, g *Graph, owns func(lmdbstore.Node) bool, meta lmdbstore.WriteMeta, progress func(Progress)) (WriteStats, error) {
	var stats WriteStats
	meta.Derived = true // code structure, not free text: no secret scan (SPEC §2)
	c, err := s.Update(meta, func(tx *lmdbstore.WriteTxn) error {
		rels, err := ensureRelations(tx, GoRelations)
		if err != nil {
			return err
		}
		st, err := readState(tx.Reader(), owns, rels, false)
		if err != nil {
			return err
		}
		p, err := diff(tx.Reader(), g, st, rels, keepGitField)
		if err != nil {
			return err
		}
		stats = WriteStats{NodesPut: len(p.putNodes), NodesDeleted: len(p.delNodes), EdgesPut: len(p.putEdges), EdgesDeleted: len(p.delEdges)}
		return apply(tx, p, progress)
	})
	stats.Commit = c
	return stats, err
}
