package freshness

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/lmdbstore"
)

// The refresh cache file (diskcache.go, SPEC.md §9.10): a one-shot refresh
// reads what the last one saved. Whatever the file holds — current,
// stale, damaged — the store must end as a fresh full ingest of the tree
// leaves it; the file may change only the cost.

// oneShot are the options of a one-shot refresh (no process cache) of
// mixedFixture; used, when not nil, counts the refreshes that read a
// cache file holding parses and those that took the per-file path.
func oneShot(used *fileUse) Options {
	o := mixedOptions(nil)
	if used != nil {
		o.cacheFileUsed = func(c *codetree.Cache) {
			used.mu.Lock()
			defer used.mu.Unlock()
			used.refreshes++
			used.deltas += c.Deltas()
		}
	}
	return o
}

type fileUse struct {
	mu                sync.Mutex
	refreshes, deltas int
}

// checkFresh fails when the store differs from a fresh ingest of dir.
func checkFresh(t *testing.T, s *lmdbstore.Store, dir, what string) {
	t.Helper()
	got, want := graphDump(t, s), freshDumpWith(t, dir, mixedOptions(nil))
	if !slices.Equal(got, want) {
		t.Fatalf("%s: differs from a fresh ingest:\n%s", what, diffLines(got, want))
	}
}

// TestRefreshOneShotRandomEdits is the differential test of the one-shot
// path: random edits, additions, deletions, renames and cross-file edits,
// each followed by a refresh in a "new process" (no process cache: the
// cache file only), compared with a fresh full ingest.
func TestRefreshOneShotRandomEdits(t *testing.T) {
	seeds := []int64{11, 12, 13, 14}
	steps := 16
	if testing.Short() {
		seeds, steps = seeds[:1], 6
	}
	for _, seed := range seeds {
		rng := rand.New(rand.NewSource(seed))
		dir := mixedFixture(t)
		s := newStore(t)
		var used fileUse
		o := oneShot(&used)
		if _, err := Refresh(s, dir, o); err != nil {
			t.Fatal(err)
		}
		n := 0
		for step := 0; step < steps; step++ {
			op := mixedEdit(t, rng, dir, &n, 3)
			if _, err := Refresh(s, dir, o); err != nil {
				t.Fatalf("seed %d step %d (%s): %v", seed, step, op, err)
			}
			checkFresh(t, s, dir, op)
		}
		// Every refresh after the first that wrote code took the per-file
		// path through the file; at least most of them did something.
		if used.deltas == 0 || used.deltas < used.refreshes/2 {
			t.Fatalf("seed %d: %d of %d one-shot refreshes took the per-file path", seed, used.deltas, used.refreshes)
		}
	}
}

// TestRefreshCacheFileDamaged: a cache file that is truncated, damaged,
// of another version, empty, a directory's worth of garbage, or holds an
// older graph (another revision) is ignored: the refresh still equals a
// fresh ingest, and writes a usable file again.
func TestRefreshCacheFileDamaged(t *testing.T) {
	dir := mixedFixture(t)
	s := newStore(t)
	file := filepath.Join(s.Path(), CacheFile)
	var used fileUse
	o := oneShot(&used)
	if _, err := Refresh(s, dir, o); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	older := append([]byte(nil), good...) // a graph of an older revision, later
	damage := []struct {
		what string
		b    func() []byte
	}{
		{"truncated to half", func() []byte { return good[:len(good)/2] }},
		{"truncated by one byte", func() []byte { return good[:len(good)-1] }},
		{"truncated to the magic", func() []byte { return good[:8] }},
		{"empty", func() []byte { return nil }},
		{"a byte flipped", func() []byte {
			b := append([]byte(nil), good...)
			b[len(b)/3] ^= 0x55
			return b
		}},
		{"another version", func() []byte {
			b := append([]byte(nil), good...)
			b[8]++
			return b
		}},
		{"garbage", func() []byte { return []byte("MEMCTLRC\x01 not a cache file at all, but long enough") }},
		{"an older graph", func() []byte { return older }},
	}
	rng := rand.New(rand.NewSource(3))
	n := 0
	for _, d := range damage {
		op := crossFileEdit(t, rng, dir, &n)
		if err := os.WriteFile(file, d.b(), 0o644); err != nil {
			t.Fatal(err)
		}
		before := used.deltas
		res, err := Refresh(s, dir, o)
		if err != nil {
			t.Fatalf("%s (%s): %v", d.what, op, err)
		}
		checkFresh(t, s, dir, d.what+", "+op)
		if used.deltas != before {
			t.Fatalf("%s (%s): the refresh took the per-file path from an unusable file", d.what, op)
		}
		// A refresh that read a language writes the file again.
		if res.Summary != nil && !res.Summary.Unchanged {
			if c, err := loadCacheFile(file); err != nil || c.Parses() == 0 {
				t.Fatalf("%s: the refresh left no usable file (%d parses, %v)", d.what, c.Parses(), err)
			}
		}
		// And the file it wrote serves the next refresh.
		rewrote := res.Summary != nil && !res.Summary.Unchanged
		op = randomEdit(t, rng, dir, &n)
		before = used.deltas
		res, err = Refresh(s, dir, o)
		if err != nil {
			t.Fatalf("after %s (%s): %v", d.what, op, err)
		}
		checkFresh(t, s, dir, "after "+d.what+", "+op)
		// Go re-extracted takes the full comparison (§9.10), else the file
		// just written gives the per-file path.
		if rewrote && res.Summary != nil && !res.Summary.Unchanged && !goRead(res.Summary) && used.deltas != before+1 {
			t.Fatalf("after %s (%s): the refresh did not take the per-file path from the file just written", d.what, op)
		}
	}
	if used.deltas == 0 {
		t.Fatal("no refresh after a rewritten file took the per-file path")
	}
}

// goRead reports whether an ingest re-extracted Go.
func goRead(sum *codetree.Summary) bool {
	return slices.ContainsFunc(sum.Languages, func(l codetree.Lang) bool { return l.Lang == "go" && !l.Unchanged })
}

// TestRefreshCacheFileHandEdit: a code node deleted by hand after the
// write the file's graph describes (the tree hashes do not change) is
// repaired by the next refresh — the graph is not used — while memory
// written in between leaves the per-file path open.
func TestRefreshCacheFileHandEdit(t *testing.T) {
	for _, processCache := range []bool{false, true} {
		dir := mixedFixture(t)
		s := newStore(t)
		var used fileUse
		o := oneShot(&used)
		var c *Cache
		if processCache { // the MCP server's cache takes the same rule
			c = NewCache()
			o = mixedOptions(c)
		}
		deltas := func() int {
			if c != nil {
				return c.Deltas()
			}
			return used.deltas
		}
		if _, err := Refresh(s, dir, o); err != nil {
			t.Fatal(err)
		}
		// Memory only: the per-file path stays open.
		if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			return tx.PutNode(lmdbstore.NodePut{Key: "note:1", Type: "note", Payload: []byte(`{"text":"x"}`)})
		}); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "py/pkg/geo.py", "from pkg.shapes import helper\n\n\ndef total(xs):\n    return helper(2)\n")
		if _, err := Refresh(s, dir, o); err != nil {
			t.Fatal(err)
		}
		checkFresh(t, s, dir, "after a memory write")
		if deltas() != 1 {
			t.Fatalf("process cache %t: %d per-file refreshes after a memory write, want 1", processCache, deltas())
		}
		// A hand deletion of a code node nobody edits: only a full
		// comparison puts it back.
		if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			return tx.DeleteNode("file:web/old.js")
		}); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "py/pkg/geo.py", "from pkg.shapes import helper\n\n\ndef total(xs):\n    return helper(3)\n")
		if _, err := Refresh(s, dir, o); err != nil {
			t.Fatal(err)
		}
		checkFresh(t, s, dir, "after a hand deletion")
		if deltas() != 1 {
			t.Fatalf("process cache %t: the refresh after a hand edit took the per-file path", processCache)
		}
	}
}

// TestRefreshCacheFileConcurrent: refreshes by several "processes" at
// once (goroutines, each with no process cache: each reads and writes the
// cache file on its own) write each change once and leave the store as a
// fresh ingest.
func TestRefreshCacheFileConcurrent(t *testing.T) {
	dir := mixedFixture(t)
	s := newStore(t)
	o := oneShot(nil)
	if _, err := Refresh(s, dir, o); err != nil {
		t.Fatal(err)
	}
	concurrentRefreshes(t, s, dir, o, 9, 5, func(round int) {
		if c, err := loadCacheFile(filepath.Join(s.Path(), CacheFile)); err != nil || c.Parses() == 0 {
			t.Fatalf("round %d: cache file unusable after concurrent refreshes: %v", round, err)
		}
	})
}

// TestRefreshProcessCacheSeeded: a long-lived process's cache starts from
// the cache file a one-shot refresh left (its first refresh after an edit
// takes the per-file path), and not from a damaged one; either way the
// store equals a fresh ingest.
func TestRefreshProcessCacheSeeded(t *testing.T) {
	dir := mixedFixture(t)
	s := newStore(t)
	if _, err := Refresh(s, dir, oneShot(nil)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(s.Path(), CacheFile)
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		what   string
		b      []byte
		deltas int
	}{
		{"the file", good, 1},
		{"a damaged file", good[:len(good)-3], 0},
	} {
		if err := os.WriteFile(file, tc.b, 0o600); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "py/pkg/geo.py", fmt.Sprintf("from pkg.shapes import helper\n\n\ndef total(xs):\n    return helper(%d)\n", i))
		c := NewCache()
		if _, err := Refresh(s, dir, mixedOptions(c)); err != nil {
			t.Fatal(err)
		}
		checkFresh(t, s, dir, tc.what)
		if c.Deltas() != tc.deltas {
			t.Fatalf("%s: the process's first refresh took the per-file path %d times, want %d", tc.what, c.Deltas(), tc.deltas)
		}
		// The process cache is not written to the file.
		if b, _ := os.ReadFile(file); !bytes.Equal(b, tc.b) {
			t.Fatalf("%s: a refresh through a process cache rewrote the file", tc.what)
		}
	}
}
