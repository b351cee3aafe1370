package ops

// The store's own reports: stats and check (SPEC.md §6.3, §10).

import (
	"fmt"

	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// Stats summarises the store.
func Stats(s *lmdbstore.Store) (records.Stats, error) {
	st, err := s.Stats()
	if err != nil {
		return records.Stats{}, err
	}
	return records.StatsOf(st), nil
}

// Check verifies every keyspace; the report lists at most listed missing
// nodes (< 0: all). A report with problems is not an error: the findings
// are the answer.
//
// Memory whose target was deleted (an orphan, SPEC.md §9.8) is a warning:
// the item is kept, and `memctl orphans` lists where it now belongs.
func Check(s *lmdbstore.Store, listed int) (records.Check, error) {
	rep, err := s.Check()
	if err != nil {
		return records.Check{}, err
	}
	if len(rep.Problems) == 0 {
		var orphans []freshness.Orphan
		if err := s.View(func(r *lmdbstore.ReadTxn) error {
			var err error
			orphans, err = freshness.Orphans(r, lmdbstore.At{})
			return err
		}); err != nil {
			return records.Check{}, err
		}
		for _, o := range orphans {
			if o.DeletedRev == 0 {
				continue // never existed: a missing node, counted as such
			}
			w := fmt.Sprintf("orphan: %s %s %s (deleted at rev %d", o.Item, o.Via, o.Target, o.DeletedRev)
			if o.Nearest != "" {
				w += "; nearest live: " + o.Nearest
			}
			rep.Warnings = append(rep.Warnings, w+")")
		}
	}
	return records.CheckOf(rep, listed), nil
}
