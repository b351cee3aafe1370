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

func edge(src, rel, dst string, rev uint64, weight string) map[string]any {
	return map[string]any{"src": src, "rel": rel, "dst": dst, "rev": revN(rev), "ts": "TS", "weight": n(weight)}
}

func TestGetOutGetIn(t *testing.T) {
	db := newStore(t)
	revs := edgeGraph(t, db)
	withPayload := edge("sym:a.F", "calls", "sym:a.G", revs[2], "0.25")
	withPayload["payload"] = map[string]any{"line": n("12")}

	// Ordered by relation name, then peer key.
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go"), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
		edge("file:a.go", "defines", "sym:a.G", revs[1], "1"),
		edge("file:a.go", "imports", "file:b.go", revs[3], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go", "--rel", "imports"), []map[string]any{
		edge("file:a.go", "imports", "file:b.go", revs[3], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "sym:a.F"), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
		edge("test:a_test.go", "tests", "sym:a.F", revs[4], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "sym:a.G"), []map[string]any{
		withPayload,
		edge("file:a.go", "defines", "sym:a.G", revs[1], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "sym:a.F"), []map[string]any{withPayload})
	// Point in time: after the second write, file:a.go had two out-edges.
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go", "--at-rev", revString(revs[1])), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
		edge("file:a.go", "defines", "sym:a.G", revs[1], "1"),
	})
	// A node with no edges: empty output, success.
	if got := ok(t, "--db", db, "get-out", "file:b.go"); got != "" {
		t.Errorf("get-out of a leaf printed %q", got)
	}

	// Text: aligned columns.
	want := "" +
		"file:a.go  defines  sym:a.F    weight 1  rev " + revString(revs[0]) + "\n" +
		"file:a.go  defines  sym:a.G    weight 1  rev " + revString(revs[1]) + "\n" +
		"file:a.go  imports  file:b.go  weight 1  rev " + revString(revs[3]) + "\n"
	if got := ok(t, "--db", db, "get-out", "file:a.go"); got != want {
		t.Errorf("get-out text:\n%s\nwant:\n%s", got, want)
	}
}

func TestPutEdgeUpdateAndDelete(t *testing.T) {
	db := newStore(t)
	r1 := revOf(t, ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2"))
	r2 := revOf(t, ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2", "--weight", "3"))
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "a:1"), []map[string]any{edge("a:1", "calls", "a:2", r2, "3")})
	r3 := revOf(t, ok(t, "--db", db, "del-edge", "a:1", "calls", "a:2"))
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "a:1"), nil)
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "a:2"), nil)
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "a:1", "--at-rev", revString(r1)), []map[string]any{edge("a:1", "calls", "a:2", r1, "1")})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "a:2", "--at-rev", revString(r3-1)), []map[string]any{edge("a:1", "calls", "a:2", r2, "3")})
	// Deleting what is not there is "not found" and writes nothing.
	before := fingerprint(t, db)
	wantFailure(t, memctl(t, "--db", db, "del-edge", "a:1", "calls", "a:2"), ExitNotFound)
	if after := fingerprint(t, db); after != before {
		t.Errorf("failed del-edge changed the store")
	}
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
