package cli

import (
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
