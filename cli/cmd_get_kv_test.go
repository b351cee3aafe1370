package cli

import "testing"

func TestGetKV(t *testing.T) {
	db := newStore(t)
	h := writeKVHistory(t, db)
	diffJSON(t, ok(t, "--db", db, "--json", "get-kv", "repo", "decisions", "errors", "--at-rev", revString(h.style)), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w"}, h.errors1, "r1", "t1"),
	})
	want := "repo/decisions/errors  rev " + revString(h.errors2) + "  run r2  task -  {\"rule\":\"wrap with %w; no panics\"}\n"
	if got := ok(t, "--db", db, "get-kv", "repo", "decisions", "errors"); got != want {
		t.Errorf("get-kv text %q, want %q", got, want)
	}
	wantFailure(t, memctl(t, "--db", db, "get-kv", "repo", "decisions", "nope"), ExitNotFound)
	wantFailure(t, memctl(t, "--db", db, "get-kv", "repo", "decisions", "style", "--at-rev", revString(h.errors1)), ExitNotFound)
}
