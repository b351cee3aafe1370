package ingest

import (
	"encoding/json"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
)

// Pieces of strings the encoders must write exactly as encoding/json
// does: plain ASCII, what JSON escapes, what only encoding/json escapes
// (U+2028, U+2029), HTML characters (not escaped in the canonical form),
// non-ASCII and invalid UTF-8.
var payloadStringPieces = []string{
	"", "a", "net/http", "Server", "x_test.go", `"`, `\`, "\n", "\t", "\x00", "\x1f", "\x7f",
	"<", ">", "&", "\u2028", "\u2029", "é", "日本", "\xff", "\xc3", "\ufffd", " ", "/", "'",
}

func randomPayloadString(r *rand.Rand) string {
	var b strings.Builder
	for range r.Intn(5) {
		b.WriteString(payloadStringPieces[r.Intn(len(payloadStringPieces))])
	}
	return b.String()
}

func randomPayloadInt(r *rand.Rand) int {
	switch r.Intn(4) {
	case 0:
		return 0
	case 1:
		return -r.Intn(1 << 20)
	default:
		return r.Intn(1 << 40)
	}
}

// TestPayloadEncodersMatchMarshal holds mustJSON's hand-written encoders
// to the reflective path they replace (json.Marshal, then
// lmdbstore.CanonicalPayload), byte for byte, over random payloads and
// every payload of the golden tree's extraction.
func TestPayloadEncodersMatchMarshal(t *testing.T) {
	r := rand.New(rand.NewSource(28))
	check := func(v any) {
		t.Helper()
		if got, want := string(mustJSON(v)), string(marshalCanonical(v)); got != want {
			t.Fatalf("%#v:\n got %s\nwant %s", v, got, want)
		}
	}
	for range 20000 {
		check(SymbolPayload{
			Package: randomPayloadString(r), Name: randomPayloadString(r), Recv: randomPayloadString(r),
			Kind: randomPayloadString(r), Path: randomPayloadString(r),
			LineStart: randomPayloadInt(r), LineEnd: randomPayloadInt(r),
			Exported: r.Intn(2) == 0, Test: r.Intn(2) == 0,
		})
		p := FilePayload{
			Path: randomPayloadString(r), Lang: randomPayloadString(r), Package: randomPayloadString(r),
			Hash: randomPayloadString(r), Bytes: randomPayloadInt(r), Lines: randomPayloadInt(r),
			Test: r.Intn(2) == 0, Mode: randomPayloadString(r), ParseError: randomPayloadString(r),
			Unresolved: randomPayloadInt(r), Precise: randomPayloadString(r),
		}
		switch r.Intn(3) {
		case 0: // nil terms
		case 1:
			p.Terms = map[string]int{}
		default:
			p.Terms = map[string]int{}
			for range r.Intn(30) {
				p.Terms[strings.ToValidUTF8(randomPayloadString(r), "")] = randomPayloadInt(r)
			}
			if r.Intn(4) == 0 {
				// One invalid term (two could decode to one name).
				p.Terms["a\xffb"] = 1
			}
		}
		if r.Intn(10) == 0 {
			p.Git = json.RawMessage(`{ "last_commit":"c", "changes": 2 }`) // the reflective path's
		}
		check(p)
	}
	// The real thing: the golden tree's files and symbols.
	res, err := ExtractGo(filepath.Join(testdataDir, "basic"), GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, node := range res.Graph.Nodes() {
		var v any
		switch node.Type {
		case TypeSymbol:
			var p SymbolPayload
			if err := json.Unmarshal(node.Payload, &p); err != nil {
				t.Fatal(err)
			}
			v = p
		case TypeFile:
			var p FilePayload
			if err := json.Unmarshal(node.Payload, &p); err != nil {
				t.Fatal(err)
			}
			v = p
		default:
			continue
		}
		n++
		if want := string(marshalCanonical(v)); string(node.Payload) != want {
			t.Errorf("%s: payload %s, want %s", node.Key, node.Payload, want)
		}
	}
	if n < 10 {
		t.Errorf("%d file and symbol payloads in the golden tree, want more", n)
	}
}
