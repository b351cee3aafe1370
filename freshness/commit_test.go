package freshness

import (
	"errors"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

// TestResolveCommit: a store built commit by commit resolves each commit
// to the revision ingested at it, a commit never ingested to its nearest
// ingested ancestor, and one on an unrelated history to an error.
func TestResolveCommit(t *testing.T) {
	dir := fixture(t)
	s := newStore(t)
	c1 := git(t, dir, "rev-parse", "HEAD")
	r1 := refresh(t, s, dir)
	write(t, dir, "web/a.js", "export const a = 1\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "2")
	c2 := git(t, dir, "rev-parse", "HEAD")
	r2 := refresh(t, s, dir)
	// A memory write while at c2 belongs to c2's view.
	mem, _ := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutNode(lmdbstore.NodePut{Key: "decision:x"})
	})
	write(t, dir, "web/b.js", "export const b = 1\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "3 (never ingested)")
	c3 := git(t, dir, "rev-parse", "HEAD")
	write(t, dir, "web/c.js", "export const c = 1\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "4")
	c4 := git(t, dir, "rev-parse", "HEAD")
	r4 := refresh(t, s, dir)
	for _, tc := range []struct {
		commit    string
		rev, from lmdbstore.Revision
		at        string
	}{
		{c1, r2.Rev - 1, r1.Rev, c1},
		{c2, mem.Rev, r2.Rev, c2},
		{"HEAD~1", mem.Rev, r2.Rev, c2}, // c3: its ancestor c2
		{c3, mem.Rev, r2.Rev, c2},
		{c4, r4.Rev, r4.Rev, c4},
	} {
		got, err := ResolveCommit(s, dir, tc.commit)
		if err != nil || got.Rev != tc.rev || got.IngestRev != tc.from || got.Commit != tc.at {
			t.Errorf("%s: %+v, %v; want rev %d from %d at %s", tc.commit, got, err, tc.rev, tc.from, tc.at)
		}
	}
	git(t, dir, "checkout", "-q", "--orphan", "other")
	git(t, dir, "commit", "-q", "-m", "unrelated")
	if _, err := ResolveCommit(s, dir, "HEAD"); !errors.Is(err, ErrNoRevisionAtCommit) {
		t.Fatalf("unrelated history: %v", err)
	}
	var ce *CommitError
	if _, err := ResolveCommit(s, dir, "nosuchref"); !errors.As(err, &ce) {
		t.Fatalf("bad ref: %v", err)
	}
}
