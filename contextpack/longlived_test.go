package contextpack_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// randomRepo writes a random repository's memory into a new store: dirs
// containing files, files defining symbols, symbols calling and
// referencing each other, files co-changing, and a few decisions
// constraining files and symbols, some of which are then deleted (their
// decisions orphaned). It returns the store, its files' paths, its
// symbols' keys and the keys the decisions constrain.
func randomRepo(t *testing.T, rng *rand.Rand) (s *lmdbstore.Store, files, syms, constrained []string) {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	_, err = s.Update(lmdbstore.WriteMeta{RunID: "r1"}, func(tx *lmdbstore.WriteTxn) error {
		if err := addIngestRelations(tx); err != nil {
			return err
		}
		put := func(key, payload string) error {
			return tx.PutNode(lmdbstore.NodePut{Key: key, Payload: json.RawMessage(payload)})
		}
		edge := func(src, rel, dst string) error {
			return tx.PutEdge(lmdbstore.EdgePut{Src: src, Rel: rel, Dst: dst})
		}
		if err := put("dir:.", `{}`); err != nil {
			return err
		}
		for d := range 1 + rng.IntN(4) {
			dir := fmt.Sprintf("d%d", d)
			if err := put("dir:"+dir, `{}`); err != nil {
				return err
			}
			if err := edge("dir:.", "contains", "dir:"+dir); err != nil {
				return err
			}
			for f := range 1 + rng.IntN(6) {
				path := fmt.Sprintf("%s/f%d.go", dir, f)
				files = append(files, path)
				if err := put("file:"+path, fmt.Sprintf(`{"path":%q}`, path)); err != nil {
					return err
				}
				if err := edge("dir:"+dir, "contains", "file:"+path); err != nil {
					return err
				}
				for k := range rng.IntN(5) {
					sym := fmt.Sprintf("sym:m/%s.F%d_%d", dir, f, k)
					syms = append(syms, sym)
					if err := put(sym, fmt.Sprintf(`{"path":%q,"line_start":%d,"line_end":%d}`, path, k*10+1, k*10+9)); err != nil {
						return err
					}
					if err := edge("file:"+path, "defines", sym); err != nil {
						return err
					}
				}
			}
		}
		for range rng.IntN(3 * len(syms)) {
			rel := []string{"calls", "references"}[rng.IntN(2)]
			if err := edge(syms[rng.IntN(len(syms))], rel, syms[rng.IntN(len(syms))]); err != nil {
				return err
			}
		}
		for range rng.IntN(len(files)) {
			a, b := files[rng.IntN(len(files))], files[rng.IntN(len(files))]
			if a != b {
				if err := edge("file:"+a, "co_changed", "file:"+b); err != nil {
					return err
				}
			}
		}
		for i := range 1 + rng.IntN(6) {
			dec := fmt.Sprintf("decision:d%d", i)
			if err := put(dec, fmt.Sprintf(`{"text":"decision %d"}`, i)); err != nil {
				return err
			}
			dst := "file:" + files[rng.IntN(len(files))]
			if len(syms) > 0 && rng.IntN(2) == 0 {
				dst = syms[rng.IntN(len(syms))]
			}
			if err := edge(dec, "constrains", dst); err != nil {
				return err
			}
			constrained = append(constrained, dst)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, files, syms, constrained
}

// TestLongLivedEqualsFresh: on random repositories, a long-lived
// Assembler's packs (the second call of a target answered from what the
// Assembler kept: the orphans of the view, the related walk's rankings,
// what the view says of the nodes they place) equal those of a fresh
// Assembler, before and after writes that delete symbols (orphaning
// decisions) and add ranking edges, then supersede symbols and give others
// a valid time, at two valid-at times asked of the same Assembler in turn.
func TestLongLivedEqualsFresh(t *testing.T) {
	related, orphaned := 0, 0 // what the comparisons covered
	expired := 0              // related items shown at base and expired at now
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 28))
		s, files, syms, constrained := randomRepo(t, rng)
		snaps := enginesnap.New(s, enginesnap.Options{})
		long := contextpack.New(s, contextpack.Options{Snapshots: snaps})
		// check compares long's packs with a fresh Assembler's (made with
		// freshOpts), at valid-at now and base in turn.
		check := func(stage string, freshOpts contextpack.Options) {
			t.Helper()
			for _, f := range files {
				for _, validAt := range []time.Time{now, base} {
					req := contextpack.Request{Targets: []string{f}, ValidAt: validAt}
					first := assemble(t, long, req)
					again := assemble(t, long, req)
					fresh := contextpack.New(s, freshOpts)
					want := assemble(t, fresh, req)
					fresh.Close()
					related += len(want.Related)
					for _, p := range want.Applies {
						if p.Via == "orphaned" {
							orphaned++
						}
					}
					for _, got := range []*contextpack.Pack{first, again} {
						if diff := cmp.Diff(want.Related, got.Related); diff != "" {
							t.Fatalf("seed %d %s, %s at %v: Related differs (-fresh +long-lived):\n%s", seed, stage, f, validAt, diff)
						}
						if diff := cmp.Diff(want.Applies, got.Applies); diff != "" {
							t.Fatalf("seed %d %s, %s at %v: Applies differs (-fresh +long-lived):\n%s", seed, stage, f, validAt, diff)
						}
					}
					if validAt.Equal(base) {
						expired += len(want.Related) - len(first.Related) // 0: long answered as fresh
						atNow := assemble(t, long, contextpack.Request{Targets: []string{f}, ValidAt: now})
						expired += len(want.Related) - len(atNow.Related)
					}
				}
			}
		}
		own := contextpack.Options{SnapshotPath: "-"} // its own snapshots, exported anew
		check("as written", own)
		// Delete what half the decisions constrain (orphaning them) and add a
		// co-change (a ranking edge: a new engine snapshot).
		_, err := s.Update(lmdbstore.WriteMeta{RunID: "r2"}, func(tx *lmdbstore.WriteTxn) error {
			for i, k := range constrained {
				if i%2 == 0 {
					if err := tx.DeleteNode(k); err != nil && !errors.Is(err, lmdbstore.ErrNotFound) {
						return err // (ErrNotFound: constrained twice, deleted already)
					}
				}
			}
			a, b := files[rng.IntN(len(files))], files[rng.IntN(len(files))]
			if a == b {
				return nil
			}
			return tx.PutEdge(lmdbstore.EdgePut{Src: "file:" + a, Rel: "co_changed", Dst: "file:" + b})
		})
		if err != nil {
			t.Fatal(err)
		}
		// Deleted files are no targets any more: keep the live ones.
		var live []string
		for _, f := range files {
			err := s.View(func(r *lmdbstore.ReadTxn) error { _, err := r.GetNode("file:"+f, lmdbstore.At{}); return err })
			if err == nil {
				live = append(live, f)
			}
		}
		files = live
		check("after deletes", own)
		// Supersede every fifth symbol and end the valid time of others
		// between base and now (the symbols' payloads rewritten as
		// randomRepo wrote them: sym:m/DIR.FF_K is in DIR/fF.go).
		_, err = s.Update(lmdbstore.WriteMeta{RunID: "r3"}, func(tx *lmdbstore.WriteTxn) error {
			for i, k := range syms {
				var dir string
				var f, line int
				if _, err := fmt.Sscanf(strings.NewReplacer("sym:m/", "", ".F", " ", "_", " ").Replace(k), "%s %d %d", &dir, &f, &line); err != nil {
					return err
				}
				var err error
				switch i % 5 {
				case 1:
					if err = tx.PutNode(lmdbstore.NodePut{Key: k + "_v2", Payload: json.RawMessage(`{}`)}); err == nil {
						err = tx.Supersede(k, k+"_v2")
					}
				case 2, 3:
					payload := fmt.Sprintf(`{"path":"%s/f%d.go","line_start":%d,"line_end":%d}`, dir, f, line*10+1, line*10+9)
					err = tx.PutNode(lmdbstore.NodePut{Key: k, Payload: json.RawMessage(payload), Valid: lmdbstore.Validity{Until: base.Add(time.Hour)}})
				}
				if err != nil && !errors.Is(err, lmdbstore.ErrNotFound) { // (ErrNotFound: deleted above)
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// A supersede or a valid time makes no new engine snapshot (§12.5),
		// and a fresh Assembler with its own would export one that ranks
		// otherwise: this one shares long's snapshots and keeps nothing.
		check("after supersedes and valid times", contextpack.Options{Snapshots: snaps})
		long.Close()
		snaps.Close()
	}
	t.Logf("%d related, %d orphaned compared; %d related items valid at base expired at now", related, orphaned, expired)
	if related < 100 || orphaned == 0 || expired == 0 {
		t.Errorf("the random repositories gave %d related items, %d orphans and %d expired ones: too few to compare", related, orphaned, expired)
	}
}
