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
	// A node with no out-edges: empty output, success.
	if got := ok(t, "--db", db, "get-out", "file:b.go"); got != "" {
		t.Errorf("get-out file:b.go printed %q", got)
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

// Issue #27.4: a key with no node and no edges is not found (exit 1) with
// the nearest key, not an empty success; a node without edges, or a key
// that is only an edge endpoint, is an empty success.
func TestGetOutUnknownKey(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "file:flag.go")
	ok(t, "--db", db, "put-node", "sym:lonely")
	ok(t, "--db", db, "put-edge", "file:flag.go", "imports", "file:dep.go")
	for _, verb := range []string{"get-out", "get-in"} {
		wantFailure(t, memctl(t, "--db", db, verb, "flag.go"), ExitNotFound,
			`node "flag.go": no such node and no edges`, `(did you mean "file:flag.go"?)`)
		wantFailure(t, memctl(t, "--db", db, verb, "sym:lonley"), ExitNotFound, `(did you mean "sym:lonely"?)`)
		wantFailure(t, memctl(t, "--db", db, verb, "zzzzzzzz"), ExitNotFound, `node "zzzzzzzz": no such node and no edges`)
		// Before file:dep.go was named by an edge, it was nothing.
		wantFailure(t, memctl(t, "--db", db, verb, "file:dep.go", "--at-rev", "2"), ExitNotFound, `node "file:dep.go"`)
		// Known: a node with no edges, an endpoint-only key, a node
		// whose edges are of another relation.
		for _, args := range [][]string{{"sym:lonely"}, {"file:dep.go"}, {"file:flag.go"}, {"file:flag.go", "--rel", "calls"}} {
			r := memctl(t, append([]string{"--db", db, verb}, args...)...)
			if r.Code != 0 || r.Stderr != "" {
				t.Errorf("%s %v: exit %d, stderr %q", verb, args, r.Code, r.Stderr)
			}
		}
	}
	// get-node names the nearest key too.
	wantFailure(t, memctl(t, "--db", db, "get-node", "flag.go"), ExitNotFound, `node "flag.go"`, `(did you mean "file:flag.go"?)`)
	// A deleted node with no edges: gone at the latest view, there before.
	ok(t, "--db", db, "del-node", "sym:lonely")
	wantFailure(t, memctl(t, "--db", db, "get-out", "sym:lonely"), ExitNotFound, `node "sym:lonely"`)
	ok(t, "--db", db, "get-out", "sym:lonely", "--at-rev", "2")
	// --json: the error is one JSON object.
	r := memctl(t, "--db", db, "--json", "get-out", "flag.go")
	if want := `{"error":"not found: node \"flag.go\": no such node and no edges (did you mean \"file:flag.go\"?)","code":1}` + "\n"; r.Stderr != want || r.Code != 1 {
		t.Errorf("--json get-out flag.go: exit %d, stderr %q, want %q", r.Code, r.Stderr, want)
	}
}
