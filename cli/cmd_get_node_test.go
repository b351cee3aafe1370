package cli

import "testing"

func TestGetNode(t *testing.T) {
	db := newStore(t)
	key := "file:cli/app.go"
	r1 := revOf(t, ok(t, "--db", db, "put-node", key, "--run", "r1", "--scope", "repo"))
	ok(t, "--db", db, "put-node", key, "--type", "source", "--payload", `{"lang":"go"}`, "--run", "r2")

	// Text output names every field.
	txt := ok(t, "--db", db, "get-node", key)
	for _, want := range []string{"key      file:cli/app.go", "id       " + nodeID(key), "type     source",
		"scope    -", "rev      " + revString(r1+1) + " (created at rev " + revString(r1) + ")",
		"payload  {\"lang\":\"go\"}", "run      r2", "task     -"} {
		if !containsLine(txt, want) {
			t.Errorf("text output lacks line %q:\n%s", want, txt)
		}
	}
	// Before the node existed: not found.
	wantFailure(t, memctl(t, "--db", db, "get-node", key, "--at-rev", revString(r1-1)), ExitNotFound)
}

func TestGetNodeMissing(t *testing.T) {
	db := newStore(t)
	wantFailure(t, memctl(t, "--db", db, "get-node", "file:nope"), ExitNotFound, "file:nope")
}
