package cli

import "testing"

func TestGetIn(t *testing.T) {
	db := newStore(t)
	revs := edgeGraph(t, db)
	withPayload := edge("sym:a.F", "calls", "sym:a.G", revs[2], "0.25")
	withPayload["payload"] = map[string]any{"line": n("12")}

	// Ordered by relation name, then source key.
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "sym:a.F"), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
		edge("test:a_test.go", "tests", "sym:a.F", revs[4], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "sym:a.G"), []map[string]any{
		withPayload,
		edge("file:a.go", "defines", "sym:a.G", revs[1], "1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "sym:a.G", "--rel", "calls"), []map[string]any{withPayload})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "sym:a.F", "--at-rev", revString(revs[3])), []map[string]any{
		edge("file:a.go", "defines", "sym:a.F", revs[0], "1"),
	})
	want := "sym:a.F    calls    sym:a.G  weight 0.25  rev " + revString(revs[2]) + "  {\"line\":12}\n" +
		"file:a.go  defines  sym:a.G  weight 1     rev " + revString(revs[1]) + "\n"
	if got := ok(t, "--db", db, "get-in", "sym:a.G"); got != want {
		t.Errorf("get-in text:\n%s\nwant:\n%s", got, want)
	}
}
