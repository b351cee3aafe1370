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
		got := strings.Join(interspersed(app, strings.Fields(in)), " ")
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
