package cli

import (
	"encoding/json"
	"os"
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

// TestStatsCountsLikeCompact: stats and compact count adjacency chunks and
// entries over the same lists (out and in), so their figures agree.
func TestStatsCountsLikeCompact(t *testing.T) {
	db := initStore(t)
	ok(t, "--db", db, "put-edge", "a:1", "calls", "a:2")
	ok(t, "--db", db, "put-edge", "a:1", "calls", "a:3")
	st := jsonLines(t, ok(t, "--db", db, "--json", "stats"))[0]
	// Two edges from one node: out has one chunk of 2 entries, in has one
	// chunk of 1 entry for each destination.
	if st["adjacency_chunks"] != n("3") || st["adjacency_entries"] != n("4") {
		t.Errorf("stats: chunks %v, entries %v; want 3, 4", st["adjacency_chunks"], st["adjacency_entries"])
	}
	out := ok(t, "--db", db, "compact")
	if !strings.Contains(out, "adjacency chunks 3 -> 3, entries 4 -> 4") {
		t.Errorf("compact: %q", out)
	}
}

// TestStatsKeyspaces: stats lists every keyspace with entries that match
// what was written, and bytes that are whole pages within the file.
func TestStatsKeyspaces(t *testing.T) {
	db := newStore(t)
	edgeGraph(t, db)
	last := revOf(t, ok(t, "--db", db, "put-node", "file:a.go"))
	st := jsonLines(t, ok(t, "--db", db, "--json", "stats"))[0]
	ks, _ := st["keyspaces"].([]any)
	got := map[string]map[string]any{}
	var total float64
	for _, x := range ks {
		m := x.(map[string]any)
		got[m["name"].(string)] = m
		bytes, _ := m["bytes"].(json.Number).Float64()
		pages, _ := m["pages"].(json.Number).Float64()
		if bytes != pages*float64(os.Getpagesize()) {
			t.Errorf("keyspace %v: %v bytes is not %v whole pages", m["name"], bytes, pages)
		}
		total += bytes
	}
	for _, name := range []string{"meta", "n", "e", "out", "in", "kv", "hist", "ids", "rel", "relname", "log", "ts"} {
		if got[name] == nil {
			t.Errorf("stats lacks keyspace %q: %v", name, ks)
		}
	}
	// 5 distinct keys, 10 built-in relations, one log record and time per revision.
	for name, want := range map[string]string{"ids": "5", "rel": "10", "relname": "10", "log": revString(last), "ts": revString(last), "n": "1"} {
		if got[name] != nil {
			if d := cmpDiff(n(want), got[name]["entries"]); d != "" {
				t.Errorf("keyspace %s entries: %s", name, d)
			}
		}
	}
	file, _ := st["file_size"].(json.Number).Float64()
	if total <= 0 || total > file {
		t.Errorf("keyspaces total %v bytes, file %v", total, file)
	}
	if txt := ok(t, "--db", db, "stats"); !strings.Contains(txt, "space ids") {
		t.Errorf("stats text lacks the space lines:\n%s", txt)
	}
}
