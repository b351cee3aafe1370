package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestSupersedeCLI: a decision superseded by a newer one leaves the default
// views, stays readable with --include-superseded and at an earlier
// revision, and get-node says by what and since when.
func TestSupersedeCLI(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "decision:errors-v1", "--payload", `{"rule":"return error strings"}`)
	ok(t, "--db", db, "put-edge", "decision:errors-v1", "decided_for", "file:a.go")
	ok(t, "--db", db, "put-node", "decision:errors-v2", "--payload", `{"rule":"wrap with %w"}`)
	ok(t, "--db", db, "put-edge", "decision:errors-v2", "decided_for", "file:a.go")
	before := revOf(t, ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `"strings"`))
	ok(t, "--db", db, "put-kv", "repo", "decisions", "errors-v2", `"wrap"`)
	sup := revOf(t, ok(t, "--db", db, "supersede", "decision:errors-v1", "decision:errors-v2"))
	ok(t, "--db", db, "supersede", "kv:repo/decisions/errors", "kv:repo/decisions/errors-v2")

	if got := ok(t, "--db", db, "get-in", "file:a.go"); strings.Contains(got, "errors-v1") || !strings.Contains(got, "errors-v2") {
		t.Errorf("get-in shows the superseded decision:\n%s", got)
	}
	if got := ok(t, "--db", db, "get-in", "file:a.go", "--include-superseded"); !strings.Contains(got, "decision:errors-v1") || !strings.Contains(got, "[superseded, newest decision:errors-v2]") {
		t.Errorf("get-in --include-superseded:\n%s", got)
	}
	if got := ok(t, "--db", db, "get-in", "file:a.go", "--at-rev", revString(before)); !strings.Contains(got, "errors-v1") {
		t.Errorf("get-in before the supersede hides v1:\n%s", got)
	}
	// supersedes edges themselves are always listed
	if got := ok(t, "--db", db, "get-out", "decision:errors-v2"); !regexp.MustCompile(`supersedes +decision:errors-v1 `).MatchString(got) {
		t.Errorf("get-out of the newer decision:\n%s", got)
	}
	got := jsonLines(t, ok(t, "--db", db, "--json", "get-node", "decision:errors-v1"))
	st := got[0]["status"].(map[string]any)
	by := st["superseded_by"].([]any)
	if st["current"] != false || st["newest"] != "decision:errors-v2" || len(by) != 1 ||
		by[0].(map[string]any)["key"] != "decision:errors-v2" || by[0].(map[string]any)["rev"] != revN(sup) {
		t.Errorf("get-node status of the old decision: %v", st)
	}
	text := ok(t, "--db", db, "get-node", "decision:errors-v1")
	if !regexp.MustCompile(`(?m)^status +superseded$`).MatchString(text) ||
		!regexp.MustCompile(fmt.Sprintf(`(?m)^superseded +by decision:errors-v2 at rev %d \(`, sup)).MatchString(text) ||
		!regexp.MustCompile(`(?m)^newest +decision:errors-v2$`).MatchString(text) {
		t.Errorf("get-node text:\n%s", text)
	}
	got = jsonLines(t, ok(t, "--db", db, "--json", "get-node", "decision:errors-v1", "--at-rev", revString(before)))
	if st := got[0]["status"].(map[string]any); st["current"] != true {
		t.Errorf("status before the supersede: %v", st)
	}
	if got := ok(t, "--db", db, "list-kv", "repo", "decisions"); strings.Contains(got, "decisions/errors ") || !strings.Contains(got, "errors-v2") {
		t.Errorf("list-kv shows the superseded entry:\n%s", got)
	}
	if got := ok(t, "--db", db, "list-kv", "repo", "decisions", "--include-superseded"); !strings.Contains(got, "repo/decisions/errors ") {
		t.Errorf("list-kv --include-superseded:\n%s", got)
	}
	wantFailure(t, memctl(t, "--db", db, "supersede", "decision:errors-v2", "decision:errors-v1"), ExitUsage, "already supersedes")
	wantFailure(t, memctl(t, "--db", db, "supersede", "decision:nope", "decision:errors-v1"), ExitNotFound, "decision:nope")
	wantFailure(t, memctl(t, "--db", db, "put-node", "kv:repo/decisions/x"), ExitUsage, "kv entries")
	if got := ok(t, "--db", db, "supersede", "decision:errors-v1", "decision:errors-v2"); got != "rev 0 (no change)\n" {
		t.Errorf("supersede again: %q", got)
	}
}

// TestContradictCLI: both items stay current and every read flags the
// conflict until one supersedes the other.
func TestContradictCLI(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "fact:port-8080")
	ok(t, "--db", db, "put-node", "fact:port-9090")
	ok(t, "--db", db, "put-edge", "fact:port-8080", "references", "file:main.go")
	ok(t, "--db", db, "put-edge", "fact:port-9090", "contradicts", "fact:port-8080")
	for _, k := range []string{"fact:port-8080", "fact:port-9090"} {
		got := jsonLines(t, ok(t, "--db", db, "--json", "get-node", k))
		st := got[0]["status"].(map[string]any)
		if st["current"] != true || len(st["contradicts"].([]any)) != 1 {
			t.Errorf("%s: status %v, want current with one contradiction", k, st)
		}
	}
	if got := ok(t, "--db", db, "get-in", "file:main.go"); !strings.Contains(got, "[current (conflict), contradicts fact:port-9090]") {
		t.Errorf("get-in does not flag the conflict:\n%s", got)
	}
	ok(t, "--db", db, "supersede", "fact:port-8080", "fact:port-9090")
	got := jsonLines(t, ok(t, "--db", db, "--json", "get-node", "fact:port-9090"))
	if st := got[0]["status"].(map[string]any); len(st["contradicts"].([]any)) != 0 {
		t.Errorf("conflict still flagged after the supersede: %v", st)
	}
	wantFailure(t, memctl(t, "--db", db, "put-edge", "fact:x", "contradicts", "fact:x"), ExitUsage, "contradict itself")
}

// TestValidityCLI: expired items leave the default views; --valid-at and
// --include-expired bring them back; validity round-trips through
// diff-since and batch.
func TestValidityCLI(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-kv", "repo", "constraints", "freeze", `"no deploys"`,
		"--valid-from", "2026-12-20T00:00:00Z", "--valid-until", "2027-01-05T00:00:00Z")
	ok(t, "--db", db, "put-kv", "repo", "constraints", "always", `"review"`)
	ok(t, "--db", db, "put-node", "team:old-owner", "--valid-until", "2020-01-01T00:00:00Z")
	ok(t, "--db", db, "put-edge", "team:old-owner", "constrains", "file:a.go")
	if got := ok(t, "--db", db, "list-kv", "repo", "constraints", "--valid-at", "2026-06-01T00:00:00Z"); strings.Contains(got, "freeze") || !strings.Contains(got, "always") {
		t.Errorf("list-kv outside the freeze:\n%s", got)
	}
	if got := ok(t, "--db", db, "list-kv", "repo", "constraints", "--valid-at", "2026-12-24T00:00:00Z"); !strings.Contains(got, "freeze") ||
		!strings.Contains(got, "valid from 2026-12-20T00:00:00.000000000Z until 2027-01-05T00:00:00.000000000Z") {
		t.Errorf("list-kv during the freeze:\n%s", got)
	}
	// Before the freeze it is not yet valid; after it, expired.
	if got := ok(t, "--db", db, "list-kv", "repo", "constraints", "--valid-at", "2026-06-01T00:00:00Z", "--include-expired"); !strings.Contains(got, "freeze") || !strings.Contains(got, "[not yet valid]") {
		t.Errorf("list-kv --include-expired before the freeze:\n%s", got)
	}
	if got := ok(t, "--db", db, "list-kv", "repo", "constraints", "--valid-at", "2027-02-01T00:00:00Z", "--include-expired"); !strings.Contains(got, "freeze") || !strings.Contains(got, "[expired]") {
		t.Errorf("list-kv --include-expired after the freeze:\n%s", got)
	}
	for _, c := range []struct {
		at               string
		expired, pending bool
	}{{"2026-06-01T00:00:00Z", true, true}, {"2026-12-24T00:00:00Z", false, false}, {"2027-02-01T00:00:00Z", true, false}} {
		st := jsonLines(t, ok(t, "--db", db, "--json", "get-kv", "repo", "constraints", "freeze", "--valid-at", c.at))[0]["status"].(map[string]any)
		if st["expired"] != c.expired || st["pending"] != c.pending || st["current"] != !c.expired {
			t.Errorf("get-kv freeze --valid-at %s: status %v, want expired %v, pending %v", c.at, st, c.expired, c.pending)
		}
	}
	if got := ok(t, "--db", db, "get-in", "file:a.go"); strings.Contains(got, "old-owner") {
		t.Errorf("get-in shows an expired source:\n%s", got)
	}
	if got := ok(t, "--db", db, "get-in", "file:a.go", "--valid-at", "2019-06-01T00:00:00Z"); !strings.Contains(got, "old-owner") {
		t.Errorf("get-in at a valid time of the source:\n%s", got)
	}
	got := jsonLines(t, ok(t, "--db", db, "--json", "get-node", "team:old-owner"))
	if got[0]["valid_until"] != "2020-01-01T00:00:00Z" || got[0]["valid_from"] != "" || got[0]["status"].(map[string]any)["expired"] != true {
		t.Errorf("get-node of an expired node: %v", got[0])
	}
	wantFailure(t, memctl(t, "--db", db, "put-node", "x:1", "--valid-from", "2026-01-02T00:00:00Z", "--valid-until", "2026-01-01T00:00:00Z"), ExitUsage, "after --valid-from")
	wantFailure(t, memctl(t, "--db", db, "put-node", "x:1", "--valid-from", "yesterday"), ExitUsage, "--valid-from")
	wantFailure(t, memctl(t, "--db", db, "list-kv", "repo", "constraints", "--valid-at", "soon"), ExitUsage, "--valid-at")
	diff := ok(t, "--db", db, "--json", "diff-since", "0")
	if !strings.Contains(diff, `"valid_from":"2026-12-20T00:00:00Z","valid_until":"2027-01-05T00:00:00Z"`) {
		t.Errorf("diff-since does not carry the valid time:\n%s", diff)
	}
	copyDB := initStore(t)
	runEnvOK(t, diff, "--db", copyDB, "batch")
	if a, b := fingerprintNoTimes(t, db), fingerprintNoTimes(t, copyDB); a != b {
		t.Errorf("replayed history differs:\n%s\n%s", a, b)
	}
}

// TestNoChangeCLI: re-asserting what the store holds commits nothing, for
// every write verb, and a batch with one change is one revision.
func TestNoChangeCLI(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "n:a", "--payload", `{"b":1,"a":2}`, "--valid-from", "2026-01-01T00:00:00Z")
	ok(t, "--db", db, "put-edge", "n:a", "calls", "n:b", "--weight", "2", "--payload", `[1]`)
	ok(t, "--db", db, "put-kv", "s", "ns", "k", `{"x":null}`)
	for _, args := range [][]string{
		{"put-node", "n:a", "--payload", `{ "a": 2, "b": 1 }`, "--valid-from", "2026-01-01T00:00:00Z", "--run", "other"},
		{"put-edge", "n:a", "calls", "n:b", "--weight", "2", "--payload", ` [ 1 ] `, "--task", "t"},
		{"put-kv", "s", "ns", "k", `{"x": null}`, "--run", "r9"},
	} {
		if got := ok(t, append([]string{"--db", db}, args...)...); got != "rev 0 (no change)\n" {
			t.Errorf("%v: %q, want no change", args, got)
		}
		if got := ok(t, append([]string{"--db", db, "--json"}, args...)...); got != "{\"rev\":0}\n" {
			t.Errorf("%v --json: %q", args, got)
		}
	}
	batch := `{"op":"put_node","key":"n:a","payload":{"a":2,"b":1},"valid_from":"2026-01-01T00:00:00Z"}
{"op":"put_kv","scope":"s","namespace":"ns","key":"k","payload":{"x":null}}
{"op":"put_node","key":"n:c"}
`
	if got := runEnvOK(t, batch, "--db", db, "batch"); got != "rev 4 (3 operations)\n" {
		t.Errorf("mixed batch: %q", got)
	}
	if got := ok(t, "--db", db, "diff-since", "3"); strings.Count(got, "\n") != 1 || !strings.Contains(got, "n:c") {
		t.Errorf("the mixed batch logged:\n%s", got)
	}
	if got := runEnvOK(t, batch, "--db", db, "batch"); got != "rev 0 (no change)\n" {
		t.Errorf("batch again: %q", got)
	}
}

// runEnvOK runs memctl with stdin and fails unless it succeeds.
func runEnvOK(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := runEnv(t, stdin, nil, args...)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("memctl %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return r.Stdout
}

// fingerprintNoTimes is the history as diff-since --json prints it without
// revisions and commit times (a replay commits in other revisions).
func fingerprintNoTimes(t *testing.T, db string) string {
	t.Helper()
	var lines []string
	for _, obj := range jsonLines(t, fingerprint(t, db)) {
		delete(obj, "ts")
		delete(obj, "rev")
		b, _ := json.Marshal(obj)
		lines = append(lines, string(b))
	}
	return strings.Join(lines, "\n")
}
