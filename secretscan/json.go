package secretscan

// Payloads are JSON, and a secret in JSON text is not the secret the text
// means: "line one AKIA…\nline two" holds the key followed by an escape,
// and a private key's line breaks are "\n" escapes. So a payload is
// redacted string by string: every string token (object keys too) is
// decoded, redacted as text, and written back as a JSON string. A match
// never spans two strings, numbers and structure are kept byte for byte,
// and the result is valid JSON whenever the input was.

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ErrNotJSON: RedactJSON was given text that is not one JSON value.
var ErrNotJSON = errors.New("secretscan: not valid JSON")

// RedactJSON returns the JSON value raw with every secret inside its
// strings replaced by [REDACTED:<kind>], and how many were replaced.
// Strings without findings are kept as written.
func (s *Scanner) RedactJSON(raw string) (string, int, error) {
	if !json.Valid([]byte(raw)) {
		return raw, 0, ErrNotJSON
	}
	var b strings.Builder
	n, prev := 0, 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		end := stringEnd(raw, i)
		var text string
		if err := json.Unmarshal([]byte(raw[i:end]), &text); err != nil {
			return raw, 0, ErrNotJSON // unreachable: raw is valid JSON
		}
		out, found := s.Redact(text)
		if len(found) > 0 {
			if b.Len() == 0 {
				b.Grow(len(raw))
			}
			b.WriteString(raw[prev:i])
			b.WriteString(quote(out))
			prev = end
			n += len(found)
		}
		i = end - 1
	}
	if n == 0 {
		return raw, 0, nil
	}
	b.WriteString(raw[prev:])
	return b.String(), n, nil
}

// stringEnd is the offset just past the JSON string token starting at
// raw[start] (a '"'); raw is valid JSON, so the token is closed.
func stringEnd(raw string, start int) int {
	for i := start + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(raw)
}

// quote is s as a JSON string, with <, > and & written as themselves (the
// store's canonical form does the same).
func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}
