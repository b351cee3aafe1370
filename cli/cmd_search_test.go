package cli

import (
	"path/filepath"
	"testing"
)

func TestSearch(t *testing.T) {
	db := initStore(t)
	ok(t, "--db", db, "put-node", "decision:http-retries", "--type", "decision", "--payload", `{"text":"Retry idempotent HTTP requests at most three times with exponential backoff"}`)
	ok(t, "--db", db, "put-node", "decision:old-retries", "--type", "decision", "--payload", `{"text":"Retry forever"}`)
	ok(t, "--db", db, "put-edge", "decision:http-retries", "supersedes", "decision:old-retries")
	ok(t, "--db", db, "put-kv", "repo", "policy", "timeouts", `{"rule":"client timeouts are 30s; never retry a POST"}`)
	ok(t, "--db", db, "put-node", "note:lunch", "--type", "note", "--payload", `{"observations":[{"text":"the team likes noodles"}]}`)

	// The question's words are in no key: the text finds the decision
	// and the kv entry; the superseded decision is hidden.
	want := "0.0163934  decision  decision:http-retries\n0.016129   kv        kv:repo/policy/timeouts\n"
	if got := ok(t, "--db", db, "search", "What did we decide about retries?"); got != want {
		t.Errorf("search text:\n%s\nwant:\n%s", got, want)
	}
	// --all shows it, marked; key matching fuses (both decisions contain
	// "retries" in their keys).
	diffJSON(t, ok(t, "--db", db, "--json", "search", "--all", "retries"), []map[string]any{
		{"key": "decision:old-retries", "type": "decision", "score": n("0.03278688524590164"), "text_rank": n("1"), "key_rank": n("1"), "match": "substring", "superseded": true},
		{"key": "decision:http-retries", "type": "decision", "score": n("0.03225806451612903"), "text_rank": n("2"), "key_rank": n("2"), "match": "substring"},
		{"key": "kv:repo/policy/timeouts", "type": "kv", "score": n("0.015873015873015872"), "text_rank": n("3")},
	})
	// Observations are text; a type filter; --top.
	if got := ok(t, "--db", db, "search", "noodles"); got != "0.0163934  note  note:lunch\n" {
		t.Errorf("observation search: %q", got)
	}
	if got := ok(t, "--db", db, "search", "--type", "kv", "retry"); got != "0.0163934  kv  kv:repo/policy/timeouts\n" {
		t.Errorf("kv only: %q", got)
	}
	if got := ok(t, "--db", db, "search", "--top", "1", "retry"); got != "0.0163934  decision  decision:http-retries\n" {
		t.Errorf("top 1: %q", got)
	}
	// A snapshot file answers the same.
	snap := filepath.Join(t.TempDir(), "s.snap")
	ok(t, "--db", db, "export", "--out", snap)
	if got := ok(t, "search", "--snapshot", snap, "What did we decide about retries?"); got != want {
		t.Errorf("search of the export:\n%s", got)
	}
	wantFailure(t, memctl(t, "--db", db, "search", "zzz"), ExitNotFound)
	wantFailure(t, memctl(t, "--db", db, "search"), ExitUsage)
	wantFailure(t, memctl(t, "--db", db, "search", "--top", "-1", "x"), ExitUsage)
}
