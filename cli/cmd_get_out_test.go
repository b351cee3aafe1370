package cli

import "testing"

func TestGetOut(t *testing.T) {
	db := newStore(t)
	revs := edgeGraph(t, db)
	withPayload := edge("sym:a.F", "calls", "sym:a.G", revs[2], "0.25")
	withPayload["payload"] = map[string]any{"line": n("12")}

	// Ordered by relation name, then destination key.
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go"), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
		edge("file:a.go", "defines", "sym:a.G", revs[1], "1"),
		edge("file:a.go", "imports", "file:b.go", revs[3], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go", "--rel", "imports"), []map[string]any{
		edge("file:a.go", "imports", "file:b.go", revs[3], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "sym:a.F"), []map[string]any{withPayload})
	// Point in time: after the second write, file:a.go had two out-edges.
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go", "--at-rev", revString(revs[1])), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
		edge("file:a.go", "defines", "sym:a.G", revs[1], "1"),
	})
	// A node with no out-edges, or never written: empty output, success.
	for _, key := range []string{"file:b.go", "file:never"} {
		if got := ok(t, "--db", db, "get-out", key); got != "" {
			t.Errorf("get-out %s printed %q", key, got)
		}
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

func TestGetOutByTime(t *testing.T) {
	db := newStore(t)
	revs := edgeGraph(t, db)
	ops := jsonLinesRaw(t, ok(t, "--db", db, "--json", "diff-since", revString(revs[0])))
	second := ops[0]["ts"].(string) // commit time of revs[1]
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go", "--at", second), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
		edge("file:a.go", "defines", "sym:a.G", revs[1], "1"),
	})
	wantFailure(t, memctl(t, "--db", db, "get-out", "file:a.go", "--at", "2000-01-01T00:00:00Z"), ExitNotFound)
}
