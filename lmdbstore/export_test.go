package lmdbstore

import "testing"

// Test hooks: unexported knobs tests turn on a fresh store.

// setHashForTest replaces the id hash (to inject collisions).
func (s *Store) setHashForTest(h func(string) NodeID) { s.hash = h }

// setChunkMaxForTest lowers the chunk size so small graphs split chunks.
func (s *Store) setChunkMaxForTest(n int) { s.chunkMax = n }

// setAdjDirectForTest turns off the adjacency write-back buffer.
func (s *Store) setAdjDirectForTest() { s.adjDirect = true }

// setLogFormat02ForTest writes compressed log records as format 02.
func (s *Store) setLogFormat02ForTest() { s.logFormat02 = true }

// SetLogFormat02ForTest is setLogFormat02ForTest for the external tests.
func (s *Store) SetLogFormat02ForTest() { s.setLogFormat02ForTest() }

// WriteRandomHistoryForTest is writeRandomHistory for the external tests.
func WriteRandomHistoryForTest(t *testing.T, s *Store, seed uint64) { writeRandomHistory(t, s, seed) }
