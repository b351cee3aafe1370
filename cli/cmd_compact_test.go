package cli

import "testing"

func TestCompact(t *testing.T) {
	db := newStore(t)
	revs := edgeGraph(t, db)
	ok(t, "--db", db, "del-edge", "file:a.go", "defines", "sym:a.G")
	ok(t, "--db", db, "put-edge", "file:a.go", "defines", "sym:a.F", "--weight", "2")

	before := ok(t, "--db", db, "--json", "get-out", "file:a.go")
	past := ok(t, "--db", db, "--json", "get-out", "file:a.go", "--at-rev", revString(revs[1]))
	c := jsonLines(t, ok(t, "--db", db, "--json", "compact"))
	if len(c) != 1 || c[0]["entries_before"] == nil || c[0]["hist_dropped"] == nil {
		t.Errorf("compact --json: %v", c)
	}
	if after := ok(t, "--db", db, "--json", "get-out", "file:a.go"); after != before {
		t.Errorf("compaction changed get-out:\n%s\nwas:\n%s", after, before)
	}
	// With full history kept, the past is still readable after compaction.
	if got := ok(t, "--db", db, "--json", "get-out", "file:a.go", "--at-rev", revString(revs[1])); got != past {
		t.Errorf("compaction changed a past view:\n%s\nwas:\n%s", got, past)
	}

	// Retention: keep the last revision only; older reads fail cleanly.
	ok(t, "--db", db, "compact", "--retain", "1")
	wantFailure(t, memctl(t, "--db", db, "get-out", "file:a.go", "--at-rev", revString(revs[1])), ExitUsage, "horizon")
	if after := ok(t, "--db", db, "--json", "get-out", "file:a.go"); after != before {
		t.Errorf("retention changed the latest view:\n%s\nwas:\n%s", after, before)
	}
	st := jsonLines(t, ok(t, "--db", db, "--json", "stats"))
	if st[0]["horizon"] == n("0") {
		t.Errorf("stats after --retain 1 shows no horizon: %v", st[0])
	}
}
