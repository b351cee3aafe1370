package cli

import (
	"strings"
	"testing"
)

// edgeGraph writes a small graph and returns the revision of each write.
func edgeGraph(t *testing.T, db string) (revs []uint64) {
	t.Helper()
	for _, args := range [][]string{
		{"put-edge", "file:a.go", "defines", "sym:a.F", "--run", "r1"},
		{"put-edge", "file:a.go", "defines", "sym:a.G", "--run", "r1"},
		{"put-edge", "sym:a.F", "calls", "sym:a.G", "--weight", "0.25", "--payload", `{"line": 12}`, "--run", "r1"},
		{"put-edge", "file:a.go", "imports", "file:b.go", "--run", "r2"},
		{"put-edge", "test:a_test.go", "tests", "sym:a.F", "--run", "r2"},
	} {
		revs = append(revs, revOf(t, ok(t, append([]string{"--db", db}, args...)...)))
	}
	return revs
}

// edge is an edge record as --json prints it (time normalised).
func edge(src, rel, dst string, rev uint64, weight string) map[string]any {
	return map[string]any{"src": src, "rel": rel, "dst": dst, "rev": revN(rev), "ts": "TS", "weight": n(weight)}
}

func TestPutEdge(t *testing.T) {
	db := newStore(t)
	r1 := revOf(t, ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2"))
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "a:1"), []map[string]any{edge("a:1", "calls", "a:2", r1, "1")})
	// A second put is a new version of the same edge.
	r2 := revOf(t, ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2", "--weight", "0.3", "--payload", `{"why":"x"}`))
	want := edge("a:1", "calls", "a:2", r2, "0.3")
	want["payload"] = map[string]any{"why": "x"}
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "a:1"), []map[string]any{want})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "a:2", "--at-rev", revString(r1)), []map[string]any{edge("a:1", "calls", "a:2", r1, "1")})
	// Flags after the arguments, global flags after the command.
	r3 := revOf(t, ok(t, "put-edge", "a:1", "calls", "a:3", "--weight", "2", "--db", db))
	diffJSON(t, ok(t, "get-out", "a:1", "--rel", "calls", "--json", "--db", db), []map[string]any{want, edge("a:1", "calls", "a:3", r3, "2")})
}

func TestUnknownRelation(t *testing.T) {
	db := newStore(t)
	before := fingerprint(t, db)
	r := memctl(t, "--db", db, "put-edge", "a:1", "cals", "a:2")
	wantFailure(t, r, ExitUsage, `unknown relation "cals"`, `"calls"`)
	wantFailure(t, memctl(t, "--db", db, "get-out", "a:1", "--rel", "defnes"), ExitUsage, `"defines"`)
	if after := fingerprint(t, db); after != before {
		t.Errorf("failed put-edge changed the store")
	}
	if !strings.Contains(r.Stderr, "did you mean") {
		t.Errorf("no suggestion in %q", r.Stderr)
	}
}
