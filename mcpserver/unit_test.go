package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestReadLine(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 100) + "\nafter\r\nlast"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	var got []string
	for {
		line, tooLong, err := readLine(r, 50)
		if tooLong {
			got = append(got, "<too long>")
		} else if len(line) > 0 {
			got = append(got, string(line))
		}
		if err != nil {
			break
		}
	}
	if d := cmp.Diff([]string{"short", "<too long>", "after", "last"}, got); d != "" {
		t.Error(d)
	}
}

func TestCheckSurrogates(t *testing.T) {
	for in, ok := range map[string]bool{
		`"plain"`:                    true,
		`"\u00e9\n\\u d800"`:         true, // an escaped backslash, then text
		`"\ud83d\ude00"`:             true, // a pair
		`"\\ud800"`:                  true, // not an escape: a backslash, then "ud800"
		`"\ud800"`:                   false,
		`"\udc00"`:                   false,
		`"\ud83d\u0041"`:             false,
		`"\ud83d"`:                   false,
		`{"a":"\ud83d\ude00\udfff"}`: false,
	} {
		err := checkSurrogates([]byte(in))
		if (err == nil) != ok {
			t.Errorf("%s: err %v, want ok=%v", in, err, ok)
		}
	}
}

func TestDecodeLines(t *testing.T) {
	var out bytes.Buffer
	c := &lineConn{out: &out, closed: make(chan struct{})}
	for _, tc := range []struct {
		line string
		pass bool
		resp string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true, ""},
		{`   `, false, ""},
		{`nope`, false, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`},
		{`{"jsonrpc":"2.0","id":"x","method":"a","params":{"k":"\udc00"}}`, false, `{"jsonrpc":"2.0","id":"x","error":{"code":-32700,`},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, true, ""}, // a response: the SDK's to handle
		// Neither a request nor a response (JSON-RPC 2.0 §4, §5): invalid.
		{`{"jsonrpc":"2.0","id":7}`, false, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,`},
		{`{"jsonrpc":"2.0","id":null}`, false, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{`[1]`, false, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"{\"a\":\"\xff\"}", false, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: message is not valid UTF-8"`},
	} {
		out.Reset()
		_, pass := c.decode([]byte(tc.line), false, 100)
		if pass != tc.pass || !strings.HasPrefix(out.String(), tc.resp) || (tc.resp == "") != (out.Len() == 0) {
			t.Errorf("%q: passed %v, answered %q", tc.line, pass, out.String())
		}
	}
}

func TestRelationName(t *testing.T) {
	for in, want := range map[string]string{
		"works_at":              "works_at",
		"calls":                 "calls",
		"works at":              "works_at",
		"is part of / member":   "is_part_of_member",
		"a.b-c":                 "a.b-c",
		strings.Repeat("x", 64): strings.Repeat("x", 64),
		strings.Repeat("x", 65): strings.Repeat("x", 55) + "_",
		"住在":                    "_",
		"likes café":            "likes_caf_",
		"  ":                    "_",
	} {
		got, err := relationName(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if len(got) > 64 || !validName(got) {
			t.Errorf("%q -> %q: not a valid relation name", in, got)
		}
		if strings.HasSuffix(want, "_") && want != "works_at" {
			// lossy: the name ends in _ and 8 hex digits of a hash
			if !strings.HasPrefix(got, want) || len(got) != len(want)+8 {
				t.Errorf("%q -> %q, want %q + hash", in, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
	a, _ := relationName("住在")
	b, _ := relationName("拥有")
	if a == b {
		t.Errorf("two non-ASCII relationTypes map to one relation %q", a)
	}
	// The reference accepts an empty relationType: it maps to "_" + hash.
	if got, err := relationName(""); err != nil || got != "_811c9dc5" {
		t.Errorf(`relationName(""): %q, %v`, got, err)
	}
}

func validName(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

func TestObservationsPayload(t *testing.T) {
	obs := []observation{{Text: "a", Added: "t1", Rev: 1}, {Text: "b"}}
	for _, tc := range []struct{ in, want string }{
		{``, `{"observations":[{"text":"a","added":"t1","rev":1},{"text":"b"}]}`},
		{`null`, `{"observations":[{"text":"a","added":"t1","rev":1},{"text":"b"}]}`},
		{`{"z":1, "a":[1,2]}`, `{"z":1,"a":[1,2],"observations":[{"text":"a","added":"t1","rev":1},{"text":"b"}]}`},
		{`{"observations":["old"],"k":{"n":12345678901234567890}}`, `{"observations":[{"text":"a","added":"t1","rev":1},{"text":"b"}],"k":{"n":12345678901234567890}}`},
	} {
		got, err := withObservations("k", []byte(tc.in), obs)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.in, got, err, tc.want)
		}
		if back := observations(got); !cmp.Equal(back, obs) {
			t.Errorf("%s: read back %v", got, back)
		}
	}
	for _, bad := range []string{`[1]`, `"s"`, `3`} {
		if _, err := withObservations("k", []byte(bad), obs); err == nil {
			t.Errorf("%s: observations added to a non-object", bad)
		}
	}
	if got := observations([]byte(`{"observations":["x",{"text":"y","added":"t"},5]}`)); !cmp.Equal(got, []observation{{Text: "x"}, {Text: "y", Added: "t"}}) {
		t.Errorf("mixed observations: %v", got)
	}
	if rt := relationType("works_at", json.RawMessage(`{"relationType":"works at"}`)); rt != "works at" {
		t.Errorf("relationType from payload: %q", rt)
	}
	if rt := relationType("calls", json.RawMessage(`[1]`)); rt != "calls" {
		t.Errorf("relationType of a non-object payload: %q", rt)
	}
}

func TestSchemaMessage(t *testing.T) {
	for in, want := range map[string]string{
		`validating root: validating /properties/entities: validating /properties/entities/items: validating /properties/entities/items/properties/observations: type: 5 has type "integer", want "array"`: `entities[].observations: type: 5 has type "integer", want "array"`,
		`validating root: required: missing properties: ["dst"]`: `arguments: required: missing properties: ["dst"]`,
	} {
		if got := schemaMessage(errString(in)); got != want {
			t.Errorf("%s\n got %s\nwant %s", in, got, want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestRestoreID: the client's id goes back into responses the SDK encoded
// (a result with escapes and nesting, an error), byte for byte what
// decoding the response and writing it again gives (restoreIDDecoded, the
// path taken for any other shape), and the result or error unchanged.
func TestRestoreID(t *testing.T) {
	syn := "memctl-42"
	id, err := jsonrpc.MakeID(syn)
	if err != nil {
		t.Fatal(err)
	}
	results := []*jsonrpc.Response{
		{ID: id, Result: json.RawMessage(`{"content":[{"type":"text","text":"{\"a\":\"x\\\"y}\"}"}],"structuredContent":{"a":"x\"y}","n":[1,2.5e300,{"id":"memctl-42"}]}}`)},
		{ID: id, Result: json.RawMessage(`{}`)},
		{ID: id, Error: &jsonrpc.Error{Code: -32602, Message: `bad "id":"memctl-42"`}},
	}
	for _, resp := range results {
		b, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []string{`7`, `9223372036854775807`, `1.5`, `-0`, `"x\"y"`, `"memctl-42"`} {
			got, err := restoreID(b, syn, json.RawMessage(raw))
			if err != nil {
				t.Fatalf("%s, id %s: %v", b, raw, err)
			}
			want, err := restoreID(b, "not-the-id", json.RawMessage(raw)) // the prefix does not match: decoded
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("id %s:\n got  %s\n want %s", raw, got, want)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			if string(m["id"]) != raw {
				t.Errorf("%s: id %s, want %s", got, m["id"], raw)
			}
			if resp.Error == nil && string(m["result"]) != string(resp.Result) {
				t.Errorf("%s: result changed", got)
			}
			if resp.Error != nil && !strings.Contains(string(m["error"]), `"code":-32602`) {
				t.Errorf("%s: error changed", got)
			}
		}
	}
}

// TestResultLine: a result as the SDK encodes it (NewResponse: an encoder
// that does not escape HTML, its newline trimmed) goes out around the
// client's id byte for byte as EncodeMessage and restoreID write it: tool
// results with HTML characters, line and paragraph separators, escapes and
// non-ASCII text in their text and structured content, plain values, for
// ids of every shape.
func TestResultLine(t *testing.T) {
	syn := "memctl-7"
	id, err := jsonrpc.MakeID(syn)
	if err != nil {
		t.Fatal(err)
	}
	sdkEncode := func(v any) json.RawMessage { // the SDK's jsonMarshal
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimRight(buf.Bytes(), "\n")
	}
	texts := []string{"", "plain", `a <b> & "c" \ d`, "line\u2028sep\u2029", "tab\tnl\n\x01", "中文 é 😀", `{"k":[1, 2]}`}
	var results []json.RawMessage
	for _, text := range texts {
		sc, _ := json.Marshal(map[string]any{"markdown": text, "n": []any{1, 2.5, nil, true}, "nested": map[string]string{"t": text}})
		results = append(results,
			sdkEncode(&mcp.CallToolResult{StructuredContent: json.RawMessage(sc), Content: []mcp.Content{&mcp.TextContent{Text: text}}}),
			sdkEncode(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}),
			sdkEncode(map[string]string{"s": text}))
	}
	results = append(results, sdkEncode(42), sdkEncode([]int{}), sdkEncode("x"))
	for _, result := range results {
		b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result})
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []string{`7`, `9223372036854775807`, `1.5`, `"x\"y"`, `"memctl-7"`, `null`} {
			want, err := restoreID(b, syn, json.RawMessage(raw))
			if err != nil {
				t.Fatal(err)
			}
			if got := resultLine(json.RawMessage(raw), result); !bytes.Equal(got, want) {
				t.Fatalf("id %s:\n got  %s\n want %s", raw, got, want)
			}
		}
	}
}
