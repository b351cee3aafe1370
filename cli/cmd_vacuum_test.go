package cli

import (
	"path/filepath"
	"testing"
)

func TestVacuum(t *testing.T) {
	db := newStore(t)
	revs := edgeGraph(t, db)
	ok(t, "--db", db, "del-edge", "file:a.go", "defines", "sym:a.G")
	ok(t, "--db", db, "put-kv", "repo", "decisions", "d1", `{"text":"use LMDB"}`)
	reads := [][]string{
		{"--json", "get-out", "file:a.go"},
		{"--json", "get-out", "file:a.go", "--at-rev", revString(revs[1])},
		{"--json", "diff-since", "0"},
		{"--json", "get-kv", "repo", "decisions", "d1"},
	}
	var before []string
	for _, r := range reads {
		before = append(before, ok(t, append([]string{"--db", db}, r...)...))
	}

	to := filepath.Join(t.TempDir(), "copy")
	v := jsonLines(t, ok(t, "--db", db, "--json", "vacuum", "--to", to))
	if len(v) != 1 || v[0]["to"] != to || v[0]["revision"] != n(revString(revs[len(revs)-1]+2)) || v[0]["copy_file_bytes"] == nil {
		t.Errorf("vacuum --json: %v", v)
	}
	for i, r := range reads {
		if got := ok(t, append([]string{"--db", to}, r...)...); got != before[i] {
			t.Errorf("%v on the copy:\n%s\nsource:\n%s", r, got, before[i])
		}
	}
	ok(t, "--db", to, "check")

	// Refusals: exit 2, one line, neither store touched.
	wantFailure(t, memctl(t, "--db", db, "vacuum", "--to", to), ExitUsage, "already exists")
	wantFailure(t, memctl(t, "--db", db, "vacuum", "--to", db), ExitUsage, "the store itself")
	wantFailure(t, memctl(t, "--db", db, "vacuum"), ExitUsage, "to")
	for i, r := range reads {
		if got := ok(t, append([]string{"--db", db}, r...)...); got != before[i] {
			t.Errorf("%v on the source after the refusals:\n%s\nwas:\n%s", r, got, before[i])
		}
		if got := ok(t, append([]string{"--db", to}, r...)...); got != before[i] {
			t.Errorf("%v on the copy after the refusals:\n%s\nwas:\n%s", r, got, before[i])
		}
	}
}
