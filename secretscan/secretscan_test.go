package secretscan

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	scannerOnce sync.Once
	scanner     *Scanner
	scannerErr  error
)

func testScanner(t *testing.T) *Scanner {
	t.Helper()
	scannerOnce.Do(func() { scanner, scannerErr = New() })
	if scannerErr != nil {
		t.Fatal(scannerErr)
	}
	return scanner
}

type corpusEntry struct {
	Label  string `json:"label"`
	Kind   string `json:"kind"`
	Secret string `json:"secret"`
	Text   string `json:"text"`
	Why    string `json:"why"`
}

// readCorpus reads testdata/secrets/corpus.jsonl (made by gen.py there).
func readCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	f, err := os.Open("../testdata/secrets/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var out []corpusEntry
	for sc.Scan() {
		var e corpusEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (e corpusEntry) kindOrWhy() string {
	if e.Kind != "" {
		return e.Kind
	}
	return e.Why
}

// TestCorpus runs the labelled corpus (testdata/secrets/corpus.jsonl, made by
// gen.py there): every true secret must be gone from the redacted text and
// replaced by a [REDACTED:...] marker; near misses are counted as false
// positives when anything in them is redacted (target 0, reported).
func TestCorpus(t *testing.T) {
	s := testScanner(t)
	kinds := map[string][2]int{} // kind → (redacted, total)
	var secrets, redacted, near, falsePos int
	var fps []string
	for _, e := range readCorpus(t) {
		out, findings := s.Redact(e.Text)
		switch e.Label {
		case "secret":
			secrets++
			k := kinds[e.Kind]
			k[1]++
			if !strings.Contains(out, e.Secret) && strings.Contains(out, "[REDACTED:") && len(findings) > 0 {
				redacted++
				k[0]++
			} else {
				t.Errorf("%s secret not redacted: %q -> %q", e.Kind, e.Text, out)
			}
			kinds[e.Kind] = k
		case "near-miss":
			near++
			if len(findings) > 0 || out != e.Text {
				falsePos++
				fps = append(fps, e.Why+": "+e.Text+" -> "+out)
			}
		}
	}
	if secrets < 200 || len(kinds) < 30 || near < 150 {
		t.Fatalf("corpus too small: %d secrets of %d kinds, %d near misses", secrets, len(kinds), near)
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("  %-18s %d/%d redacted", k, kinds[k][0], kinds[k][1])
	}
	t.Logf("secrets redacted: %d of %d (%d kinds); false positives: %d of %d near misses", redacted, secrets, len(kinds), falsePos, near)
	for _, fp := range fps {
		t.Logf("  false positive: %s", fp)
	}
}

// TestRedactKeepsCleanTextAndJSON: text without secrets comes back
// unchanged, and a secret inside a JSON string leaves valid JSON.
func TestRedactKeepsCleanTextAndJSON(t *testing.T) {
	s := testScanner(t)
	clean := `{"rule":"wrap errors with %w","applies_to":["lmdbstore/**"]}`
	if out, f := s.Redact(clean); out != clean || f != nil {
		t.Errorf("clean text changed: %q, %v", out, f)
	}
	const token = "ghp_R8kq2ZtW7vN3xLp9sQm4Yb6Hc1Fd5Gj0Ke2A"
	in := `{"note":"deploy with ` + token + ` then twice ` + token + `"}`
	out, f := s.Redact(in)
	if len(f) != 2 || strings.Contains(out, token[4:]) || !json.Valid([]byte(out)) {
		t.Errorf("Redact(%q) = %q, %v", in, out, f)
	}
}

// TestKeywordPrefilterIsExact: skipping the detector for text without any
// rule's keyword finds exactly what the detector finds on every text: the
// corpus (secrets and near misses) in every context, upper-cased, and
// clean text, compared with a scanner whose prefilter is off.
func TestKeywordPrefilterIsExact(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine over the whole corpus (a minute under -race); make test's non-race pass runs it")
	}
	s := testScanner(t)
	if s.keywords == nil {
		t.Fatal("the prefilter is off for gitleaks' default rules")
	}
	plain := &Scanner{d: s.d} // no prefilter: every text goes to the detector
	texts := []string{"", "a plain sentence about handlers.", "sym:pkg/handler.Server", "file:internal/utils.go",
		"sym:pkg.(*Server).Handle", "test:pkg.TestNew(x),", "<add>key=\"0123456789abcdefghij0123\"",
		// Non-ASCII: the Kelvin sign lower-cases to an ASCII k (and the
		// detector's (?i) matches it as one).
		"TO\u212aEN: Xq7pL9vB2mN4zR8tY1wK6sD3fG5hJ0", "clé: ÅÉÎ (sym:pkg.Ünïcode)."}
	for _, e := range readCorpus(t) {
		for _, c := range contexts {
			texts = append(texts, c.place(e.Text), strings.ToUpper(c.place(e.Text)))
		}
		// As a node key: a prefix, and a method's punctuation after it.
		texts = append(texts, "sym:"+e.Text, "sym:pkg.(*T).M("+e.Text+")")
	}
	skipped := 0
	for _, text := range texts {
		if !s.mayHold(text) {
			skipped++
		}
		want, wantF := plain.Redact(text)
		got, gotF := s.Redact(text)
		if got != want || len(gotF) != len(wantF) {
			t.Errorf("%q: with the prefilter %q (%d findings), without %q (%d)", text, got, len(gotF), want, len(wantF))
		}
	}
	if skipped == 0 {
		t.Error("the prefilter skipped no text")
	}
	if !s.blankSafe {
		t.Error("gitleaks' keywords do not survive blanking: every text is scanned twice")
	}
	t.Logf("%d texts, %d skipped by the prefilter", len(texts), skipped)
}

// TestKeywordsSurviveBlanking: a keyword with a space could appear only
// in a text's blanked copy ("<add>key=" blanks to "<add key="), unless a
// part of it between spaces holds another keyword.
func TestKeywordsSurviveBlanking(t *testing.T) {
	for _, c := range []struct {
		kws  []string
		want bool
	}{
		{[]string{"key", "token", "://"}, true},
		{[]string{"<add key=", "key"}, true},
		{[]string{"<add key="}, false},
		{[]string{"<add key=", "add key"}, false}, // the other keyword has a space too
		{[]string{"a b", "x"}, false},
	} {
		if got := keywordsSurviveBlanking(c.kws); got != c.want {
			t.Errorf("%q: %v, want %v", c.kws, got, c.want)
		}
	}
	// What the check is for: a text whose blanked copy holds a keyword the
	// text does not.
	kws := []string{"<add key="}
	text := "<add>key=1"
	if strings.Contains(strings.ToLower(text), kws[0]) || !strings.Contains(trailingPunct(text), kws[0]) {
		t.Fatalf("%q does not show the case", text)
	}
}
