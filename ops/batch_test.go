package ops

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goodBatch = `{"op":"put_node","key":"file:a.go","payload":{"lang":"go"}}
{"op":"put_edge","src":"file:a.go","rel":"defines","dst":"sym:a.F","weight":0.5,"payload":{"line":3}}

{"op":"put_kv","scope":"repo","namespace":"procedures","key":"test","payload":{"cmd":"make test"},"task_id":"t7"}
{"op":"add_rel","rel":"owns","bidirectional":true,"role":"structure"}
{"op":"put_edge","src":"team:core","rel":"owns","dst":"file:a.go"}
`

func TestParseBatchLineNumbers(t *testing.T) {
	_, lines, err := ParseBatch(strings.NewReader("\n" + `{"op":"del_node","key":"a:1","rev":3,"ts":"x"}` + "\n\n" + `{"op":"del_kv","scope":"s","namespace":"n","key":"k"}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{2, 4}, lines); d != "" {
		t.Errorf("line numbers (-want +got):\n%s", d)
	}
}

// TestBatchOpCheck: the checks both surfaces share, on ops decoded the way
// the MCP server decodes them (a JSON object per op) and the way the CLI
// reads them (a JSON line), with the same message.
func TestBatchOpCheck(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{`{"op":"put_edg","src":"a:1"}`, `unknown op "put_edg" (did you mean "put_edge"?)`},
		{`{"op":"del_node","key":"a:1","payload":1}`, `field "payload" is not allowed in del_node`},
		{`{"op":"put_edge","src":"a:1","rel":"calls"}`, `put_edge needs field "dst"`},
		{`{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2","weight":-1}`, "weight must be a finite number > 0, got -1"},
		{`{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2","weight":1e-50}`, "weight must be a finite number > 0, got 1e-50"},
		{`{"op":"put_kv","scope":"s","namespace":"n","key":"k","valid_from":"yesterday","payload":1}`, `field "valid_from": "yesterday" is not an RFC 3339 time`},
		{`{"op":"add_rel","rel":"uses","role":"dependency"}`, `role: unknown role "dependency"`},
		{`{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2","weight":2,"rev":9,"ts":"x"}`, ""},
	} {
		var op BatchOp
		if err := json.Unmarshal([]byte(tc.in), &op); err != nil {
			t.Fatal(err)
		}
		_, err := op.Check()
		_, _, lineErr := ParseBatch(strings.NewReader(tc.in))
		for _, e := range []error{err, lineErr} {
			switch {
			case tc.msg == "" && e != nil:
				t.Errorf("%s: %v", tc.in, e)
			case tc.msg != "" && (e == nil || !strings.Contains(e.Error(), tc.msg) || !errors.Is(e, ErrInvalid)):
				t.Errorf("%s: error %v, want %q (ErrInvalid)", tc.in, e, tc.msg)
			}
		}
	}
}

// FuzzParseBatch: any input either parses into operations whose fields
// satisfy their op's requirements, or fails with an ErrInvalid naming a
// line; it never panics.
func FuzzParseBatch(f *testing.F) {
	for _, s := range []string{
		goodBatch,
		`{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2","weight":1e-50}`,
		`{"op":"add_rel","rel":"x","bidirectional":true,"weight":2}`,
		"{\"op\":\"put_node\",\"key\":\"a:\xff\"}\n\n[1]",
		`{"op":"put_kv","scope":"s","namespace":"n","key":"k","payload":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ops, lines, err := ParseBatch(strings.NewReader(in))
		if err != nil {
			var le *LineError
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "batch line ") {
				t.Fatalf("error %q, want an ErrInvalid naming a line", err)
			}
			return
		}
		for i, op := range ops {
			spec, known := specOf(op.Op)
			if !known {
				t.Fatalf("line %d: unknown op %q accepted", lines[i], op.Op)
			}
			for _, f := range spec.required {
				if !op.present[f] {
					t.Fatalf("line %d: %s without %s accepted", lines[i], op.Op, f)
				}
			}
			if op.Weight != nil && !(op.weight > 0) {
				t.Fatalf("line %d: weight %v accepted as %v", lines[i], *op.Weight, op.weight)
			}
		}
	})
}
