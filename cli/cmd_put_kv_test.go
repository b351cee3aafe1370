package cli

import "testing"

// kv is a kv record as --json prints it (time normalised).
func kv(scope, ns, key string, payload any, rev uint64, run, task string) map[string]any {
	return map[string]any{"scope": scope, "namespace": ns, "key": key, "payload": payload,
		"rev": revN(rev), "ts": "TS", "run_id": run, "task_id": task,
		"valid_from": "", "valid_until": "", "status": currentStatus()}
}

// currentStatus is the --json status of a current item without conflicts.
func currentStatus() map[string]any {
	return map[string]any{"current": true, "expired": false, "pending": false, "superseded_by": []any{}, "newest": "", "contradicts": []any{}}
}

// kvHistory writes a few versions of policy memory.
type kvHistory struct{ errors1, style, errors2, api uint64 }

func writeKVHistory(t *testing.T, db string) kvHistory {
	t.Helper()
	var h kvHistory
	h.errors1 = revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `{"rule":"wrap with %w"}`, "--run", "r1", "--task", "t1"))
	h.style = revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "style", `"gofmt"`, "--run", "r1", "--task", "t2"))
	h.errors2 = revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `{"rule":"wrap with %w; no panics"}`, "--run", "r2"))
	h.api = revOf(t, ok(t, "--db", db, "put-kv", "repo", "constraints", "api", `-1`))
	return h
}

func TestPutKV(t *testing.T) {
	db := newStore(t)
	h := writeKVHistory(t, db)
	diffJSON(t, ok(t, "--db", db, "--json", "get-kv", "repo", "decisions", "errors"), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w; no panics"}, h.errors2, "r2", ""),
	})
	// A payload that looks like a flag is an argument.
	diffJSON(t, ok(t, "--db", db, "--json", "get-kv", "repo", "constraints", "api"), []map[string]any{
		kv("repo", "constraints", "api", n("-1"), h.api, "", ""),
	})
}
