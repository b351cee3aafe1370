package cli

import "testing"

func TestPutNode(t *testing.T) {
	db := newStore(t)
	key := "file:cli/app.go"
	r1 := revOf(t, ok(t, "--db", db, "put-node", key, "--payload", `{"lang": "go",
		"lines": 120}`, "--run", "r1", "--task", "t1", "--scope", "repo"))
	r2 := revOf(t, ok(t, "--db", db, "put-node", key, "--type", "source", "--payload", `{"lang":"go","lines":140}`, "--run", "r2"))
	if r2 != r1+1 {
		t.Fatalf("second write committed rev %d, want %d", r2, r1+1)
	}
	// Latest version; the payload is stored canonical (compact).
	diffJSON(t, ok(t, "--db", db, "--json", "get-node", key), []map[string]any{{
		"key": key, "id": nodeID(key), "type": "source", "payload": map[string]any{"lang": "go", "lines": n("140")},
		"scope": "", "rev": revN(r2), "created_ts": "TS", "updated_ts": "TS", "run_id": "r2", "task_id": "",
		"valid_from": "", "valid_until": "", "status": currentStatus(),
	}})
	// The first version stays readable.
	diffJSON(t, ok(t, "--db", db, "--json", "get-node", key, "--at-rev", revString(r1)), []map[string]any{{
		"key": key, "id": nodeID(key), "type": "file", "payload": map[string]any{"lang": "go", "lines": n("120")},
		"scope": "repo", "rev": revN(r1), "created_ts": "TS", "updated_ts": "TS", "run_id": "r1", "task_id": "t1",
		"valid_from": "", "valid_until": "", "status": currentStatus(),
	}})
}

func TestPutNodeWithoutPayload(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "decision:error-handling")
	got := jsonLines(t, ok(t, "--db", db, "--json", "get-node", "decision:error-handling"))
	if len(got) != 1 || got[0]["payload"] != nil || got[0]["type"] != "decision" {
		t.Errorf("node without payload: %v, want payload null and type decision", got)
	}
}

func TestPutNodeJSONCommit(t *testing.T) {
	db := newStore(t)
	got := jsonLines(t, ok(t, "--db", db, "--json", "put-node", "a:1"))
	if len(got) != 1 || len(got[0]) != 2 || got[0]["ts"] != "TS" || got[0]["rev"] == nil {
		t.Errorf("put-node --json printed %v, want {rev, ts}", got)
	}
}
