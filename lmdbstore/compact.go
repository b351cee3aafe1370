package lmdbstore

import "errors"

// Compact merges and prunes every adjacency list (and history older than
// the horizon), as one write transaction that commits no revision.
func (s *Store) Compact() (CompactStats, error) { return CompactStats{}, errUnimplemented }

// SetRetention keeps the last n revisions readable (0: keep all history).
func (s *Store) SetRetention(n uint64) error { return errUnimplemented }

// Check walks every keyspace and reports every violation it finds.
func (s *Store) Check() (CheckReport, error) { return CheckReport{}, errUnimplemented }

// Stats summarises the store.
func (s *Store) Stats() (Stats, error) { return Stats{}, errUnimplemented }

// CompactStats reports what a compaction did.
type CompactStats struct {
	ChunksBefore, ChunksAfter   int
	EntriesBefore, EntriesAfter int
	HistDropped                 int
}

// CheckReport lists every problem Check found. Problems are integrity
// violations (exit 3); Warnings are not.
type CheckReport struct {
	Problems []string
	Warnings []string
	// MissingNodes lists canonical keys referenced by live edges that have no
	// live node (allowed, reported).
	MissingNodes []string
}

var errUnimplemented = errors.New("lmdbstore: not implemented yet")
