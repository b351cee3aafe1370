package secretscan

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// contexts place a text where agents put secrets: at the end of a line of a
// note, before a tab or a quote, before punctuation, inside JSON held in a
// string, inside a URL query, in a .env file.
var contexts = []struct {
	name  string
	place func(string) string
}{
	{"plain", func(t string) string { return t }},
	{"before newline", func(t string) string { return t + "\nline two" }},
	{"after newline", func(t string) string { return "line one\n" + t }},
	{"before tab", func(t string) string { return t + "\tcolumn" }},
	{"in quotes", func(t string) string { return `he said "` + t + `"` }},
	{"before comma", func(t string) string { return t + ", then more" }},
	{"before period", func(t string) string { return t + "." }},
	{"in parentheses", func(t string) string { return "(" + t + ")" }},
	{"before ampersand", func(t string) string { return t + "&page=2" }},
	{"before semicolon", func(t string) string { return t + "; done" }},
	{"nested JSON", func(t string) string { return `{"inner":` + quote(t) + `}` }},
	{"in a URL", func(t string) string { return "https://h.example/cb?a=1&x=" + t + "&b=2" }},
	{".env line", func(t string) string { return "A=1\n" + t + "\nB=2\n" }},
}

// kept reports whether out is in with each occurrence of secret replaced by
// one [REDACTED:kind] marker and nothing else changed.
func kept(in, out, secret string) bool {
	if !strings.Contains(in, secret) {
		// JSON inside the text: the secret stands there escaped.
		secret = strings.Trim(quote(secret), `"`)
	}
	parts := strings.Split(in, secret)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^` + strings.Join(parts, `\[REDACTED:[a-z0-9-]+\]`) + `$`).MatchString(out)
}

// TestCorpusInEveryContext: every secret of the corpus, in every context,
// as plain text and as a string inside a JSON payload (so next to JSON
// escapes), is redacted with no other byte changed and the payload still
// valid; no near miss in any context is touched.
func TestCorpusInEveryContext(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine over the whole corpus (a minute under -race); make test's non-race pass runs it")
	}
	s := testScanner(t)
	entries := readCorpus(t)
	var placements, redacted, nearPlacements, falsePos int
	for _, e := range entries {
		for _, c := range contexts {
			v := c.place(e.Text)
			payload := `{"n":1,"note":` + quote(v) + `,"tags":["x"]}`
			outText, _ := s.Redact(v)
			outJSON, n, err := s.RedactJSON(payload)
			if err != nil {
				t.Fatalf("RedactJSON(%q): %v", payload, err)
			}
			var doc struct {
				N    int      `json:"n"`
				Note string   `json:"note"`
				Tags []string `json:"tags"`
			}
			if err := json.Unmarshal([]byte(outJSON), &doc); err != nil || doc.N != 1 || len(doc.Tags) != 1 {
				t.Errorf("%s, %s: payload broken: %q -> %q (%v)", e.kindOrWhy(), c.name, payload, outJSON, err)
				continue
			}
			switch e.Label {
			case "secret":
				placements += 2
				if kept(v, outText, e.Secret) {
					redacted++
				} else {
					t.Errorf("%s, %s, text: %q -> %q", e.Kind, c.name, v, outText)
				}
				if n > 0 && kept(v, doc.Note, e.Secret) {
					redacted++
				} else {
					t.Errorf("%s, %s, JSON: %q -> %q", e.Kind, c.name, payload, outJSON)
				}
			case "near-miss":
				nearPlacements += 2
				if outText != v {
					falsePos++
					t.Errorf("false positive (%s, %s, text): %q -> %q", e.Why, c.name, v, outText)
				}
				if outJSON != payload {
					falsePos++
					t.Errorf("false positive (%s, %s, JSON): %q -> %q", e.Why, c.name, payload, outJSON)
				}
			}
		}
	}
	t.Logf("%d of %d secret placements redacted exactly; %d false positives in %d near-miss placements", redacted, placements, falsePos, nearPlacements)
}

// TestRedactJSONNeverSpansValues: a private key whose BEGIN and END markers
// stand in different members is not one key (nothing between them is
// lost), and a JWT inside JSON held in a string leaves the payload valid.
func TestRedactJSONNeverSpansValues(t *testing.T) {
	s := testScanner(t)
	body := strings.Repeat("MIIEowIBAAKCAQEAx8k2", 5)
	spanning := `{"a":"-----BEGIN RSA PRIVATE KEY-----","b":"` + body + `","c":"-----END RSA PRIVATE KEY-----"}`
	if out, n, err := s.RedactJSON(spanning); err != nil || n != 0 || out != spanning {
		t.Errorf("markers in separate members: %q, %d, %v", out, n, err)
	}
	const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	nested := `{"outer":"{\"token\":\"` + jwt + `\",\"n\":1}"}`
	out, n, err := s.RedactJSON(nested)
	if err != nil || n != 1 || strings.Contains(out, jwt) || !json.Valid([]byte(out)) {
		t.Fatalf("nested JWT: %q, %d, %v", out, n, err)
	}
	var doc struct{ Outer string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !json.Valid([]byte(doc.Outer)) {
		t.Errorf("the inner JSON is no longer valid: %q", doc.Outer)
	}
	if _, _, err := s.RedactJSON(`{"a":`); err != ErrNotJSON {
		t.Errorf("invalid JSON: err %v, want ErrNotJSON", err)
	}
	// A secret in an object key is redacted too.
	key := `{"ghp_R8kq2ZtW7vN3xLp9sQm4Yb6Hc1Fd5Gj0Ke2A":1}`
	if out, n, _ := s.RedactJSON(key); n != 1 || strings.Contains(out, "ghp_R8") {
		t.Errorf("secret in a key: %q, %d", out, n)
	}
}

// TestRedactKindIsDeterministic: a token two rules find at the same span
// is named by the specific rule, every time.
func TestRedactKindIsDeterministic(t *testing.T) {
	s := testScanner(t)
	const in = "git push https://ci:ghp_R8kq2ZtW7vN3xLp9sQm4Yb6Hc1Fd5Gj0Ke2A@github.com/o/r"
	for range 50 {
		if out, _ := s.Redact(in); out != "git push https://ci:[REDACTED:github-pat]@github.com/o/r" {
			t.Fatalf("Redact = %q", out)
		}
	}
}
