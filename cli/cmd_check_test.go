package cli

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	db := newStore(t)
	edgeGraph(t, db)
	ok(t, "--db", db, "put-node", "file:a.go")
	out := ok(t, "--db", db, "check")
	if !strings.HasPrefix(lastLine(out), "ok: no problems") {
		t.Errorf("check on a sound store:\n%s", out)
	}
	// Edges to nodes never written are allowed and reported.
	if !strings.Contains(out, "missing node: sym:a.F") || strings.Contains(out, "missing node: file:a.go") {
		t.Errorf("check does not report exactly the missing nodes:\n%s", out)
	}
	lines := jsonLines(t, ok(t, "--db", db, "--json", "check"))
	last := lines[len(lines)-1]
	if d := cmpDiff(map[string]any{"kind": "summary", "ok": true, "problems": n("0"), "warnings": n("0"), "missing_nodes": n("4")}, last); d != "" {
		t.Errorf("check --json summary: %s", d)
	}
	for _, l := range lines[:len(lines)-1] {
		if l["kind"] != "missing_node" || l["key"] == nil {
			t.Errorf("unexpected finding %v", l)
		}
	}
}
