package cli

import (
	"strings"
	"testing"
)

// FuzzInterspersed: rewriting the command line keeps every token (only
// reordered, plus at most one "--") and never panics.
func FuzzInterspersed(f *testing.F) {
	f.Add("put-edge a calls b --weight 2 --db x")
	f.Add("--json rel add owns --bidirectional -- -x")
	f.Add("get-out --rel=calls -1 --at-rev")
	app := newApp(Env{}.withDefaults())
	f.Fuzz(func(t *testing.T, line string) {
		args := append([]string{"memctl"}, strings.Fields(line)...)
		got, err := interspersed(app, args)
		if err != nil {
			return // a flag without its value: reported, nothing to rewrite
		}
		count := func(toks []string) map[string]int {
			m := map[string]int{}
			for _, tok := range toks {
				m[tok]++
			}
			return m
		}
		want, have := count(args), count(got)
		extra := have["--"] - want["--"]
		if extra < 0 || extra > 1 {
			t.Fatalf("%q -> %q: %d \"--\" added", args, got, extra)
		}
		delete(want, "--")
		delete(have, "--")
		for tok, n := range want {
			if have[tok] != n {
				t.Fatalf("%q -> %q: token %q appears %d times, want %d", args, got, tok, have[tok], n)
			}
		}
		if len(have) != len(want) {
			t.Fatalf("%q -> %q: tokens added", args, got)
		}
	})
}
