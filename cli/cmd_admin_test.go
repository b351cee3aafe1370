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
	for field, want := range map[string]any{"nodes": n("1"), "edges": n("5"), "kvs": n("1"), "revision": revN(last)} {
		if st[0][field] != want {
			t.Errorf("stats %s = %v, want %v", field, st[0][field], want)
		}
	}
	txt := ok(t, "--db", db, "stats")
	for _, line := range []string{"edges              5", "nodes              1"} {
		if !containsLine(txt, line) {
			t.Errorf("stats text lacks %q:\n%s", line, txt)
		}
	}
}

func TestCheckAndCompact(t *testing.T) {
	db := newStore(t)
	edgeGraph(t, db)
	ok(t, "--db", db, "del-edge", "file:a.go", "defines", "sym:a.G")
	out := ok(t, "--db", db, "check")
	if !strings.HasPrefix(lastLine(out), "ok: no problems") {
		t.Errorf("check on a sound store:\n%s", out)
	}
	// Edges to nodes never written are allowed and reported.
	if !strings.Contains(out, "missing node: sym:a.F") {
		t.Errorf("check does not report missing nodes:\n%s", out)
	}
	sum := jsonLines(t, ok(t, "--db", db, "--json", "check"))
	if last := sum[len(sum)-1]; last["kind"] != "summary" || last["ok"] != true {
		t.Errorf("check --json summary: %v", last)
	}

	before := ok(t, "--db", db, "--json", "get-out", "file:a.go")
	c := jsonLines(t, ok(t, "--db", db, "--json", "compact"))
	if len(c) != 1 || c[0]["entries_before"] == nil {
		t.Errorf("compact --json: %v", c)
	}
	if after := ok(t, "--db", db, "--json", "get-out", "file:a.go"); after != before {
		t.Errorf("compaction changed get-out:\n%s\nwas:\n%s", after, before)
	}
	// With full history kept, the past is still readable after compaction.
	ok(t, "--db", db, "get-out", "file:a.go", "--at-rev", "2")

	// Retention: keep the last revision only; older reads fail cleanly.
	ok(t, "--db", db, "compact", "--retain", "1")
	wantFailure(t, memctl(t, "--db", db, "get-out", "file:a.go", "--at-rev", "1"), ExitUsage)
	if after := ok(t, "--db", db, "--json", "get-out", "file:a.go"); after != before {
		t.Errorf("retention changed the latest view:\n%s\nwas:\n%s", after, before)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}
