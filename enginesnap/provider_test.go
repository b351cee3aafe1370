package enginesnap_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// newStore is an empty store whose commits are stamped a second apart
// from base.
func newStore(t *testing.T) *lmdbstore.Store { return newStoreAt(t, base) }

// newStoreAt is newStore with commits stamped from start.
func newStoreAt(t *testing.T, start time.Time) *lmdbstore.Store {
	t.Helper()
	n := 0
	var mu sync.Mutex
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{
		NoSync: true,
		Clock: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			n++
			return start.Add(time.Duration(n) * time.Second)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func update(t *testing.T, s *lmdbstore.Store, fn func(tx *lmdbstore.WriteTxn) error) {
	t.Helper()
	if _, err := s.Update(lmdbstore.WriteMeta{}, fn); err != nil {
		t.Fatal(err)
	}
}

func edge(src, rel, dst string) func(tx *lmdbstore.WriteTxn) error {
	return func(tx *lmdbstore.WriteTxn) error { return tx.PutEdge(lmdbstore.EdgePut{Src: src, Rel: rel, Dst: dst}) }
}

func node(key string, valid lmdbstore.Validity, payload string) func(tx *lmdbstore.WriteTxn) error {
	return func(tx *lmdbstore.WriteTxn) error {
		return tx.PutNode(lmdbstore.NodePut{Key: key, Valid: valid, Payload: json.RawMessage(payload)})
	}
}

func kv(ns, key string, valid lmdbstore.Validity) func(tx *lmdbstore.WriteTxn) error {
	return func(tx *lmdbstore.WriteTxn) error {
		return tx.PutKV(lmdbstore.KVPut{Scope: "r", Namespace: ns, Key: key, Payload: json.RawMessage(`1`), Valid: valid})
	}
}

// fresh is the independent expectation: an export at rev judged at now.
func fresh(t *testing.T, s *lmdbstore.Store, rev lmdbstore.Revision, now time.Time) *csr.Graph {
	t.Helper()
	m, err := storesnap.ExportInMemory(s, lmdbstore.AtRevision(rev), lmdbstore.StatusFilter{ValidAt: now}, snapshot.WriterOptions{Extra: engines.PageRankSection})
	if err != nil {
		t.Fatal(err)
	}
	g, err := csr.FromBytes(m.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// related is activation's related profile from key over every relation:
// keys and scores.
func related(t *testing.T, g *csr.Graph, key string) []string {
	t.Helper()
	eng, err := engines.New(g)
	if err != nil {
		t.Fatal(err)
	}
	n, ok, err := g.LookupKey(key)
	if err != nil || !ok {
		t.Fatalf("%s not in the snapshot: %v", key, err)
	}
	rs, err := eng.Related([]engines.Seed{{Node: n, Score: 1}}, engines.DefaultRelatedParams())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		k, _ := g.Key(r.Node)
		out = append(out, fmt.Sprintf("%s %.6g", k, r.Score))
	}
	return out
}

// sameAsFresh checks the snapshot p serves at the latest view equals a
// fresh export at that view and the clock: no logical difference, the
// same ranking from seed.
func sameAsFresh(t *testing.T, s *lmdbstore.Store, p *enginesnap.Provider, k enginesnap.Kind, now time.Time, seed, what string) *enginesnap.Snap {
	t.Helper()
	sn, view, err := p.At(k, lmdbstore.At{})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Cleanup(sn.Release)
	want := fresh(t, s, view, now)
	changes, err := enginesnap.Diff(sn.Graph, want)
	if err != nil {
		t.Fatal(err)
	}
	// What the engines read: keys, edges, node status and types; the
	// payloads' git history is compared through the ranking below.
	changes = slices.DeleteFunc(changes, func(c enginesnap.Change) bool {
		return c.Kind == "node" && c.Change == "changed" && !slices.ContainsFunc(c.Fields, func(f string) bool { return f == "status" || f == "type" })
	})
	if len(changes) > 0 {
		t.Errorf("%s: the snapshot served for rev %d differs from a fresh export: %+v", what, view, changes)
	}
	if d := cmp.Diff(related(t, want, seed), related(t, sn.Graph, seed)); d != "" {
		t.Errorf("%s: related from %s (-fresh +served):\n%s", what, seed, d)
	}
	return sn
}

// TestExactRules: an Exact snapshot is kept across kv writes and payload
// puts of nodes it holds live, rebuilt after anything else the engines
// see, and at the first valid-time bound by the clock alone; every answer
// equals a fresh export at the same view and time.
func TestExactRules(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	p := enginesnap.New(s, enginesnap.Options{Clock: c.now})
	defer p.Close()
	update(t, s, func(tx *lmdbstore.WriteTxn) error {
		for _, f := range []func(*lmdbstore.WriteTxn) error{node("a:1", lmdbstore.Validity{}, ""), edge("a:1", "calls", "a:2"), edge("a:2", "calls", "a:3")} {
			if err := f(tx); err != nil {
				return err
			}
		}
		return nil
	})
	step := func(what string, write func(*lmdbstore.WriteTxn) error, wantBuilds int) {
		t.Helper()
		if write != nil {
			update(t, s, write)
		}
		sameAsFresh(t, s, p, enginesnap.Exact, c.now(), "a:1", what)
		if got := p.Builds(enginesnap.Exact); got != wantBuilds {
			t.Errorf("after %s: %d builds, want %d", what, got, wantBuilds)
		}
	}
	soon := c.now().Add(2 * time.Second)
	step("the first call", nil, 1)
	step("the next call", nil, 1)
	step("a kv write", kv("decisions", "k", lmdbstore.Validity{}), 1)
	step("a new payload of a live node", node("a:1", lmdbstore.Validity{}, `{"seen":1}`), 1)
	step("a new type of a live node", func(tx *lmdbstore.WriteTxn) error {
		return tx.PutNode(lmdbstore.NodePut{Key: "a:1", Type: "file", Payload: json.RawMessage(`{"seen":1}`)})
	}, 2)
	step("a git history on a live node", node("a:1", lmdbstore.Validity{}, `{"git":{"changes":3,"last_change":"2025-01-01T00:00:00Z"}}`), 3)
	step("a node put on a missing node", node("a:2", lmdbstore.Validity{}, ""), 4)
	step("an edge write", edge("a:1", "calls", "a:9"), 5)
	step("a policy edge write", edge("a:1", "constrains", "a:3"), 6)
	step("a live node's valid time that holds now", node("a:2", lmdbstore.Validity{Until: base.Add(100 * 24 * time.Hour)}, ""), 6)
	step("a live node expired by a write", node("a:2", lmdbstore.Validity{Until: c.now().Add(-time.Minute)}, ""), 7)
	step("an edge to a kv entry", func(tx *lmdbstore.WriteTxn) error {
		if err := kv("n", "x", lmdbstore.Validity{})(tx); err != nil {
			return err
		}
		return edge("a:1", "calls", "kv:r/n/x")(tx)
	}, 8)
	step("that kv entry expired by a write", kv("n", "x", lmdbstore.Validity{Until: c.now().Add(-time.Minute)}), 9)
	step("a missing node made live until soon", node("a:9", lmdbstore.Validity{Until: soon}, ""), 10)
	c.add(time.Second)
	step("a second later, before its end", nil, 10)
	c.add(2 * time.Second)
	step("past its end: expired by the clock, no write", nil, 11)
	step("the next call", nil, 11)
	c.add(-time.Hour)
	step("the clock set back before the export", nil, 12)
}

// TestRankingRules: a Ranking snapshot is kept across everything but an
// edge write of a ranking relation, in both directions of the log, and
// is never served as an Exact one.
func TestRankingRules(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	p := enginesnap.New(s, enginesnap.Options{Clock: c.now})
	defer p.Close()
	update(t, s, edge("f:a", "calls", "f:b"))
	get := func(view lmdbstore.Revision) (*enginesnap.Snap, bool) {
		t.Helper()
		var sn *enginesnap.Snap
		var built bool
		if err := s.View(func(r *lmdbstore.ReadTxn) error {
			var err error
			sn, built, err = p.Get(r, enginesnap.Ranking, view)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sn.Release)
		return sn, built
	}
	if _, built := get(1); !built {
		t.Error("the first call did not build")
	}
	update(t, s, kv("decisions", "d", lmdbstore.Validity{}))                          // 2
	update(t, s, node("decision:x", lmdbstore.Validity{}, `{"text":"x"}`))            // 3
	update(t, s, edge("decision:x", "decided_for", "f:a"))                            // 4
	update(t, s, node("f:b", lmdbstore.Validity{Until: c.now().Add(-time.Hour)}, "")) // 5
	sn, built := get(5)
	if built || sn.Rev != 1 {
		t.Errorf("after non-ranking writes: built %v, rev %d; want the snapshot of rev 1", built, sn.Rev)
	}
	// The same writes rebuild an Exact snapshot, which holds the policy edge.
	ex, _, err := p.At(enginesnap.Exact, lmdbstore.At{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Release()
	if ex == sn || ex.Rev != 5 {
		t.Errorf("Exact served the Ranking snapshot or another revision: rev %d", ex.Rev)
	}
	if d, ok, _ := ex.Graph.LookupKey("decision:x"); !ok {
		t.Error("the Exact snapshot misses decision:x")
	} else if dsts, _, _, _ := ex.Graph.OutChecked(d); len(dsts) != 1 {
		t.Errorf("the Exact snapshot's decision:x has %d out-edges, want the decided_for one", len(dsts))
	}
	update(t, s, edge("f:a", "calls", "f:c")) // 6
	if sn, built := get(6); !built || sn.Rev != 6 {
		t.Errorf("after a ranking edge: built %v, rev %d; want a build at 6", built, sn.Rev)
	}
	// Back in time: rev 3 is served by the snapshot of 6? No: a ranking
	// edge lies between. It is exported in memory, then serves 1..5.
	if sn, built := get(3); !built || sn.Rev != 3 {
		t.Errorf("a past view across a ranking write: built %v, rev %d", built, sn.Rev)
	}
	for _, v := range []lmdbstore.Revision{1, 5} {
		if sn, built := get(v); built || sn.Rev != 3 {
			t.Errorf("view %d: built %v, rev %d; want the snapshot of 3 widened", v, built, sn.Rev)
		}
	}
	if got := p.Builds(enginesnap.Ranking); got != 3 {
		t.Errorf("%d Ranking builds, want 3", got)
	}
}

// TestFile: the Ranking snapshot of the latest view is persisted and
// mapped by a later provider; its range survives in ValidityFile; a file
// or range it cannot use is ignored and rebuilt, never misread.
func TestFile(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	path := filepath.Join(s.Path(), enginesnap.SnapshotFile)
	var notes []string
	open := func() *enginesnap.Provider {
		p := enginesnap.New(s, enginesnap.Options{Path: path, Clock: c.now, Logf: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
		t.Cleanup(func() { p.Close() })
		return p
	}
	update(t, s, edge("f:a", "calls", "f:b"))
	p := open()
	sn := sameAsFresh(t, s, p, enginesnap.Ranking, c.now(), "f:a", "the first call")
	if sn.Path != path || p.Builds(enginesnap.Ranking) != 1 {
		t.Errorf("first call: path %q, %d builds; want the file, 1", sn.Path, p.Builds(enginesnap.Ranking))
	}
	update(t, s, kv("decisions", "d", lmdbstore.Validity{}))
	if sn, _, _ := p.At(enginesnap.Ranking, lmdbstore.At{}); sn.Rev != 1 {
		t.Errorf("after a kv write: rev %d, want 1", sn.Rev)
	} else {
		sn.Release()
	}
	b, err := os.ReadFile(filepath.Join(s.Path(), enginesnap.ValidityFile))
	if err != nil || !strings.Contains(string(b), `"lo":1,"hi":2`) {
		t.Errorf("%s: %s %v; want the range 1..2", enginesnap.ValidityFile, b, err)
	}
	// Another process maps the file, and leaves the range it read as it
	// was (an answer does not write to the store directory).
	before, err := os.Stat(filepath.Join(s.Path(), enginesnap.ValidityFile))
	if err != nil {
		t.Fatal(err)
	}
	q := open()
	if sn := sameAsFresh(t, s, q, enginesnap.Ranking, c.now(), "f:a", "a second provider"); sn.Path != path || q.Builds(enginesnap.Ranking) != 0 {
		t.Errorf("a second provider: path %q, %d builds; want the file, 0", sn.Path, q.Builds(enginesnap.Ranking))
	}
	if after, err := os.Stat(filepath.Join(s.Path(), enginesnap.ValidityFile)); err != nil || !os.SameFile(before, after) {
		t.Errorf("a second provider rewrote %s with its unchanged range (err %v)", enginesnap.ValidityFile, err)
	}
	// A range of another export is ignored: rev 2 is read from the log.
	if err := os.WriteFile(filepath.Join(s.Path(), enginesnap.ValidityFile), []byte(`{"rev":1,"commit_time":1,"lo":0,"hi":9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	update(t, s, edge("f:a", "calls", "f:c")) // 3: only the log says 1 does not serve it
	r := open()
	sameAsFresh(t, s, r, enginesnap.Ranking, c.now(), "f:a", "a range of another export")
	if r.Builds(enginesnap.Ranking) != 1 {
		t.Errorf("a range of another export: %d builds, want 1", r.Builds(enginesnap.Ranking))
	}
	// A damaged file is ignored, with a note, and rebuilt.
	if err := os.WriteFile(path, []byte("not a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes = nil
	d := open()
	sameAsFresh(t, s, d, enginesnap.Ranking, c.now(), "f:a", "a damaged file")
	if d.Builds(enginesnap.Ranking) != 1 || len(notes) != 1 || !strings.Contains(notes[0], "ignoring") {
		t.Errorf("a damaged file: %d builds, notes %q", d.Builds(enginesnap.Ranking), notes)
	}
	// A file of another store's history is rebuilt.
	other := newStoreAt(t, base.Add(time.Minute))
	update(t, other, edge("x:1", "calls", "x:2"))
	update(t, other, edge("x:1", "calls", "x:3"))
	update(t, other, edge("x:1", "calls", "x:4"))
	if _, _, err := storesnap.Export(other, path, lmdbstore.At{}, snapshot.WriterOptions{Extra: engines.PageRankSection}); err != nil {
		t.Fatal(err)
	}
	h := open()
	sameAsFresh(t, s, h, enginesnap.Ranking, c.now(), "f:a", "another history's file")
	if h.Builds(enginesnap.Ranking) != 1 {
		t.Errorf("another history's file: %d builds, want 1", h.Builds(enginesnap.Ranking))
	}
}

// TestConcurrentGets: calls of both kinds racing writes each get a
// snapshot that serves their view (run with -race).
func TestConcurrentGets(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	p := enginesnap.New(s, enginesnap.Options{Path: filepath.Join(s.Path(), enginesnap.SnapshotFile), Clock: c.now})
	defer p.Close()
	update(t, s, edge("f:0", "calls", "f:1"))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := enginesnap.Kind(w % 2)
			for range 20 {
				sn, view, err := p.At(k, lmdbstore.At{})
				if err != nil {
					t.Error(err)
					return
				}
				if _, ok, err := sn.Graph.LookupKey("f:0"); err != nil || !ok || sn.Rev > view {
					t.Errorf("kind %v: view %d served by rev %d (f:0 %v %v)", k, view, sn.Rev, ok, err)
				}
				sn.Release()
			}
		}()
	}
	for i := range 10 {
		update(t, s, edge("f:0", "calls", fmt.Sprintf("f:%d", i+2)))
	}
	wg.Wait()
	sn, view, err := p.At(enginesnap.Exact, lmdbstore.At{})
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Release()
	dsts, _, _, _ := sn.Graph.OutChecked(must(sn.Graph.LookupKey("f:0")))
	if view != 11 || len(dsts) != 11 {
		t.Errorf("after the writes: view %d, %d out-edges of f:0; want 11, 11", view, len(dsts))
	}
}

func must(n csr.NodeIndex, ok bool, err error) csr.NodeIndex {
	if err != nil || !ok {
		panic(fmt.Sprint("lookup: ", ok, err))
	}
	return n
}

// TestMemorySnapshotOutlivesRelease: a snapshot held in memory stays
// readable after its last reference is dropped and the provider has
// replaced it (a caller may still hold it); a mapped file is unmapped
// only at its last release.
func TestMemorySnapshotOutlivesRelease(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	p := enginesnap.New(s, enginesnap.Options{Clock: c.now})
	defer p.Close()
	payload := `{"text":"` + strings.Repeat("memory ", 200) + `"}`
	update(t, s, node("f:a", lmdbstore.Validity{}, payload))
	update(t, s, edge("f:a", "calls", "f:b"))
	old, _, err := p.At(enginesnap.Exact, lmdbstore.At{})
	if err != nil {
		t.Fatal(err)
	}
	want := related(t, old.Graph, "f:a")
	old.Release()
	update(t, s, edge("f:a", "calls", "f:c"))
	cur, _, err := p.At(enginesnap.Exact, lmdbstore.At{})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Release()
	if cur == old || p.Builds(enginesnap.Exact) != 2 {
		t.Fatalf("the edge write did not replace the snapshot (%d builds)", p.Builds(enginesnap.Exact))
	}
	if d := cmp.Diff(want, related(t, old.Graph, "f:a")); d != "" {
		t.Errorf("the replaced snapshot answers differently:\n%s", d)
	}
	i := must(old.Graph.LookupKey("f:a"))
	if got, err := old.Graph.Payload(i); err != nil || !json.Valid(got) || !strings.Contains(string(got), "memory memory") {
		t.Errorf("the replaced snapshot's payload: %.40s… %v", got, err)
	}
}

// TestExactFromFile: a provider's first Exact call maps the Ranking file
// when the validity file gives the export's valid-time window and Exact's
// rules keep it to the view, answering as a fresh export; past the
// window's end, after a write Exact does not keep, or with a validity
// file of an older writer (no window), it exports anew.
func TestExactFromFile(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	path := filepath.Join(s.Path(), enginesnap.SnapshotFile)
	open := func() *enginesnap.Provider {
		p := enginesnap.New(s, enginesnap.Options{Path: path, Clock: c.now})
		t.Cleanup(func() { p.Close() })
		return p
	}
	soon := c.now().Add(time.Minute)
	update(t, s, func(tx *lmdbstore.WriteTxn) error {
		for _, f := range []func(*lmdbstore.WriteTxn) error{edge("f:a", "calls", "f:b"), edge("f:b", "calls", "f:c"),
			node("f:c", lmdbstore.Validity{Until: soon}, "")} {
			if err := f(tx); err != nil {
				return err
			}
		}
		return nil
	})
	sameAsFresh(t, s, open(), enginesnap.Ranking, c.now(), "f:a", "the file written")
	b, err := os.ReadFile(filepath.Join(s.Path(), enginesnap.ValidityFile))
	if err != nil || !strings.Contains(string(b), fmt.Sprintf(`"valid_at":%d,"valid_until":%d`, c.now().UnixNano(), soon.UnixNano())) {
		t.Fatalf("%s: %s %v; want the export's window", enginesnap.ValidityFile, b, err)
	}
	exact := func(what string, wantBuilds int) {
		t.Helper()
		p := open()
		sn := sameAsFresh(t, s, p, enginesnap.Exact, c.now(), "f:a", what)
		if got := p.Builds(enginesnap.Exact); got != wantBuilds || (wantBuilds == 0) != (sn.Path == path) {
			t.Errorf("%s: %d Exact builds, path %q; want %d", what, got, sn.Path, wantBuilds)
		}
	}
	exact("a fresh provider", 0)
	update(t, s, kv("decisions", "d", lmdbstore.Validity{}))
	exact("after a kv write Exact keeps", 0)
	c.add(2 * time.Minute)
	exact("past the end of f:c's valid time", 1)
	c.add(-2 * time.Minute)
	exact("back inside the window", 0)
	if err := os.WriteFile(filepath.Join(s.Path(), enginesnap.ValidityFile), fmt.Appendf(nil, `{"rev":1,"commit_time":%d,"lo":1,"hi":2}`, must64(t, s)), 0o644); err != nil {
		t.Fatal(err)
	}
	exact("a validity file without the window", 1)
	update(t, s, edge("f:a", "calls", "f:d"))
	exact("after an edge write", 1)
}

// must64 is the commit time of revision 1 of s, in unix ns.
func must64(t *testing.T, s *lmdbstore.Store) int64 {
	t.Helper()
	var ns int64
	if err := s.View(func(r *lmdbstore.ReadTxn) error {
		ct, err := r.CommitTime(1)
		ns = ct.UnixNano()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestFileSyncLater: with SyncLater a provider answers from the export
// as fresh as without it, while the file is put in place on another
// goroutine; its next call finds the file in place (and keeps its own
// snapshot: no second export), and after Close another provider maps the
// file instead of exporting. An edge write then gives a new export, also
// in place once the provider is closed.
func TestFileSyncLater(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	path := filepath.Join(s.Path(), enginesnap.SnapshotFile)
	open := func(later bool) *enginesnap.Provider {
		p := enginesnap.New(s, enginesnap.Options{Path: path, Clock: c.now, SyncLater: later})
		t.Cleanup(func() { p.Close() })
		return p
	}
	update(t, s, edge("f:a", "calls", "f:b"))
	p := open(true)
	if sn := sameAsFresh(t, s, p, enginesnap.Ranking, c.now(), "f:a", "first call"); sn.Path != path || p.Builds(enginesnap.Ranking) != 1 {
		t.Fatalf("first call: path %q, %d builds; want the file, 1", sn.Path, p.Builds(enginesnap.Ranking))
	}
	if sn := sameAsFresh(t, s, p, enginesnap.Ranking, c.now(), "f:a", "second call"); sn.Rev != 1 || p.Builds(enginesnap.Ranking) != 1 {
		t.Fatalf("second call: rev %d, %d builds; want 1, 1", sn.Rev, p.Builds(enginesnap.Ranking))
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file after the provider's next call: %v", err)
	}
	update(t, s, edge("f:b", "calls", "f:c"))
	if sn := sameAsFresh(t, s, p, enginesnap.Ranking, c.now(), "f:b", "after an edge write"); sn.Rev != 2 || p.Builds(enginesnap.Ranking) != 2 {
		t.Fatalf("after an edge write: rev %d, %d builds; want 2, 2", sn.Rev, p.Builds(enginesnap.Ranking))
	}
	p.Close()
	g, err := csr.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rev := g.Revision()
	g.Close()
	if rev != 2 {
		t.Fatalf("the file after Close holds rev %d, want 2", rev)
	}
	q := open(false)
	if sn := sameAsFresh(t, s, q, enginesnap.Ranking, c.now(), "f:b", "another provider"); sn.Path != path || q.Builds(enginesnap.Ranking) != 0 {
		t.Errorf("another provider: path %q, %d builds; want the file, 0", sn.Path, q.Builds(enginesnap.Ranking))
	}
	if names, _ := filepath.Glob(filepath.Join(s.Path(), ".context.snap.tmp-*")); len(names) != 0 {
		t.Errorf("temporary files left: %v", names)
	}
}

// TestFileFromBase: a one-shot command after a small write (a new
// provider, the file one revision behind) exports starting from the file
// it mapped, and writes the bytes a full export at the same view and time
// writes; so does a long-lived provider's next in-memory Exact export.
// A clock before the file's valid-at time exports in full.
func TestFileFromBase(t *testing.T) {
	s := newStore(t)
	c := &clock{t: base.Add(time.Hour)}
	path := filepath.Join(s.Path(), enginesnap.SnapshotFile)
	update(t, s, node("f:a", lmdbstore.Validity{}, `{"text":"`+strings.Repeat("alpha beta ", 40)+`"}`))
	update(t, s, edge("f:a", "calls", "f:b"))
	update(t, s, edge("f:b", "calls", "f:c"))
	oneShot := func(what string, wantFromBase int) {
		t.Helper()
		p := enginesnap.New(s, enginesnap.Options{Path: path, Clock: c.now})
		sn, view, err := p.At(enginesnap.Ranking, lmdbstore.At{})
		if err != nil {
			t.Fatal(err)
		}
		sn.Release()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if p.Builds(enginesnap.Ranking) != 1 || p.FromBase(enginesnap.Ranking) != wantFromBase {
			t.Errorf("%s: %d builds, %d from the base; want 1, %d", what, p.Builds(enginesnap.Ranking), p.FromBase(enginesnap.Ranking), wantFromBase)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := storesnap.ExportInMemory(s, lmdbstore.AtRevision(view), lmdbstore.StatusFilter{ValidAt: c.now()}, snapshot.WriterOptions{Extra: engines.PageRankSection})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want.Bytes) {
			t.Errorf("%s: the file differs from a full export of rev %d", what, view)
		}
	}
	oneShot("the first export", 0)
	update(t, s, func(tx *lmdbstore.WriteTxn) error {
		if err := node("f:b", lmdbstore.Validity{}, `{"text":"gamma"}`)(tx); err != nil {
			return err
		}
		return edge("f:b", "calls", "f:e")(tx)
	})
	c.add(time.Second)
	oneShot("after a node and an edge put", 1)
	update(t, s, edge("f:c", "calls", "f:d"))
	c.t = base // before the file's valid-at time
	oneShot("a clock before the file's", 0)

	e := enginesnap.New(s, enginesnap.Options{Clock: c.now})
	defer e.Close()
	sameAsFresh(t, s, e, enginesnap.Exact, c.now(), "f:a", "the first Exact export")
	update(t, s, edge("f:d", "calls", "f:a"))
	sameAsFresh(t, s, e, enginesnap.Exact, c.now(), "f:a", "the next Exact export")
	if e.Builds(enginesnap.Exact) != 2 || e.FromBase(enginesnap.Exact) != 1 {
		t.Errorf("Exact: %d builds, %d from the base; want 2, 1", e.Builds(enginesnap.Exact), e.FromBase(enginesnap.Exact))
	}
}
