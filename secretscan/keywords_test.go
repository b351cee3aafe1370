package secretscan

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite keywords.go from the rules")

// TestRuleKeywords: ruleKeywords are exactly the keywords of the rules New
// loads, and the Scanner's own prefilter is exact and blank-safe, which is
// what lets Lazy return a text without any of them unscanned.
func TestRuleKeywords(t *testing.T) {
	cfg, err := loadRules()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for k := range cfg.Keywords {
		want = append(want, strings.ToLower(k))
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if *update {
		var b bytes.Buffer
		src, err := os.ReadFile("keywords.go")
		if err != nil {
			t.Fatal(err)
		}
		head := src[:bytes.Index(src, []byte("var ruleKeywords"))] // the header, as written
		b.Write(head)
		b.WriteString("var ruleKeywords = []string{\n")
		for _, k := range want {
			fmt.Fprintf(&b, "\t%q,\n", k)
		}
		b.WriteString("}\n")
		if err := os.WriteFile("keywords.go", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !slices.Equal(ruleKeywords, want) {
		t.Fatalf("keywords.go is not the rules' keywords (%d listed, the rules have %d): run go test ./secretscan -run TestRuleKeywords -args -update", len(ruleKeywords), len(want))
	}
	s := testScanner(t)
	if s.keywords == nil || !s.blankSafe {
		t.Fatalf("the Scanner's prefilter is not exact (%v) or not blank-safe (%v): Lazy cannot skip texts", s.keywords != nil, s.blankSafe)
	}
}

// TestLazyMatchesScanner: Lazy gives what the Scanner gives, text by text
// and payload by payload, over the secret corpus in every context and as
// JSON (plain, and with escapes that hide a keyword): every text and
// payload its quick lookup lets through unscanned comes back from the
// Scanner unchanged; keyword-free writes leave it unbuilt; and one Lazy
// taking all of them (so building the Scanner on the way) agrees too.
func TestLazyMatchesScanner(t *testing.T) {
	if raceEnabled {
		// Even a fifth of the corpus took 48 s under -race, and the race
		// detector has nothing to find here: one goroutine, and secretscan
		// uses no unsafe (checkptr). make test's non-race pass runs it all.
		t.Skip("one goroutine over the corpus (48 s under -race); make test's non-race pass runs it")
	}
	s := testScanner(t)
	var texts []string
	for _, e := range readCorpus(t) {
		for _, c := range contexts {
			texts = append(texts, c.place(e.Text))
		}
	}
	texts = append(texts, "", "w:1", "calls", "sym:pkg.(*Server).Handle", "a plain sentence.", "K\\u0045Y", "clé: ÅÉÎ")
	payloads := func(text string) []string {
		return []string{quote(text), `{"note":` + quote(text) + `,"n":1}`, `["` + escapeAll(text) + `"]`, `{"a":` + quote(text)}
	}
	quick, quickJSON := 0, 0
	for _, text := range texts {
		var l lazyScanner // fresh: the quick lookup decides
		if text == "" || !l.needed(text) {
			quick++
			if got, f := s.Redact(text); got != text || len(f) != 0 {
				t.Fatalf("%q: skipped by the quick lookup, but the Scanner redacts it to %q", text, got)
			}
		}
		for _, raw := range payloads(text) {
			var l lazyScanner
			if ascii(raw) && !strings.Contains(raw, `\`) && !l.needed(raw) {
				quickJSON++
				got, n, err := l.redactJSON(raw)
				want, wantN, wantErr := s.RedactJSON(raw)
				if got != want || n != wantN || err != wantErr || l.built.Load() != nil {
					t.Fatalf("%s: quick path %q (%d, %v), Scanner %q (%d, %v)", raw, got, n, err, want, wantN, wantErr)
				}
			}
		}
	}
	if quick == 0 || quick == len(texts) || quickJSON == 0 {
		t.Fatalf("the quick lookup let %d of %d texts and %d payloads through: never, or always, taken", quick, len(texts), quickJSON)
	}
	var l lazyScanner
	for _, text := range []string{"w:1", "sym:pkg.(*Server).Handle", "file:internal/util.go"} {
		if got, n := l.redact(text); got != text || n != 0 {
			t.Fatalf("%q: %q, %d", text, got, n)
		}
		if got, n, err := l.redactJSON(`{"k":` + quote(text) + `}`); err != nil || n != 0 || got != `{"k":`+quote(text)+`}` {
			t.Fatalf("%q as JSON: %q, %d, %v", text, got, n, err)
		}
	}
	if l.built.Load() != nil {
		t.Fatal("keyword-free writes built the Scanner")
	}
	// One lazyScanner through all of them builds the Scanner on the way
	// (a secret, or quickLookups used up) and agrees throughout.
	var one lazyScanner
	for _, text := range texts {
		want, wantF := s.Redact(text)
		if got, n := one.redact(text); got != want || n != len(wantF) {
			t.Fatalf("%q: Lazy %q (%d), Scanner %q (%d)", text, got, n, want, len(wantF))
		}
		for _, raw := range payloads(text) {
			want, wantN, wantErr := s.RedactJSON(raw)
			if got, n, err := one.redactJSON(raw); got != want || n != wantN || err != wantErr {
				t.Fatalf("%s: Lazy %q (%d, %v), Scanner %q (%d, %v)", raw, got, n, err, want, wantN, wantErr)
			}
		}
	}
	if one.built.Load() == nil {
		t.Fatal("the corpus did not build the Scanner")
	}
}

// escapeAll writes every character of text as a JSON \\u escape: a keyword
// hidden that way is not in the raw payload.
func escapeAll(text string) string {
	var b strings.Builder
	for _, r := range text {
		if r > 0xffff {
			b.WriteString(strings.Trim(quote(string(r)), `"`))
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}
