package cli

import (
	"strings"
	"testing"
)

func TestStats(t *testing.T) {
	db := newStore(t)
	edgeGraph(t, db)
	ok(t, "--db", db, "put-node", "file:a.go")
	last := revOf(t, ok(t, "--db", db, "put-kv", "repo", "d", "k", "1"))
	st := jsonLines(t, ok(t, "--db", db, "--json", "stats"))
	if len(st) != 1 {
		t.Fatalf("stats printed %d lines", len(st))
	}
	for field, want := range map[string]any{"nodes": n("1"), "edges": n("5"), "kvs": n("1"), "revision": revN(last),
		"relations": n("10"), "horizon": n("0"), "warnings": []any{}} {
		if d := cmpDiff(want, st[0][field]); d != "" {
			t.Errorf("stats %s: %s", field, d)
		}
	}
	txt := ok(t, "--db", db, "stats")
	for _, line := range []string{"edges              5", "nodes              1", "revision           " + revString(last)} {
		if !containsLine(txt, line) {
			t.Errorf("stats text lacks %q:\n%s", line, txt)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}
