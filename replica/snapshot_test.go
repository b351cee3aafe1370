package replica_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
)

func writeN(t *testing.T, m *machine, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := m.s.Update(lmdbstore.WriteMeta{RunID: "w"}, func(tx *lmdbstore.WriteTxn) error {
			if err := tx.PutNode(lmdbstore.NodePut{Key: fmt.Sprintf("file:f%d.go", i)}); err != nil {
				return err
			}
			return tx.PutEdge(lmdbstore.EdgePut{Src: fmt.Sprintf("file:f%d.go", i), Rel: "imports", Dst: fmt.Sprintf("file:f%d.go", i/2)})
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func dialOpen(t *testing.T, addr replica.Address) *replica.Remote {
	t.Helper()
	r, err := replica.Dial(addr, replica.Credentials{}, replica.Options{MaxData: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if err := r.Open(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCloneFromSnapshot: a clone starts from the published snapshot (its
// revision, not revision 0) and applies only the revisions after it; it
// ends with the writer's history, revision by revision. Without a
// snapshot a clone replays the whole stream. A snapshot of another
// stream is refused and leaves the directory as it was.
func TestCloneFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	addr := ts.addr(t, "boot")
	a := newMachine(t, filepath.Join(dir, "a"), addr, replica.Options{MaxData: 4096})
	writeN(t, a, 0, 30)

	// No snapshot yet: the clone replays from revision 1.
	r0 := dialOpen(t, addr)
	s0, info, err := r0.Clone(filepath.Join(dir, "replay"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s0.Close() })
	if info.Rev != 0 {
		t.Fatalf("clone without a snapshot started at revision %d", info.Rev)
	}

	pub, err := a.r.PublishSnapshot(a.s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if pub.Rev != 30 || pub.Bytes == 0 {
		t.Fatalf("published %+v, want revision 30", pub)
	}
	writeN(t, a, 30, 10)
	r := dialOpen(t, addr)
	s, info, err := r.Clone(filepath.Join(dir, "c"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if info.Rev != 30 || info.Pos != pub.Pos {
		t.Fatalf("clone started from %+v, want the snapshot %+v", info, pub)
	}
	if _, ok, err := replica.ReadBinding(filepath.Join(dir, "c")); !ok || err != nil {
		t.Fatalf("clone wrote no binding: %v", err)
	}
	assertReplicas(t, []*machine{a, {s: s, r: r}, {s: s0, r: r0}})

	// A snapshot of another stream, published under this one's name.
	other := ts.addr(t, "other")
	o := newMachine(t, filepath.Join(dir, "o"), other, replica.Options{})
	writeN(t, o, 100, 3)
	// Publish o's copy as "boot"'s snapshot: a Remote of boot, store o.
	forged := &machine{s: o.s, r: dialOpen(t, addr)}
	if _, err := forged.r.PublishSnapshot(forged.s, dir); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "forged")
	_, _, err = dialOpen(t, addr).Clone(target, lmdbstore.Options{NoSync: true})
	if !errors.Is(err, lmdbstore.ErrDiverged) {
		t.Fatalf("clone from a foreign snapshot: %v, want ErrDiverged", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a refused clone left %s: %v", target, err)
	}
}
