package fuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memctl/memctl/cli"
)

// FuzzBatch feeds the input to `memctl batch` (in-process, on a copy of the
// fixture store). Either the batch fails with exit 1, 2 or 4, one line on
// stderr, and the store is byte-for-byte unchanged; or it commits, and its
// operations, read back with `diff-since --json`, are a batch that a second
// copy of the store accepts and logs identically (the batch format
// round-trips through diff-since, SPEC.md §6.4).
func FuzzBatch(f *testing.F) {
	for _, s := range []string{
		`{"op":"put_node","key":"file:c.go","payload":{"x":1}}`,
		`{"op":"put_edge","src":"file:a.go","rel":"calls","dst":"sym:a.F","weight":0.5}` + "\n" +
			`{"op":"del_edge","src":"file:a.go","rel":"defines","dst":"sym:a.F"}`,
		`{"op":"add_rel","rel":"likes","bidirectional":true,"weight":2}` + "\n" +
			`{"op":"put_edge","src":"x:1","rel":"likes","dst":"x:2"}`,
		`{"op":"put_kv","scope":"proj","namespace":"decision","key":"k","payload":[1,"two"],"run_id":"r","task_id":"t"}` + "\n\n" +
			`{"op":"del_kv","scope":"proj","namespace":"decision","key":"k"}`,
		`{"op":"del_node","key":"sym:a.F"}`,
		`{"op":"del_node","key":"nope:1"}`,
		`{"op":"put_edge","src":"a:1","rel":"calss","dst":"a:2"}`,
		`{"op":"put_node","key":"a:\xff"}`,
		`{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2","weight":-1}`,
		`[1,2]`,
	} {
		f.Add(s)
	}
	base := fixture(f)
	f.Fuzz(func(t *testing.T, in string) {
		defer watchdog(hangLimit)()
		db := copyStore(t, base)
		before := rawDump(t, db)
		r := memctlIn(in, "--db", db, "--json", "batch")
		if r.Code != 0 {
			switch r.Code {
			case cli.ExitNotFound, cli.ExitUsage, cli.ExitConflict:
			default:
				t.Fatalf("batch exit %d: %q", r.Code, r.Stderr)
			}
			if r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.HasSuffix(r.Stderr, "\n") {
				t.Fatalf("failed batch: stdout %q, stderr %q: want one line on stderr only", r.Stdout, r.Stderr)
			}
			if diff := before.diff(rawDump(t, db)); diff != "" {
				t.Fatalf("failed batch (exit %d: %s) changed the store:\n%s", r.Code, r.Stderr, diff)
			}
			return
		}
		var commit struct {
			Rev uint64 `json:"rev"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &commit); err != nil {
			t.Fatalf("batch output %q: %v", r.Stdout, err)
		}
		if commit.Rev == 0 {
			if diff := before.diff(rawDump(t, db)); diff != "" {
				t.Fatalf("batch that committed nothing changed the store:\n%s", diff)
			}
			return
		}
		logged := diffSinceJSON(t, db, commit.Rev-1)
		replica := copyStore(t, base)
		r2 := memctlIn(logged, "--db", replica, "--json", "batch")
		if r2.Code != 0 {
			t.Fatalf("replaying diff-since output as a batch: exit %d: %s\ninput:\n%s\nlogged:\n%s", r2.Code, r2.Stderr, in, logged)
		}
		if again := diffSinceJSON(t, replica, commit.Rev-1); again != logged {
			t.Fatalf("replayed batch logs differently:\nfirst:\n%s\nreplay:\n%s", logged, again)
		}
		if c := memctlIn("", "--db", db, "check"); c.Code != 0 {
			t.Fatalf("check after batch: exit %d: %s%s", c.Code, c.Stdout, c.Stderr)
		}
	})
}

// diffSinceJSON returns `diff-since REV --json` with rev and ts removed.
func diffSinceJSON(t *testing.T, db string, rev uint64) string {
	t.Helper()
	r := memctlIn("", "--db", db, "--json", "diff-since", fmt.Sprint(rev))
	if r.Code != 0 {
		t.Fatalf("diff-since: exit %d: %s", r.Code, r.Stderr)
	}
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if line == "" {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("diff-since line %q: %v", line, err)
		}
		delete(m, "rev")
		delete(m, "ts")
		out, _ := json.Marshal(m)
		b.Write(out)
		b.WriteByte('\n')
	}
	return b.String()
}
