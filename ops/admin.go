package ops

// The store's own reports: stats and check (SPEC.md §6.3, §10).

import (
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
func Check(s *lmdbstore.Store, listed int) (records.Check, error) {
	rep, err := s.Check()
	if err != nil {
		return records.Check{}, err
	}
	return records.CheckOf(rep, listed), nil
}
