package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"calls", "calls", 0},
		{"cals", "calls", 1}, {"clals", "calls", 2}, {"kitten", "sitting", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	rels := []string{"defines", "references", "calls", "imports", "tests"}
	for _, c := range []struct{ name, want string }{
		{"cals", "calls"},      // one edit
		{"import", "imports"},  // one edit
		{"defnies", "defines"}, // two edits
		{"zzzzz", ""},          // nothing close
		{"x", ""},              // two edits allowed, but every name is further
		{"tests", "tests"},     // exact
		{"referencse", "references"},
	} {
		if got := Nearest(c.name, rels); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Nearest("ab", []string{"ax", "ay"}); got != "ax" {
		t.Errorf("tie: got %q, want the earliest candidate", got)
	}
}
