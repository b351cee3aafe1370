package lmdbstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

var canonicalSeeds = []string{
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"é"}}`, `-0.5e+10`, `0`, `"x"`, `[1,2,3]`,
	`{"b":1,"a":2}`, `{"a":1,"a":1}`, `{ "a":1}`, `[1, 2]`, `"\u0041"`, `"a\nb"`, "\"a\tb\"", `01`, `1.`, `.5`, `-`,
	`1e`, `tru`, `nul`, `{"a"}`, `{"a":}`, `[1,]`, `"\xff"`, "\"\u2028\"", `{"a":1}x`, `[[[[[]]]]]`, `1.0`, `1E5`,
	`{"":1,"a":2}`, `{"a":{"b":{}}}`, "\"\x7f\"", `"<>&"`, ` { "b" : [ 1 , {"z":0,"y":1} ] , "a" : "x" } `,
	`{"kind":"file","line":3,"doc":"a b c"}`, `{"ab":1,"a":2}`, `{"a\"":1}`, `{"b":1,"a":2,"b":3}`, "{\"a\":1}\n",
}

// TestCanonicalFastPath: whenever the fast path gives an answer, the
// decoding path gives the same bytes (so skipping it changes nothing).
func TestCanonicalFastPath(t *testing.T) {
	accepted := 0
	for _, s := range canonicalSeeds {
		if checkCanonicalAgrees(t, []byte(s)) {
			accepted++
		}
	}
	if accepted < 10 {
		t.Errorf("the fast path accepted only %d seeds", accepted)
	}
}

func checkCanonicalAgrees(t testing.TB, p []byte) bool {
	fast, ok := canonicalFast(p)
	if !ok {
		return false
	}
	if len(bytes.TrimSpace(p)) == 0 || string(bytes.TrimSpace(p)) == "null" {
		return true // canonicalPayload answers "no payload" before asking
	}
	dec, err := decodeCanonical(p)
	if err != nil {
		t.Fatalf("fast path gave %q for %q, the decoding path refuses it: %v", fast, p, err)
	}
	if !bytes.Equal(dec, fast) {
		t.Fatalf("fast path gave %q for %q, the decoding path %q", fast, p, dec)
	}
	return true
}

// decodeCanonical is the decoding path of canonicalPayload alone.
func decodeCanonical(p []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var out bytes.Buffer
	if err := canonicalValue(dec, &out); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the value")
	}
	return out.Bytes(), nil
}

func FuzzCanonicalFastPath(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) { checkCanonicalAgrees(t, p) })
}
