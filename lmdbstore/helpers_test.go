package lmdbstore

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/internal/testcmp"
)

// testClock returns strictly increasing times one millisecond apart from a
// fixed start, so tests are deterministic.
func testClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// newStore creates a store in a temp dir and registers a cleanup that runs
// Check (failing the test on any problem) and closes it.
func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = testClock()
	}
	if opts.MapSize == 0 {
		opts.MapSize = 64 << 20
	}
	opts.NoSync = true
	s, err := Init(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() {
		if !t.Failed() && checkAfterTests {
			mustCheck(t, s)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func mustCheck(t testing.TB, s *Store) CheckReport {
	t.Helper()
	rep, err := s.Check()
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(rep.Problems) > 0 {
		t.Fatalf("Check found problems:\n%v", rep.Problems)
	}
	return rep
}

func mustUpdate(t testing.TB, s *Store, meta WriteMeta, fn func(tx *WriteTxn) error) Commit {
	t.Helper()
	c, err := s.Update(meta, fn)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return c
}

func putEdge(t testing.TB, s *Store, src, rel, dst string) Commit {
	t.Helper()
	return mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutEdge(EdgePut{Src: src, Rel: rel, Dst: dst})
	})
}

func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

var cmpOpts = []cmp.Option{testcmp.EquateEmpty()}

// checkAfterTests turns on the automatic Check once Check exists.
var checkAfterTests = true
