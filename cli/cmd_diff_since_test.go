package cli

import (
	"strings"
	"testing"
	"time"
)

func TestDiffSince(t *testing.T) {
	db := newStore(t)
	r1 := revOf(t, ok(t, "--db", db, "put-node", "file:a.go", "--payload", `{"n":1}`, "--run", "r1", "--task", "t1", "--scope", "repo"))
	r2 := revOf(t, ok(t, "--db", db, "put-edge", "file:a.go", "defines", "sym:a.F", "--run", "r1", "--task", "t2"))
	r3 := revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `"wrap"`, "--run", "r2", "--task", "t1"))
	r4 := revOf(t, ok(t, "--db", db, "del-edge", "file:a.go", "defines", "sym:a.F", "--run", "r2", "--task", "t2"))
	r5 := revOf(t, ok(t, "--db", db, "del-kv", "repo", "decisions", "errors", "--run", "r2", "--task", "t3"))
	r6 := revOf(t, ok(t, "--db", db, "del-node", "file:a.go", "--run", "r3"))
	r7 := revOf(t, ok(t, "--db", db, "put-edge", "sym:a.F", "calls", "sym:a.G", "--weight", "2", "--payload", `{"line":3}`, "--run", "r3"))

	all := []map[string]any{
		{"rev": revN(r1), "ts": "TS", "op": "put_node", "key": "file:a.go", "type": "file", "payload": map[string]any{"n": n("1")}, "scope": "repo", "run_id": "r1", "task_id": "t1"},
		{"rev": revN(r2), "ts": "TS", "op": "put_edge", "src": "file:a.go", "rel": "defines", "dst": "sym:a.F", "weight": n("1"), "scope": "", "run_id": "r1", "task_id": "t2"},
		{"rev": revN(r3), "ts": "TS", "op": "put_kv", "scope": "repo", "namespace": "decisions", "key": "errors", "payload": "wrap", "run_id": "r2", "task_id": "t1"},
		{"rev": revN(r4), "ts": "TS", "op": "del_edge", "src": "file:a.go", "rel": "defines", "dst": "sym:a.F", "scope": "", "run_id": "r2", "task_id": "t2"},
		{"rev": revN(r5), "ts": "TS", "op": "del_kv", "scope": "repo", "namespace": "decisions", "key": "errors", "run_id": "r2", "task_id": "t3"},
		{"rev": revN(r6), "ts": "TS", "op": "del_node", "key": "file:a.go", "scope": "", "run_id": "r3", "task_id": ""},
		{"rev": revN(r7), "ts": "TS", "op": "put_edge", "src": "sym:a.F", "rel": "calls", "dst": "sym:a.G", "weight": n("2"), "payload": map[string]any{"line": n("3")}, "scope": "", "run_id": "r3", "task_id": ""},
	}
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", revString(r1-1)), all)
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", revString(r3)), all[3:])
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", revString(r7)), nil)
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", "0", "--run", "r2"), all[2:5])
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", "0", "--task", "t2"), []map[string]any{all[1], all[3]})
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", "0", "--run", "r2", "--task", "t1"), all[2:3])
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", "0", "--run", "nobody"), nil)

	// By time: the commit time of r3 selects everything after r3.
	ops := jsonLinesRaw(t, ok(t, "--db", db, "--json", "diff-since", revString(r2)))
	t3, err := time.Parse(time.RFC3339Nano, ops[0]["ts"].(string))
	if err != nil {
		t.Fatal(err)
	}
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", t3.Format(time.RFC3339Nano)), all[3:])
	diffJSON(t, ok(t, "--db", db, "--json", "diff-since", t3.Add(-time.Nanosecond).Format(time.RFC3339Nano)), all[2:])

	// Text: one row per operation.
	txt := ok(t, "--db", db, "diff-since", "0", "--run", "r3")
	lines := strings.Split(strings.TrimSuffix(txt, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "del_node") || !strings.Contains(lines[1], `sym:a.F calls sym:a.G  weight=2 payload={"line":3} run=r3`) {
		t.Errorf("diff-since text:\n%s", txt)
	}
}

// jsonLinesRaw parses --json output without normalising times.
func jsonLinesRaw(t *testing.T, s string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if line == "" {
			continue
		}
		var obj map[string]any
		if err := jsonUnmarshal(line, &obj); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		objs = append(objs, obj)
	}
	return objs
}
