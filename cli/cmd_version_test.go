package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
)

// Issue #27.4: memctl --version and memctl version print the same: module
// version, commit, Go version, schema and snapshot format.
func TestVersion(t *testing.T) {
	text := ok(t, "version")
	if got := ok(t, "--version"); got != text {
		t.Errorf("--version printed\n%s\nversion printed\n%s", got, text)
	}
	rows := map[string]string{} // first field → the rest
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		k, rest, _ := strings.Cut(line, " ")
		rows[k] = strings.TrimSpace(rest)
	}
	for k, want := range map[string]string{"go": runtime.Version(), "schema": fmt.Sprint(lmdbstore.SchemaVersion), "snapshot_format": snapshot.FormatNewest.String()} {
		if rows[k] != want {
			t.Errorf("version output: %s %q, want %q:\n%s", k, rows[k], want, text)
		}
	}
	for _, k := range []string{"version", "commit", "commit_time"} {
		if rows[k] == "" {
			t.Errorf("version output lacks %s:\n%s", k, text)
		}
	}
	var v map[string]any
	raw := ok(t, "--json", "version")
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("--json version: %v: %q", err, raw)
	}
	if v["schema"] != float64(lmdbstore.SchemaVersion) || v["go"] != runtime.Version() || v["snapshot_format"] != snapshot.FormatNewest.String() {
		t.Errorf("--json version = %v", v)
	}
	for _, k := range []string{"version", "commit", "commit_time", "modified"} {
		if _, ok := v[k]; !ok {
			t.Errorf("--json version lacks %q: %v", k, v)
		}
	}
	// The test binary's own build flags (the Makefile sets MDB_IDL_LOGN).
	if want, _ := lmdbstore.DirtyPagesMax(); v["lmdb_dirty_pages_max"] != float64(want) || !strings.HasPrefix(rows["lmdb_dirty_pages_max"], fmt.Sprintf("%d (", want)) {
		t.Errorf("lmdb_dirty_pages_max: --json %v, text\n%s\nwant %d", v["lmdb_dirty_pages_max"], text, want)
	}
	if got := ok(t, "--json", "--version"); got != raw {
		t.Errorf("--json --version = %q, want %q", got, raw)
	}
}
