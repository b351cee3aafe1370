package engines

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// unmarshalTerms is the vocabulary as BuildLexicon read it before the
// scanner: json.Unmarshal into the payload shape, the terms with a count
// > 0 sorted by term.
func unmarshalTerms(p []byte) ([]termCount, bool) {
	var payload struct {
		Terms map[string]int `json:"terms"`
	}
	if json.Unmarshal(p, &payload) != nil || len(payload.Terms) == 0 {
		return nil, false
	}
	var out []termCount
	for t, c := range payload.Terms {
		if c > 0 {
			out = append(out, termCount{t, c})
		}
	}
	slices.SortFunc(out, func(a, b termCount) int { return cmp.Compare(a.t, b.t) })
	return out, true
}

// checkPayloadTerms fails unless payloadTerms reads p as json.Unmarshal
// does; it reports whether the scanner (not the fallback) read it.
func checkPayloadTerms(t *testing.T, p []byte) bool {
	t.Helper()
	want, wantOK := unmarshalTerms(p)
	got, ok := payloadTerms(p)
	slices.SortFunc(got, func(a, b termCount) int { return cmp.Compare(a.t, b.t) })
	if ok != wantOK || !slices.Equal(got, want) {
		t.Fatalf("payload %q: got %v %v, json.Unmarshal gives %v %v", p, got, ok, want, wantOK)
	}
	_, done, _ := scanTerms(p)
	return done
}

// TestPayloadTermsAsUnmarshal: the payloads ingest writes are read by the
// scanner, and every payload — those, the shapes the scanner gives up on,
// and random mutations of both — gives json.Unmarshal's vocabulary.
func TestPayloadTermsAsUnmarshal(t *testing.T) {
	ingest := []string{
		`{"bytes":121,"hash":"sha256:aa65","lang":"python","lines":10,"package":"m0201","path":"p10/m0201.py","terms":{"class":1,"def":2,"from":1,"import":1,"return":2,"self":1}}`,
		`{"terms":{"a":1}}`,
		` { "x" : [1, {"y": null}, "s\"q\u00e9"], "terms" : { "é" : 3 , "b": 0, "c": -2 } } `,
		`{"Terms":{"a":1},"other":true}`,
		`{"terms":{}}`,
		`{"terms":{"a":0}}`,
		`{"nested":{"terms":{"a":1}},"n":-1.5e3}`,
		`{}`,
	}
	for _, p := range ingest {
		if !checkPayloadTerms(t, []byte(p)) {
			t.Errorf("payload %q: left to json.Unmarshal", p)
		}
	}
	odd := []string{
		`{"terms":{"a":1},"terms":{"b":2}}`, // Unmarshal merges them
		`{"terms":{"a":1},"TERMS":{"a":5}}`,
		`{"termſ":{"a":1}}`, // folds to "terms"
		`{"te\u0072ms":{"a":1}}`,
		`{"terms":{"a":1,"a":4}}`,
		`{"terms":{"a":1.0}}`, `{"terms":{"a":1e2}}`, `{"terms":{"a":99999999999999999999}}`,
		`{"terms":{"a":"1"}}`, `{"terms":null}`, `{"terms":[1]}`, `{"terms":{"a\n":1}}`,
		`{"terms":{"a\"b":1}}`, "{\"terms\":{\"\xff\":1}}", `{"terms":{"a":01}}`,
		`null`, `[]`, `"terms"`, `{"terms":{"a":1}} x`, `{"terms":{"a":1}`, `{"x":tru,"terms":{"a":1}}`,
		`{"x":"\q","terms":{"a":1}}`, `{"x":"\u12","terms":{"a":1}}`, `{"x":1.,"terms":{"a":1}}`,
		`{"terms":{"a":-0}}`, `{"terms":{"a":9223372036854775807}}`,
		`{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"terms":{"a":1}}`,
	}
	for _, p := range odd {
		checkPayloadTerms(t, []byte(p))
	}
	// Random payloads of the ingest shape, and byte mutations of them.
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"def", "class", "é", "Terms", "terms", "x", "ſ", `\"`, "\\u0041", "a b", "0"}
	scanned := 0
	for range 3000 {
		var b strings.Builder
		b.WriteString(`{"path":"p/m.py",`)
		if rng.IntN(5) == 0 {
			b.WriteString(`"Terms":{"z":1},`)
		}
		b.WriteString(`"terms":{`)
		for i := range rng.IntN(6) {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%s":%d`, words[rng.IntN(len(words))], rng.IntN(5)-1)
		}
		b.WriteString(`},"lines":3}`)
		p := []byte(b.String())
		if checkPayloadTerms(t, p) {
			scanned++
		}
		for range 3 {
			m := slices.Clone(p)
			const marks = `{}[]:,"\ 1-.e`
			m[rng.IntN(len(m))] = marks[rng.IntN(len(marks))]
			checkPayloadTerms(t, m)
		}
	}
	if scanned < 1000 {
		t.Fatalf("only %d of 3000 ingest-shaped payloads were scanned", scanned)
	}
}

// FuzzPayloadTerms: any bytes give json.Unmarshal's vocabulary.
func FuzzPayloadTerms(f *testing.F) {
	f.Add([]byte(`{"path":"a.py","terms":{"def":2,"x":1}}`))
	f.Add([]byte(`{"x":[1,{"y":"\u00e9"}],"Terms":{"a":-1,"b":3}}`))
	f.Add([]byte(`{"terms":{"a":1},"terms":{"b":2}}`))
	f.Fuzz(func(t *testing.T, p []byte) { checkPayloadTerms(t, p) })
}
