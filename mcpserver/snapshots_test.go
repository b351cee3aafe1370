package mcpserver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// TestSnapshotClock: the analysis tools' snapshot is judged at the
// server's clock (Options.Now): a node valid until a time is in the
// snapshot before it and gone after it, with no write between, and each
// answer's graph is a fresh export's at that view and time. The context
// assembler asks the same provider.
func TestSnapshotClock(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := base
	s := New(store, Options{Now: func() time.Time { return now }})
	defer s.snaps.Close()
	if _, err := store.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		if err := tx.PutNode(lmdbstore.NodePut{Key: "a:1"}); err != nil {
			return err
		}
		if err := tx.PutNode(lmdbstore.NodePut{Key: "a:9", Valid: lmdbstore.Validity{Until: base.Add(2 * time.Second)}}); err != nil {
			return err
		}
		return tx.PutEdge(lmdbstore.EdgePut{Src: "a:1", Rel: "calls", Dst: "a:9"})
	}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, wantA9 bool, wantBuilds int) {
		t.Helper()
		e, err := s.snapshot(ViewArgs{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := storesnap.ExportInMemory(store, lmdbstore.AtRevision(e.rev), lmdbstore.StatusFilter{ValidAt: now}, snapshot.WriterOptions{Extra: engines.PageRankSection})
		if err != nil {
			t.Fatal(err)
		}
		want, err := csr.FromBytes(m.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if changes, err := enginesnap.Diff(e.graph, want); err != nil || len(changes) > 0 {
			t.Errorf("%s: the snapshot differs from a fresh export: %+v %v", what, changes, err)
		}
		i, ok, err := e.graph.LookupKey("a:9")
		if err != nil {
			t.Fatal(err)
		}
		live := false
		if ok {
			n, err := e.graph.Node(i)
			if err != nil {
				t.Fatal(err)
			}
			live = !n.Missing
		}
		if live != wantA9 {
			t.Errorf("%s: a:9 live in the snapshot: %v, want %v", what, live, wantA9)
		}
		if got := s.snaps.Builds(enginesnap.Exact); got != wantBuilds {
			t.Errorf("%s: %d builds, want %d", what, got, wantBuilds)
		}
	}
	check("the first call", true, 1)
	now = now.Add(time.Second)
	check("a second later", true, 1)
	now = now.Add(2 * time.Second)
	check("past a:9's valid time", false, 2)
	check("the next call", false, 2)

	if _, err := s.contexts.Assemble(contextpack.Request{Targets: []string{"a:1"}}); err != nil {
		t.Fatal(err)
	}
	if a, p := s.contexts.SnapshotBuilds(), s.snaps.Builds(enginesnap.Ranking); a != 1 || p != 1 {
		t.Errorf("a context call: the assembler counts %d builds, the server's provider %d; want one shared build", a, p)
	}
}
