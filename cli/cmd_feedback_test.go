package cli

import (
	"strings"
	"testing"
)

// TestFeedback: feedback commits one revision of kv entries memctl/feedback
// (list-kv and diff-since show them), and activate --feedback ranks the
// useful item first and the useless one last, while activate without it
// is unchanged.
func TestFeedback(t *testing.T) {
	db := newStore(t)
	for _, e := range [][2]string{{"x:a", "x:b"}, {"x:a", "x:c"}, {"x:a", "x:d"}} {
		ok(t, "--db", db, "put-edge", e[0], "calls", e[1])
	}
	plain := ok(t, "--db", db, "activate", "x:a", "--depth", "1")
	rev := revOf(t, ok(t, "--db", db, "feedback", "x:a", "--useful", "x:d", "--useless", "x:b"))
	if got := ok(t, "--db", db, "list-kv", "memctl", "feedback"); !strings.Contains(got, `{"t":1}`) ||
		!strings.Contains(got, "memctl/feedback/x:a/x:d") || !strings.Contains(got, "memctl/feedback/x:a/x:b") {
		t.Errorf("list-kv:\n%s", got)
	}
	diff := ok(t, "--db", db, "--json", "diff-since", revString(rev-1))
	if n := strings.Count(diff, `"op":"put_kv"`); n != 3 {
		t.Errorf("diff-since: %d put_kv, want 3 (clock and two pairs):\n%s", n, diff)
	}
	if got := ok(t, "--db", db, "activate", "x:a", "--depth", "1"); got != plain {
		t.Errorf("activate without --feedback changed:\n%s\nwas\n%s", got, plain)
	}
	// Depth 1 from x:a: calls weigh .5 (usage) each; feedback moved d to
	// strength .5 (link .25 × .5 = .125) and b to −.5. S(x:a) = 1.625: d
	// (.5+.125)/1.625, c .5/1.625, b .5/1.625 × (1 − .5).
	got := ok(t, "--db", db, "activate", "x:a", "--depth", "1", "--feedback")
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		f := strings.Fields(line)
		keys = append(keys, f[len(f)-1])
	}
	if want := "x:a x:d x:c x:b"; strings.Join(keys, " ") != want {
		t.Errorf("activate --feedback: %v, want %s\n%s", keys, want, got)
	}
	// context reads it too: x:d, learnt useful, is listed first among
	// the related items.
	for _, f := range []string{"b", "c", "d"} {
		ok(t, "--db", db, "put-edge", "file:a.go", "imports", "file:"+f+".go")
	}
	for _, f := range []string{"a", "b", "c", "d"} {
		ok(t, "--db", db, "put-node", "file:"+f+".go")
	}
	// Without feedback the three tie (node index order puts b.go last).
	ok(t, "--db", db, "feedback", "file:a.go", "--useful", "file:b.go")
	order := func(pack string) bool { // file:b.go listed before file:d.go
		b, d := strings.Index(pack, "b.go"), strings.Index(pack, "d.go")
		if b < 0 || d < 0 {
			t.Fatalf("context lists neither:\n%s", pack)
		}
		return b < d
	}
	if pack := ok(t, "--db", db, "context", "file:a.go", "--feedback"); !order(pack) {
		t.Errorf("context --feedback: b.go not before d.go:\n%s", pack)
	}
	if pack := ok(t, "--db", db, "context", "file:a.go"); order(pack) {
		t.Errorf("context: b.go before d.go without feedback:\n%s", pack)
	}
	wantFailure(t, memctl(t, "--db", db, "feedback", "x:a", "--useful", "x:b", "--useless", "x:b"), ExitUsage, "both useful and useless")
	wantFailure(t, memctl(t, "--db", db, "feedback", "x:a"), ExitUsage, "no useful")
}
