package cli

import "testing"

func TestDelKV(t *testing.T) {
	db := newStore(t)
	h := writeKVHistory(t, db)
	del := revOf(t, ok(t, "--db", db, "del-kv", "repo", "decisions", "style", "--run", "r3"))
	wantFailure(t, memctl(t, "--db", db, "get-kv", "repo", "decisions", "style"), ExitNotFound)
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "decisions"), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w; no panics"}, h.errors2, "r2", ""),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-kv", "repo", "decisions", "style", "--at-rev", revString(del-1)), []map[string]any{
		kv("repo", "decisions", "style", "gofmt", h.style, "r1", "t2"),
	})
	before := fingerprint(t, db)
	wantFailure(t, memctl(t, "--db", db, "del-kv", "repo", "decisions", "style"), ExitNotFound)
	if fingerprint(t, db) != before {
		t.Errorf("failed del-kv changed the store")
	}
}
