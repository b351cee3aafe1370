package cli

import "testing"

func TestListKV(t *testing.T) {
	db := newStore(t)
	h := writeKVHistory(t, db)
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "decisions"), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w; no panics"}, h.errors2, "r2", ""),
		kv("repo", "decisions", "style", "gofmt", h.style, "r1", "t2"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "decisions", "--at-rev", revString(h.errors1)), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w"}, h.errors1, "r1", "t1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "constraints"), []map[string]any{
		kv("repo", "constraints", "api", n("-1"), h.api, "", ""),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "nothing"), nil)
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "other", "decisions"), nil)
}
