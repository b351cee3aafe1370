package cli

import "testing"

func kv(scope, ns, key string, payload any, rev uint64, run, task string) map[string]any {
	return map[string]any{"scope": scope, "namespace": ns, "key": key, "payload": payload,
		"rev": revN(rev), "ts": "TS", "run_id": run, "task_id": task}
}

func TestKV(t *testing.T) {
	db := newStore(t)
	r1 := revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `{"rule":"wrap with %w"}`, "--run", "r1", "--task", "t1"))
	r2 := revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "style", `"gofmt"`, "--run", "r1", "--task", "t2"))
	r3 := revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `{"rule":"wrap with %w; no panics"}`, "--run", "r2"))
	r4 := revOf(t, ok(t, "--db", db, "put-kv", "repo", "constraints", "api", `-1`))

	diffJSON(t, ok(t, "--db", db, "--json", "get-kv", "repo", "decisions", "errors"), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w; no panics"}, r3, "r2", ""),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "get-kv", "repo", "decisions", "errors", "--at-rev", revString(r2)), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w"}, r1, "r1", "t1"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "decisions"), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w; no panics"}, r3, "r2", ""),
		kv("repo", "decisions", "style", "gofmt", r2, "r1", "t2"),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "constraints"), []map[string]any{
		kv("repo", "constraints", "api", n("-1"), r4, "", ""),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "nothing"), nil)

	r5 := revOf(t, ok(t, "--db", db, "del-kv", "repo", "decisions", "style"))
	wantFailure(t, memctl(t, "--db", db, "get-kv", "repo", "decisions", "style"), ExitNotFound)
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "decisions"), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w; no panics"}, r3, "r2", ""),
	})
	diffJSON(t, ok(t, "--db", db, "--json", "list-kv", "repo", "decisions", "--at-rev", revString(r5-1)), []map[string]any{
		kv("repo", "decisions", "errors", map[string]any{"rule": "wrap with %w; no panics"}, r3, "r2", ""),
		kv("repo", "decisions", "style", "gofmt", r2, "r1", "t2"),
	})

	want := "repo/decisions/errors  rev " + revString(r3) + "  run r2  task -  {\"rule\":\"wrap with %w; no panics\"}\n"
	if got := ok(t, "--db", db, "get-kv", "repo", "decisions", "errors"); got != want {
		t.Errorf("get-kv text %q, want %q", got, want)
	}
	wantFailure(t, memctl(t, "--db", db, "get-kv", "repo", "decisions", "nope"), ExitNotFound)
}
