package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goldenStep is one command of a scripted session.
type goldenStep struct {
	args  []string
	stdin string
}

// session is a small scripted memctl session covering every store verb in
// text and --json form. Its transcript is testdata/cli/session.golden.
var session = []goldenStep{
	{args: []string{"init"}},
	{args: []string{"rel", "list"}},
	{args: []string{"put-node", "file:lmdbstore/store.go", "--payload", `{"lang":"go"}`, "--run", "run-1", "--task", "index", "--scope", "repo"}},
	{args: []string{"put-node", "sym:lmdbstore.Open", "--type", "func", "--run", "run-1", "--task", "index"}},
	{args: []string{"put-edge", "file:lmdbstore/store.go", "defines", "sym:lmdbstore.Open", "--run", "run-1", "--task", "index"}},
	{args: []string{"put-edge", "sym:cli.Run", "calls", "sym:lmdbstore.Open", "--weight", "0.5", "--payload", `{"line":42}`, "--run", "run-1", "--task", "index"}},
	{args: []string{"put-kv", "repo", "decisions", "errors", `{"rule":"wrap with %w"}`, "--run", "run-1", "--task", "review"}},
	{args: []string{"--json", "put-node", "decision:errors", "--payload", `{"summary":"typed errors at boundaries"}`, "--run", "run-2"}},
	{args: []string{"put-edge", "decision:errors", "decided_for", "file:lmdbstore/store.go", "--run", "run-2"}},
	{args: []string{"get-out", "file:lmdbstore/store.go"}},
	{args: []string{"get-in", "sym:lmdbstore.Open"}},
	{args: []string{"--json", "get-in", "sym:lmdbstore.Open", "--rel", "calls"}},
	{args: []string{"get-node", "file:lmdbstore/store.go"}},
	{args: []string{"--json", "get-node", "sym:lmdbstore.Open"}},
	{args: []string{"del-edge", "file:lmdbstore/store.go", "defines", "sym:lmdbstore.Open", "--run", "run-2"}},
	{args: []string{"get-in", "sym:lmdbstore.Open"}},
	{args: []string{"get-in", "sym:lmdbstore.Open", "--at-rev", "5"}},
	{args: []string{"list-kv", "repo", "decisions"}},
	{args: []string{"--json", "get-kv", "repo", "decisions", "errors"}},
	{args: []string{"batch", "--run", "run-3"}, stdin: `{"op":"put_kv","scope":"repo","namespace":"procedures","key":"test","payload":{"cmd":"make test"}}
{"op":"put_edge","src":"test:lmdbstore/store_test.go","rel":"tests","dst":"sym:lmdbstore.Open"}
`},
	{args: []string{"diff-since", "5"}},
	{args: []string{"--json", "diff-since", "0", "--run", "run-2"}},
	{args: []string{"put-edge", "sym:cli.Run", "cals", "sym:lmdbstore.Open"}},
	{args: []string{"get-node", "sym:nope"}},
	{args: []string{"check"}},
}

var (
	tsPattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

func TestGoldenSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	var transcript strings.Builder
	for _, step := range session {
		r := runEnv(t, step.stdin, nil, append([]string{"--db", db}, step.args...)...)
		fmt.Fprintf(&transcript, "$ memctl %s\n", shellQuote(step.args))
		if step.stdin != "" {
			fmt.Fprintf(&transcript, "< %s\n", strings.ReplaceAll(strings.TrimSuffix(step.stdin, "\n"), "\n", "\n< "))
		}
		transcript.WriteString(r.Stdout)
		if r.Code != 0 {
			fmt.Fprintf(&transcript, "[exit %d] %s", r.Code, r.Stderr)
		} else if r.Stderr != "" {
			t.Errorf("memctl %s: exit 0 with stderr %q", shellQuote(step.args), r.Stderr)
		}
	}
	got := strings.ReplaceAll(transcript.String(), db, "$DB")
	got = tsPattern.ReplaceAllString(got, "<TS>")

	golden := filepath.Join("..", "testdata", "cli", "session.golden")
	if *rewrite {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -run TestGoldenSession -rewrite to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("session transcript differs from %s (-want +got); rerun with -rewrite if the change is intended:\n%s", golden, d)
	}
}

// shellQuote renders args as a shell would need them.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"{}[]$%*?;&|<>()\\`!#~") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
