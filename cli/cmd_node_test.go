package cli

import (
	"testing"
)

func TestPutGetNode(t *testing.T) {
	db := newStore(t)
	key := "file:cli/app.go"
	r1 := revOf(t, ok(t, "--db", db, "put-node", key, "--payload", `{"lang": "go",
		"lines": 120}`, "--run", "r1", "--task", "t1", "--scope", "repo"))
	r2 := revOf(t, ok(t, "--db", db, "put-node", key, "--type", "source", "--payload", `{"lang":"go","lines":140}`, "--run", "r2"))
	if r2 != r1+1 {
		t.Fatalf("second write committed rev %d, want %d", r2, r1+1)
	}

	diffJSON(t, ok(t, "--db", db, "--json", "get-node", key), []map[string]any{{
		"key": key, "id": nodeID(key), "type": "source", "payload": map[string]any{"lang": "go", "lines": n("140")},
		"scope": "", "rev": revN(r2), "created_ts": "TS", "updated_ts": "TS", "run_id": "r2", "task_id": "",
	}})
	// The first version stays readable.
	diffJSON(t, ok(t, "--db", db, "--json", "get-node", key, "--at-rev", revString(r1)), []map[string]any{{
		"key": key, "id": nodeID(key), "type": "file", "payload": map[string]any{"lang": "go", "lines": n("120")},
		"scope": "repo", "rev": revN(r1), "created_ts": "TS", "updated_ts": "TS", "run_id": "r1", "task_id": "t1",
	}})
	// Before the node existed: not found.
	wantFailure(t, memctl(t, "--db", db, "get-node", key, "--at-rev", revString(r1-1)), ExitNotFound)

	// Text output names every field.
	txt := ok(t, "--db", db, "get-node", key)
	for _, want := range []string{"key      file:cli/app.go", "type     source", "payload  {\"lang\":\"go\",\"lines\":140}", "run      r2", "task     -"} {
		if !containsLine(txt, want) {
			t.Errorf("text output lacks line %q:\n%s", want, txt)
		}
	}
}

func TestPutNodeWithoutPayload(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "decision:error-handling")
	got := jsonLines(t, ok(t, "--db", db, "--json", "get-node", "decision:error-handling"))
	if len(got) != 1 || got[0]["payload"] != nil || got[0]["type"] != "decision" {
		t.Errorf("node without payload: %v, want payload null and type decision", got)
	}
}

func TestDelNode(t *testing.T) {
	db := newStore(t)
	put := revOf(t, ok(t, "--db", db, "put-node", "sym:a.F"))
	del := revOf(t, ok(t, "--db", db, "del-node", "sym:a.F", "--task", "t9"))
	if del <= put {
		t.Fatalf("del-node rev %d not after put rev %d", del, put)
	}
	wantFailure(t, memctl(t, "--db", db, "get-node", "sym:a.F"), ExitNotFound)
	ok(t, "--db", db, "get-node", "sym:a.F", "--at-rev", revString(put))
	wantFailure(t, memctl(t, "--db", db, "del-node", "sym:nope"), ExitNotFound)
}

func TestGetNodeMissing(t *testing.T) {
	db := newStore(t)
	wantFailure(t, memctl(t, "--db", db, "get-node", "file:nope"), ExitNotFound, "file:nope")
}
