package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

func TestClassifyStoreError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{lmdbstore.ErrNotFound, ExitNotFound},
		{fmt.Errorf("node %q: %w", "x", lmdbstore.ErrNotFound), ExitNotFound},
		{lmdbstore.ErrInvalid, ExitUsage},
		{&lmdbstore.UnknownRelationError{Name: "cals", Suggestion: "calls"}, ExitUsage},
		{lmdbstore.ErrBeforeHorizon, ExitUsage},
		{lmdbstore.ErrNotExist, ExitUsage},
		{lmdbstore.ErrExists, ExitUsage},
		{lmdbstore.ErrReadOnly, ExitUsage},
		{&lmdbstore.CorruptionError{Keyspace: "out", Key: []byte{1}, Msg: "bad varint"}, ExitCorrupt},
		{lmdbstore.ErrNewerSchema, ExitCorrupt},
		{&lmdbstore.CollisionError{ID: 1, Key: "a", Existing: "b"}, ExitConflict},
		{lmdbstore.ErrNotEmpty, ExitConflict},
		{lmdbstore.ErrMapFull, ExitUnexpected},
		{errors.New("disk on fire"), ExitUnexpected},
		{usageErr("bad"), ExitUsage},
		{fmt.Errorf("batch line 3: %w", usageErr("bad weight")), ExitUsage},
	} {
		if got := exitCode(tc.err); got != tc.code {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
}

// panicWriter panics on every write: it stands for any bug below Run.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("boom\nsecond line") }

func TestRunRecoversPanics(t *testing.T) {
	var stderr strings.Builder
	code := Run([]string{"memctl", "--help"}, Env{Stdout: panicWriter{}, Stderr: &stderr})
	if code != ExitUnexpected {
		t.Errorf("exit %d, want %d", code, ExitUnexpected)
	}
	got := stderr.String()
	if !strings.HasPrefix(got, "memctl: internal error: ") || !strings.Contains(got, "boom second line") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q, want one line reporting the panic", got)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"get-ot", "a"}, `unknown command "get-ot" (did you mean "get-out"?)`},
		{[]string{"zzzzzz"}, `unknown command "zzzzzz"`},
		{[]string{"rel", "ad", "x"}, `unknown command "ad" (did you mean "add"?)`},
		{[]string{"put-edge", "a", "calls"}, "put-edge needs 3 argument(s) (SRC REL DST), got 2"},
		{[]string{"get-node"}, "get-node needs 1 argument(s) (KEY), got 0"},
		{[]string{"stats", "extra"}, "stats takes no arguments, got 1"},
		{[]string{"get-node", "--bogus", "a"}, "flag provided but not defined: -bogus"},
		{[]string{"--bogus", "stats"}, "flag provided but not defined: -bogus"},
		{[]string{"get-node", "a", "--at-rev", "x"}, "invalid value"},
		{[]string{"get-node", "a", "--at-rev", "1", "--at", "2026-01-01T00:00:00Z"}, "--at-rev, --at and --at-commit are mutually exclusive"},
		{[]string{"get-node", "a", "--at", "yesterday"}, "not an RFC 3339 time"},
		{[]string{"get-node", "a\xff"}, "KEY is not valid UTF-8"},
		{[]string{"put-node", "a", "--payload", "{"}, "--payload is not valid JSON"},
		{[]string{"put-node", "a", "--payload", "1 2"}, "--payload is not valid JSON"},
		{[]string{"put-kv", "s", "ns", "k", "{'a':1}"}, "PAYLOAD is not valid JSON"},
		{[]string{"put-edge", "a", "calls", "b", "--weight", "0"}, "--weight must be a finite number > 0"},
		{[]string{"put-edge", "a", "calls", "b", "--weight", "-1"}, "--weight must be a finite number > 0"},
		{[]string{"put-edge", "a", "calls", "b", "--weight", "NaN"}, "--weight must be a finite number > 0"},
		{[]string{"put-edge", "a", "calls", "b", "--weight", "1e39"}, "--weight must be a finite number > 0"},
		{[]string{"rel", "add", "x", "--weight", "-2"}, "--weight must be a finite number > 0"},
		{[]string{"diff-since", "yesterday"}, "neither a revision number nor an RFC 3339 time"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// No store exists at --db: usage errors are found before opening it.
			db := t.TempDir() + "/none"
			r := memctl(t, append([]string{"--db", db}, tc.args...)...)
			wantFailure(t, r, ExitUsage, tc.msg)
		})
	}
}

// Issue #27.4: `memctl help CMD` prints what `memctl CMD --help` prints, at
// every level of the command tree (it used to print the top-level help).
func TestHelpCommand(t *testing.T) {
	top := ok(t, "--help")
	for _, tc := range []struct{ help, flag []string }{
		{[]string{"help", "put-kv"}, []string{"put-kv", "--help"}},
		{[]string{"help", "snapshot"}, []string{"snapshot", "--help"}},
		{[]string{"help", "snapshot", "info"}, []string{"snapshot", "info", "--help"}},
		{[]string{"snapshot", "help", "info"}, []string{"snapshot", "info", "-h"}},
		{[]string{"--db", "x", "help", "rel", "add"}, []string{"rel", "add", "--help"}},
		{[]string{"help"}, []string{"--help"}},
	} {
		got, want := ok(t, tc.help...), ok(t, tc.flag...)
		if got != want {
			t.Errorf("memctl %s printed\n%s\nmemctl %s printed\n%s", strings.Join(tc.help, " "), got, strings.Join(tc.flag, " "), want)
		}
		if len(tc.help) > 1 && got == top {
			t.Errorf("memctl %s printed the top-level help", strings.Join(tc.help, " "))
		}
	}
	wantFailure(t, memctl(t, "help", "put-kvv"), ExitUsage, `unknown command "put-kvv" (did you mean "put-kv"?)`)
	// "help" as a key is a key, not a request for help.
	db := newStore(t)
	wantFailure(t, memctl(t, "--db", db, "get-node", "help"), ExitNotFound, `node "help"`)
}

// Issue #27.4: an unknown subcommand of a command group is a usage error
// naming the nearest subcommand (it was urfave's "No help topic", exit 5).
func TestUnknownSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"ingest", "pyhton", "."}, `unknown command "pyhton" (did you mean "python"?)`},
		{[]string{"eval", "foo"}, `unknown command "foo"`},
		{[]string{"eval", "cochang", "."}, `unknown command "cochang" (did you mean "cochange"?)`},
		{[]string{"snapshot", "foo"}, `unknown command "foo"`},
		{[]string{"snapshot", "hsah", "f"}, `unknown command "hsah"`},
		{[]string{"rel", "lst"}, `unknown command "lst" (did you mean "list"?)`},
	} {
		wantFailure(t, memctl(t, tc.args...), ExitUsage, tc.msg)
	}
}

// Issue #27.4: with --json, a failure is one JSON object on stderr.
func TestJSONErrors(t *testing.T) {
	db := newStore(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "--json", "get-node", "x"}, `{"error":"not found: node \"x\"","code":1}` + "\n"},
		{[]string{"--db", db, "get-node", "x", "--json"}, `{"error":"not found: node \"x\"","code":1}` + "\n"},
		{[]string{"--json", "snapshot", "foo"}, `{"error":"unknown command \"foo\"","code":2}` + "\n"},
		{[]string{"--json", "--db", db + "/none", "stats"}, ""},
	} {
		r := memctl(t, tc.args...)
		if r.Stdout != "" {
			t.Errorf("%v: stdout %q", tc.args, r.Stdout)
		}
		var e struct {
			Error string `json:"error"`
			Code  int    `json:"code"`
		}
		if strings.Count(r.Stderr, "\n") != 1 || json.Unmarshal([]byte(r.Stderr), &e) != nil || e.Code != r.Code || e.Code == 0 || e.Error == "" {
			t.Errorf("%v: exit %d, stderr %q: want one JSON object with error and code", tc.args, r.Code, r.Stderr)
		}
		if tc.want != "" && r.Stderr != tc.want {
			t.Errorf("%v: stderr %q, want %q", tc.args, r.Stderr, tc.want)
		}
	}
	// Without --json (or after "--"), the text line.
	wantFailure(t, memctl(t, "--db", db, "get-node", "--", "--json"), ExitNotFound, `node "--json"`)
}
