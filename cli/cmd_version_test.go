package cli

import (
	"encoding/json"
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
	for _, want := range []string{"version ", "commit ", "go ", runtime.Version(), "schema ", "snapshot_format  " + snapshot.FormatNewest.String()} {
		if !strings.Contains(text, want) {
			t.Errorf("version output lacks %q:\n%s", want, text)
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
	if got := ok(t, "--json", "--version"); got != raw {
		t.Errorf("--json --version = %q, want %q", got, raw)
	}
}
