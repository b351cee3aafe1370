package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInterspersed(t *testing.T) {
	app := newApp(Env{}.withDefaults())
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"--db x get-out a", "--db x get-out -- a"},
		{"get-out a --db x", "--db x get-out -- a"},
		{"get-out --rel calls a", "--db=y get-out --rel calls -- a"}, // see prefix below
		{"put-edge a calls b --weight 2 --run r1", "put-edge --weight 2 --run r1 -- a calls b"},
		{"put-edge a calls b --weight=2", "put-edge --weight=2 -- a calls b"},
		{"--json put-kv s ns k -1", "--json put-kv -- s ns k -1"},
		{"put-kv s ns k -- --not-a-flag", "put-kv -- s ns k --not-a-flag"},
		{"put-node a --bogus", "put-node --bogus -- a"},
		{"rel add owns --bidirectional --weight 0.5", "rel add --bidirectional --weight 0.5 -- owns"},
		{"rel list --json", "--json rel list"},
		{"rel --json add x", "--json rel add -- x"},
		{"rel --db d list", "--db d rel list"},
		{"nosuch a --db x", "nosuch a --db x"},
		{"get-node -h", "get-node -h"},
		{"diff-since 3 --task t1 --json", "--json diff-since --task t1 -- 3"},
		{"--db x", "--db x"},
	} {
		in := "memctl " + tc.in
		want := "memctl " + tc.want
		if tc.in == "get-out --rel calls a" {
			in, want = "memctl --db=y get-out --rel calls a", "memctl "+tc.want
		}
		argv, err := interspersed(app, strings.Fields(in))
		if err != nil {
			t.Errorf("interspersed(%q): %v", in, err)
			continue
		}
		got := strings.Join(argv, " ")
		if d := cmp.Diff(strings.TrimSpace(want), strings.TrimSpace(got)); d != "" {
			t.Errorf("interspersed(%q) (-want +got):\n%s", in, d)
		}
	}
}

func TestLooksLikeFlag(t *testing.T) {
	for tok, want := range map[string]bool{
		"-a": true, "--db": true, "--db=x": true, "-": false, "--": false,
		"-1": false, "-0.5": false, "-.5": false, "a": false, "{}": false,
	} {
		if got := looksLikeFlag(tok); got != want {
			t.Errorf("looksLikeFlag(%q) = %v, want %v", tok, got, want)
		}
	}
}

// TestFlagMissingValue: a flag that takes a value and is followed by
// nothing, "--" or another flag is exit 2 with one line, for every command
// and at every position (the regression: `put-node sym:q --type` stored the
// type "--").
func TestFlagMissingValue(t *testing.T) {
	db := t.TempDir()
	if code := Run([]string{"memctl", "--db", db, "init"}, Env{}); code != ExitOK {
		t.Fatalf("init: exit %d", code)
	}
	for _, line := range []string{
		"put-node sym:q --type",
		"put-node sym:q --type --json",
		"put-node --type -- sym:q",
		"put-edge a calls b --weight",
		"get-out a --rel",
		"--db",
		"export --out",
		"snapshot info --no-verify --json --bogus",
	} {
		args := append([]string{"memctl", "--db", db}, strings.Fields(line)...)
		if line == "--db" {
			args = []string{"memctl", "--db"}
		}
		var stderr strings.Builder
		code := Run(args, Env{Stderr: &stderr})
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", line, code, ExitUsage, stderr.String())
		}
		if n := strings.Count(stderr.String(), "\n"); n != 1 {
			t.Errorf("%q: %d stderr lines, want one: %q", line, n, stderr.String())
		}
	}
	if code := Run([]string{"memctl", "--db", db, "get-node", "sym:q"}, Env{}); code != ExitNotFound {
		t.Errorf("get-node sym:q after the refused writes: exit %d, want %d (nothing written)", code, ExitNotFound)
	}
}
