package cli

import (
	"strings"
	"testing"
)

// FuzzParseBatch: any stdin either parses into operations whose fields
// satisfy their op's requirements, or fails with a usage error naming a
// line; it never panics.
func FuzzParseBatch(f *testing.F) {
	for _, s := range []string{
		goodBatch,
		`{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2","weight":1e-50}`,
		`{"op":"add_rel","rel":"x","bidirectional":true,"weight":2}`,
		"{\"op\":\"put_node\",\"key\":\"a:\xff\"}\n\n[1]",
		`{"op":"put_kv","scope":"s","namespace":"n","key":"k","payload":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ops, err := parseBatch(strings.NewReader(in))
		if err != nil {
			if exitCode(err) != ExitUsage || !strings.HasPrefix(err.Error(), "batch line ") {
				t.Fatalf("error %q (exit %d), want a usage error naming a line", err, exitCode(err))
			}
			return
		}
		for _, op := range ops {
			if _, known := opFields[op.op]; !known {
				t.Fatalf("line %d: unknown op %q accepted", op.line, op.op)
			}
			if op.f.Weight != nil && !(op.weight > 0) {
				t.Fatalf("line %d: weight %v accepted as %v", op.line, *op.f.Weight, op.weight)
			}
		}
	})
}

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
