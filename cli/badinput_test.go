package cli

import (
	"strings"
	"testing"
)

// Every bad input fails with one stderr line and the documented exit code,
// and leaves the store exactly as it was.
func TestBadInputLeavesStoreUnchanged(t *testing.T) {
	db := newStore(t)
	edgeGraph(t, db)
	ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `"wrap"`)
	before := fingerprint(t, db)
	for _, tc := range []struct {
		args  []string
		stdin string
		code  int
		msg   string
	}{
		// malformed arguments
		{args: []string{"put-edge", "file:a.go", "defines"}, code: ExitUsage, msg: "needs 3 argument(s)"},
		{args: []string{"put-node"}, code: ExitUsage, msg: "needs 1 argument(s)"},
		{args: []string{"put-kv", "s", "n", "k"}, code: ExitUsage, msg: "needs 4 argument(s)"},
		{args: []string{"put-node", "a:1", "--nope"}, code: ExitUsage, msg: "flag provided but not defined"},
		{args: []string{"put-edge", "a:1", "calls", "a:2", "--weight", "heavy"}, code: ExitUsage, msg: "invalid value"},
		{args: []string{"put-edge", "a:1", "calls", "a:2", "--weight", "0"}, code: ExitUsage, msg: "--weight"},
		{args: []string{"diff-since", "-3"}, code: ExitUsage, msg: "neither a revision number nor an RFC 3339 time"},
		{args: []string{"frobnicate"}, code: ExitUsage, msg: "unknown command"},
		// unknown relations, with the suggestion
		{args: []string{"put-edge", "a:1", "cals", "a:2"}, code: ExitUsage, msg: `did you mean "calls"`},
		{args: []string{"del-edge", "file:a.go", "defined", "sym:a.F"}, code: ExitUsage, msg: `did you mean "defines"`},
		{args: []string{"get-in", "sym:a.F", "--rel", "test"}, code: ExitUsage, msg: `did you mean "tests"`},
		// invalid JSON payloads
		{args: []string{"put-node", "a:1", "--payload", "{oops}"}, code: ExitUsage, msg: "--payload is not valid JSON"},
		{args: []string{"put-edge", "a:1", "calls", "a:2", "--payload", ""}, code: ExitUsage, msg: "--payload is not valid JSON"},
		{args: []string{"put-kv", "repo", "decisions", "x", "not json"}, code: ExitUsage, msg: "PAYLOAD is not valid JSON"},
		// invalid UTF-8 and empty keys
		{args: []string{"put-node", "file:\xc3\x28"}, code: ExitUsage, msg: "not valid UTF-8"},
		{args: []string{"put-edge", "a:1", "calls", "b:\xff"}, code: ExitUsage, msg: "DST is not valid UTF-8"},
		{args: []string{"put-kv", "repo", "decisions\xfe", "x", "1"}, code: ExitUsage, msg: "NS is not valid UTF-8"},
		{args: []string{"put-node", "a:1", "--run", "r\xff"}, code: ExitUsage, msg: "--run is not valid UTF-8"},
		{args: []string{"put-node", "a:1", "--payload", "\"\xff\""}, code: ExitUsage, msg: "--payload is not valid UTF-8"},
		{args: []string{"put-node", ""}, code: ExitUsage},
		{args: []string{"put-edge", "", "calls", "a:2"}, code: ExitUsage},
		// views
		{args: []string{"get-out", "file:a.go", "--at-rev", "1", "--at", "2026-01-01T00:00:00Z"}, code: ExitUsage, msg: "mutually exclusive"},
		{args: []string{"get-out", "file:a.go", "--at-rev", "999999"}, code: ExitNotFound},
		{args: []string{"get-node", "file:a.go", "--at", "1999-01-01T00:00:00Z"}, code: ExitNotFound},
		// not found
		{args: []string{"get-node", "file:nope"}, code: ExitNotFound, msg: "file:nope"},
		{args: []string{"del-kv", "repo", "decisions", "nope"}, code: ExitNotFound},
		// batch: a bad line anywhere, nothing written
		{args: []string{"batch"}, stdin: `{"op":"put_node","key":"n:1"}` + "\n" + `{"op":"put_node","key":"n:2","payload":{]}`, code: ExitUsage, msg: "batch line 2"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runEnv(t, tc.stdin, nil, append([]string{"--db", db}, tc.args...)...)
			wantFailure(t, r, tc.code, tc.msg)
			if after := fingerprint(t, db); after != before {
				t.Errorf("failed command changed the store")
			}
		})
	}
}
