package cli

import (
	"strings"
	"testing"
)

func TestOrphans(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "dir:py", "--type", "directory")
	ok(t, "--db", db, "put-node", "file:py/a.py", "--type", "file", "--payload", `{"path":"py/a.py"}`)
	ok(t, "--db", db, "put-edge", "decision:d", "constrains", "file:py/a.py")
	if got := ok(t, "--db", db, "orphans"); !strings.Contains(got, "no orphans") {
		t.Fatalf("orphans on a live target:\n%s", got)
	}
	del := revOf(t, ok(t, "--db", db, "del-node", "file:py/a.py"))
	got := ok(t, "--db", db, "orphans")
	if !containsLine(got, "decision:d  constrains  file:py/a.py  deleted at rev "+revString(del)+"  nearest dir:py") {
		t.Fatalf("orphans text:\n%s", got)
	}
	js := jsonLines(t, ok(t, "--db", db, "--json", "orphans"))
	want := []any{map[string]any{"item": "decision:d", "via": "constrains", "target": "file:py/a.py",
		"deleted_rev": revN(del), "nearest": "dir:py"}}
	if d := cmpDiff(want, js[0]["orphans"]); d != "" {
		t.Fatal(d)
	}
}
