package freshness

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

// TestTrackedTree: after Ingest, the store follows the tree with the
// options it was read with; RefreshTracked picks up an edit without being
// told where the tree is, and a store never ingested follows nothing.
func TestTrackedTree(t *testing.T) {
	s := newStore(t)
	if _, tracked, err := RefreshTracked(s, false, nil); err != nil || tracked {
		t.Fatalf("a new store: tracked %v, %v", tracked, err)
	}
	dir := fixture(t)
	o := testOptions()
	o.Ingest.Offline = true
	if _, err := Ingest(s, dir, o); err != nil {
		t.Fatal(err)
	}
	got, opts, ok := Tracked(s)
	if !ok || got != dir {
		t.Fatalf("Tracked = %q, %v; want %q", got, ok, dir)
	}
	want := o.withDefaults(s)
	if opts.config() != want.config() {
		t.Errorf("options read back %q, want %q", opts.config(), want.config())
	}
	res, tracked, err := RefreshTracked(s, false, nil)
	if err != nil || !tracked || res.Refreshed {
		t.Fatalf("unchanged tree: %+v, %v, %v", res, tracked, err)
	}
	write(t, dir, "py/pkg/beta.py", "from pkg.alpha import area\n\n\ndef double(x):\n    return area(x, 2)\n\n\ndef triple(x):\n    return area(x, 3)\n")
	// Disabled: nothing written, the edit listed as stale.
	var rev lmdbstore.Revision
	_ = s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil })
	res, _, err = RefreshTracked(s, true, nil)
	if err != nil || res.Refreshed || !slices.Contains(res.Stale, "py/pkg/beta.py") {
		t.Fatalf("disabled refresh after an edit: %+v, %v", res, err)
	}
	res, _, err = RefreshTracked(s, false, nil)
	if err != nil || !res.Refreshed || res.Rev != rev+1 || !slices.Equal(res.Changed, []string{"py/pkg/beta.py"}) {
		t.Fatalf("refresh after an edit: %+v, %v (store was at %d)", res, err, rev)
	}
	// A one-shot refresh saves the cache file while its caller answers;
	// once Wait returns, the file is there for the next process.
	res.Wait()
	if _, err := loadCacheFile(filepath.Join(filepath.Dir(opts.StatePath), CacheFile)); err != nil {
		t.Errorf("the refresh cache file after Wait: %v", err)
	}
	var found bool
	_ = s.View(func(r *lmdbstore.ReadTxn) error {
		_, err := r.GetNode("sym:py:pkg.beta.triple", lmdbstore.At{})
		found = err == nil
		return nil
	})
	if !found {
		t.Error("the new function is not in the store after the refresh")
	}
}
