package mcpserver_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRelatedOptionParity: the options related gained for parity with the
// CLI's activate (per_container, temporal, lexical, kind) answer what the
// flags answer, and are refused where the flags are.
func TestRelatedOptionParity(t *testing.T) {
	db := newStore(t)
	var ops strings.Builder
	for f := 0; f < 4; f++ {
		fmt.Fprintf(&ops, `{"op":"put_node","key":"file:pkg/f%d.go","type":"file"}`+"\n", f)
		for k := 0; k < 4; k++ {
			fmt.Fprintf(&ops, `{"op":"put_node","key":"sym:pkg.F%d_%d","type":"symbol"}`+"\n", f, k)
			fmt.Fprintf(&ops, `{"op":"put_edge","src":"file:pkg/f%d.go","rel":"defines","dst":"sym:pkg.F%d_%d"}`+"\n", f, f, k)
			fmt.Fprintf(&ops, `{"op":"put_edge","src":"sym:pkg.F%d_%d","rel":"calls","dst":"sym:pkg.F%d_%d"}`+"\n", f, k, (f+1)%4, k)
		}
	}
	runCLI(t, ops.String(), "--db", db, "batch")
	s := startServer(t, db)
	snap := filepath.Join(t.TempDir(), "g.snap")
	runCLI(t, "", "--db", db, "export", "--out", snap)
	q := "sym:pkg.F0_0"
	related := func(args map[string]any) []map[string]any {
		args["queries"] = []string{q}
		args["top"] = 0
		b, _ := s.call("related", args)
		return records(t, b, "results")
	}
	activate := func(flags ...string) []map[string]any {
		return cliJSON(t, db, append([]string{"activate", "--snapshot", snap, q, "--top", "0"}, flags...)...)
	}
	base := related(map[string]any{})
	for _, tc := range []struct {
		name    string
		args    map[string]any
		flags   []string
		changes bool // the option changes this graph's answer
	}{
		{"per_container", map[string]any{"per_container": 1}, []string{"--per-container", "1"}, true},
		{"temporal", map[string]any{"temporal": 0.0}, []string{"--temporal", "0"}, false},
		{"lexical", map[string]any{"lexical": false, "files": true}, []string{"--lexical=false", "--files"}, true},
		{"kind", map[string]any{"kind": "symbol"}, []string{"--kind", "symbol"}, true},
	} {
		got := related(tc.args)
		diff(t, "related "+tc.name, got, activate(tc.flags...))
		if tc.changes && cmp.Equal(got, base) {
			t.Errorf("%s: same answer as without it: %v", tc.name, got)
		}
	}
	for _, k := range related(map[string]any{"kind": "symbol"}) {
		if !strings.HasPrefix(k["key"].(string), "sym:") {
			t.Errorf("kind symbol listed %v", k["key"])
		}
	}
	s.fails("related", map[string]any{"queries": []string{q}, "profile": "classic", "per_container": 2}, "per_container applies to profile related only")
	s.fails("related", map[string]any{"queries": []string{q}, "profile": "classic", "temporal": 1}, "temporal applies to profile related only")
	s.fails("related", map[string]any{"queries": []string{q}, "profile": "classic", "lexical": true}, "lexical applies to profile related only")
	s.fails("related", map[string]any{"queries": []string{q}, "files": true, "kind": "symbol"}, "files and kind symbol contradict each other")
}
