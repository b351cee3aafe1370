package freshness

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/lmdbstore"
)

func memoryOut(t *testing.T, s *lmdbstore.Store, key string) []string {
	t.Helper()
	var out []string
	s.View(func(r *lmdbstore.ReadTxn) error {
		return r.ScanOut(lmdbstore.IDOf(key), 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool {
			rel, _ := r.RelationByID(e.Rel)
			dst, _ := r.KeyOf(e.Peer)
			out = append(out, rel.Name+" "+dst)
			return true
		})
	})
	slices.Sort(out)
	return out
}

// TestDecisionsFollowRenames: a decision on a file and a symbol, and a kv
// policy naming both, follow a git rename and a symbol move in the
// ingest's own revision; once the targets are deleted the decision is an
// orphan under the nearest live directory.
func TestDecisionsFollowRenames(t *testing.T) {
	dir := fixture(t)
	s := newStore(t)
	refresh(t, s, dir)
	_, err := s.Update(lmdbstore.WriteMeta{RunID: "agent"}, func(tx *lmdbstore.WriteTxn) error {
		if err := tx.PutNode(lmdbstore.NodePut{Key: "decision:area-in-alpha", Type: "decision", Payload: json.RawMessage(`{"text":"keep area pure"}`)}); err != nil {
			return err
		}
		for _, e := range []lmdbstore.EdgePut{
			{Src: "decision:area-in-alpha", Rel: "constrains", Dst: "file:py/pkg/alpha.py"},
			{Src: "decision:area-in-alpha", Rel: "decided_for", Dst: "sym:py:pkg.alpha.area"},
			{Src: "decision:area-in-alpha", Rel: "constrains", Dst: "sym:example.com/fx/util.twice"},
		} {
			if err := tx.PutEdge(e); err != nil {
				return err
			}
		}
		return tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: "decisions", Key: "area",
			Payload: json.RawMessage(`{"text":"t","applies_to":["file:py/pkg/alpha.py","py/pkg/alpha.py","sym:py:pkg.alpha.Shape"]}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	// A similar but not identical rename through git, and a Go symbol moved
	// to another file of its package.
	b, _ := os.ReadFile(filepath.Join(dir, "py/pkg/alpha.py"))
	git(t, dir, "mv", "py/pkg/alpha.py", "py/pkg/shapes.py")
	write(t, dir, "py/pkg/shapes.py", string(b)+"\n# moved\n")
	write(t, dir, "py/pkg/beta.py", "from pkg.shapes import area\n\n\ndef double(x):\n    return area(x, 2)\n")
	write(t, dir, "util/util.go", "package util\n\n// Helper helps.\nfunc Helper() int { return 2 }\n")
	write(t, dir, "lib/twice.go", "package lib\n\nfunc twice(x int) int { return 2 * x }\n")
	res := refresh(t, s, dir)
	if got, want := graphDump(t, s), freshDump(t, dir); !slices.Equal(got, want) {
		t.Fatalf("graph differs:\n%s", diffLines(got, want))
	}
	want := []string{
		"constrains file:py/pkg/shapes.py",
		"constrains sym:example.com/fx/lib.twice",
		"decided_for sym:py:pkg.shapes.area",
	}
	if got := memoryOut(t, s, "decision:area-in-alpha"); !slices.Equal(got, want) {
		t.Fatalf("decision edges %v, want %v (moves %+v)", got, want, res.Moves)
	}
	var kv lmdbstore.KV
	var moveRevs []lmdbstore.Revision
	s.View(func(r *lmdbstore.ReadTxn) error {
		kv, err = r.GetKV("repo", "decisions", "area", lmdbstore.At{})
		for _, k := range []string{"file:py/pkg/alpha.py", "sym:py:pkg.alpha.area", "sym:example.com/fx/util.twice"} {
			m, err := r.GetKV(codetree.RecordScope, codetree.MovesNamespace, k, lmdbstore.At{})
			if err != nil {
				t.Errorf("no move record for %s: %v", k, err)
			}
			moveRevs = append(moveRevs, m.Rev)
		}
		// The carried edge is written in the ingest's revision.
		rec, err := r.GetEdge("decision:area-in-alpha", "constrains", "file:py/pkg/shapes.py", lmdbstore.At{})
		if err != nil || rec.Rev != res.Rev || rec.RunID != "agent" {
			t.Errorf("carried edge %+v, %v; ingest rev %d", rec, err, res.Rev)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(kv.Payload); got != `{"applies_to":["file:py/pkg/shapes.py","py/pkg/shapes.py","sym:py:pkg.shapes.Shape"],"text":"t"}` || kv.Rev != res.Rev {
		t.Fatalf("kv applies_to not carried: %s at rev %d (ingest rev %d)", got, kv.Rev, res.Rev)
	}
	for _, r := range moveRevs {
		if r != res.Rev {
			t.Fatalf("move recorded at rev %d, ingest rev %d", r, res.Rev)
		}
	}
	var orphans []Orphan
	s.View(func(r *lmdbstore.ReadTxn) (err error) { orphans, err = Orphans(r, lmdbstore.At{}); return })
	if len(orphans) != 0 {
		t.Fatalf("orphans after a followed move: %+v", orphans)
	}

	// Delete the targets: the decision is orphaned, never dropped.
	os.Remove(filepath.Join(dir, "py/pkg/shapes.py"))
	write(t, dir, "py/pkg/beta.py", "def double(x):\n    return 2 * x\n")
	del := refresh(t, s, dir)
	s.View(func(r *lmdbstore.ReadTxn) (err error) { orphans, err = Orphans(r, lmdbstore.At{}); return })
	wantO := []Orphan{
		{Item: "decision:area-in-alpha", Via: "constrains", Target: "file:py/pkg/shapes.py", DeletedRev: del.Rev, Nearest: "dir:py/pkg"},
		{Item: "decision:area-in-alpha", Via: "decided_for", Target: "sym:py:pkg.shapes.area", DeletedRev: del.Rev, Nearest: "dir:py/pkg"},
		{Item: "kv:repo/decisions/area", Via: "applies_to", Target: "file:py/pkg/shapes.py", DeletedRev: del.Rev, Nearest: "dir:py/pkg"},
		{Item: "kv:repo/decisions/area", Via: "applies_to", Target: "sym:py:pkg.shapes.Shape", DeletedRev: del.Rev, Nearest: "dir:py/pkg"},
	}
	if !slices.Equal(orphans, wantO) {
		t.Fatalf("orphans\n%+v\nwant\n%+v", orphans, wantO)
	}
	if got := memoryOut(t, s, "decision:area-in-alpha"); len(got) != 3 {
		t.Fatalf("orphaned edges dropped: %v", got)
	}
}

// TestRenameByHashWithoutGit: outside git a plain rename is recognised by
// identical content.
func TestRenameByHashWithoutGit(t *testing.T) {
	dir := fixture(t)
	os.RemoveAll(filepath.Join(dir, ".git"))
	s := newStore(t)
	refresh(t, s, dir)
	s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutEdge(lmdbstore.EdgePut{Src: "decision:fmt", Rel: "constrains", Dst: "file:web/fmt.js"})
	})
	os.MkdirAll(filepath.Join(dir, "web/lib"), 0o755)
	os.Rename(filepath.Join(dir, "web/fmt.js"), filepath.Join(dir, "web/lib/fmt.js"))
	res := refresh(t, s, dir)
	if res.Commit != "" {
		t.Fatalf("commit outside git: %+v", res)
	}
	if got := memoryOut(t, s, "decision:fmt"); !slices.Equal(got, []string{"constrains file:web/lib/fmt.js"}) {
		t.Fatalf("edges %v, moves %+v", got, res.Moves)
	}
}

// TestConcurrentRefreshers: 4 processes refreshing one store after one
// edit write it once; each reads and writes the refresh cache file, and
// the one that writes the edit of round 0 takes the per-file path from
// the file the parent's refresh left.
func TestConcurrentRefreshers(t *testing.T) {
	if os.Getenv("MEMCTL_FRESH_CHILD") != "" {
		return
	}
	dir := fixture(t)
	storeDir := filepath.Join(t.TempDir(), "store")
	s, err := lmdbstore.Init(storeDir, lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	first := refresh(t, s, dir)
	s.Close()
	for round, edit := range []func(){
		func() { write(t, dir, "web/fmt.js", "export function fmt(x) { return `${x}` }\n") },
		func() { git(t, dir, "mv", "py/pkg/alpha.py", "py/pkg/a2.py") },
		func() { git(t, dir, "add", "-A"); git(t, dir, "commit", "-q", "-m", "c") },
	} {
		edit()
		var wg sync.WaitGroup
		outs := make([]string, 4)
		for i := range outs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestRefreshChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), "MEMCTL_FRESH_CHILD=1", "MEMCTL_FRESH_STORE="+storeDir, "MEMCTL_FRESH_DIR="+dir)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("child: %v\n%s", err, out)
				}
				outs[i] = string(out)
			}()
		}
		wg.Wait()
		written := 0
		for _, o := range outs {
			if strings.Contains(o, "wrote rev") {
				written++
			}
		}
		s, err := lmdbstore.Open(storeDir, lmdbstore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		var rev lmdbstore.Revision
		s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil })
		fresh := freshDump(t, dir)
		got := graphDump(t, s)
		s.Close()
		if written != 1 || rev != first.Rev+lmdbstore.Revision(round)+1 {
			t.Fatalf("round %d: %d children wrote, store at rev %d after %d: %q", round, written, rev, first.Rev, outs)
		}
		if round == 0 && !slices.ContainsFunc(outs, func(o string) bool { return strings.Contains(o, "wrote rev") && strings.Contains(o, "per-file 1") }) {
			t.Fatalf("round 0: the writer did not take the per-file path from the cache file: %q", outs)
		}
		if !slices.Equal(got, fresh) {
			t.Fatalf("round %d: graph differs:\n%s", round, diffLines(got, fresh))
		}
	}
}

// TestRefreshChild is one refresher process of TestConcurrentRefreshers.
func TestRefreshChild(t *testing.T) {
	if os.Getenv("MEMCTL_FRESH_CHILD") == "" {
		t.Skip("run by TestConcurrentRefreshers")
	}
	s, err := lmdbstore.Open(os.Getenv("MEMCTL_FRESH_STORE"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := testOptions()
	deltas := 0
	o.cacheFileUsed = func(c *codetree.Cache) { deltas = c.Deltas() }
	res, err := Refresh(s, os.Getenv("MEMCTL_FRESH_DIR"), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rev != 0 {
		fmt.Printf("wrote rev %d, per-file %d\n", res.Rev, deltas)
	}
}
