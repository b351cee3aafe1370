package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// randomBatchLine draws one line of batch input: ops of every kind with
// random members (foreign, misspelt, duplicated, null, of the wrong type),
// strings with and without escapes, payloads whose strings hold braces,
// quotes and escapes, numbers in and out of range, random white space;
// some lines are not JSON or not objects.
func randomBatchLine(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	ws := func() string { return pick("", "", "", " ", "\t", " \r ") }
	str := func() string {
		return pick(`"file:a.go"`, `"sym:pkg.F"`, `""`, `"a\"b"`, `"caf\u00e9"`, `"café"`, `"x\\y"`, `"t\n"`, "\"raw\ttab\"", "\"raw\x01\"",
			`"2026-01-02T03:04:05Z"`, `"not a time"`, `"structure"`, `"calls"`, `"defines"`, `"tok{en}"`)
	}
	value := func(field string) string {
		switch r.IntN(12) {
		case 0:
			return "null"
		case 1:
			return pick("1", "true", "[1]", `{"a":1}`, "0.5")
		}
		switch field {
		case "payload":
			return pick(`{"lang":"go"}`, `{"s":"}{\"","n":[1,{"x":"]"}],"e":{}}`, `[]`, `7`, `"text"`, `{ "a" : [ true , null ] }`,
				`{"a":}`, `[1,]`, `tru`, `{"a" 1}`, `[1 2]`, "\"tab\there\"", `{"a":01}`) // not all JSON
		case "weight":
			return pick("0.5", "1", "2", "-1", "0", "1e400", "1E-3", `"2"`, "true", "3.25",
				"01", "+1", ".5", "1.", "0x10", "Inf", "1e", "1_0", "-", "1e+2", "-0.0") // not all JSON
		case "rev":
			return pick("3", "0", "-1", "1.5", "18446744073709551616", `"3"`, "03", "+3", "3.")
		case "bidirectional", "inhibitory":
			return pick("true", "false", `"true"`, "0")
		case "op":
			return pick(`"put_node"`, `"put_edge"`, `"del_node"`, `"del_edge"`, `"put_kv"`, `"del_kv"`, `"add_rel"`, `"put_nod"`, `""`, `"put\u005fnode"`)
		}
		return str()
	}
	if r.IntN(30) == 0 {
		return pick(`{"op":"put_node",`, `[1,2]`, `"x"`, `{}`, `{"op":"put_node","key":"a:1"} x`, `{"op":"put_node"`,
			`{"op":"put_node","key":"a:1"}}`, `{"op":"put_node","key":"a:1",}`, `{"op":"put_node" "key":"a:1"}`, `{,"op":"put_node"}`,
			`{"op":"put_node","key":"a:1"}{}`, `{} x`, `{"op":"put_node":"key"}`)
	}
	names := append([]string{"Key", "bogus", "op", "op", "op"}, batchFieldNames[:]...)
	var chosen []string
	wellFormed := r.IntN(2) == 0
	if wellFormed { // an op of the table with its required members and some others
		spec := opTable[r.IntN(len(opTable))]
		chosen = append([]string{"op"}, spec.required...)
		for _, f := range spec.fields {
			if r.IntN(3) == 0 {
				chosen = append(chosen, f)
			}
		}
		r.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
		value0 := value
		value = func(field string) string {
			if field == "op" {
				return `"` + spec.name + `"`
			}
			v := value0(field)
			for r.IntN(4) != 0 && (v == "null" || field != "payload" && strings.HasPrefix(v, "{")) {
				v = value0(field)
			}
			return v
		}
	}
	for n := r.IntN(7); n >= 0 && (!wellFormed || r.IntN(5) == 0); n-- {
		chosen = append(chosen, names[r.IntN(len(names))])
	}
	if !wellFormed && len(chosen) > 1 && r.IntN(2) == 0 {
		chosen = chosen[:len(chosen)-1-r.IntN(min(3, len(chosen)-1))]
	}
	var members []string
	for _, name := range chosen {
		quoted := `"` + name + `"`
		if r.IntN(40) == 0 {
			quoted = `"\u006b` + name[min(1, len(name)):] + `"` // an escape in the name
		}
		members = append(members, quoted+ws()+":"+ws()+value(name))
	}
	return ws() + "{" + ws() + strings.Join(members, ","+ws()) + ws() + "}" + ws()
}

// TestFastLineMatchesSlow: the decoder without reflection (decodeBatchLine,
// through lineParser) accepts exactly the lines encoding/json's path
// accepts and gives the same op or the same error, on random lines.
func TestFastLineMatchesSlow(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 4))
	var p lineParser
	fast := 0
	for i := 0; i < 50000; i++ {
		line := randomBatchLine(r)
		var got CheckedOp
		blank, gotErr := p.parse([]byte(line), &got)
		want, wantErr := parseBatchLineSlow([]byte(strings.TrimSpace(line)))
		if blank {
			t.Fatalf("%q: blank", line)
		}
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: error %v, encoding/json's %v", line, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if d := cmp.Diff(*want, got, cmp.AllowUnexported(CheckedOp{}, BatchOp{})); d != "" {
			t.Fatalf("%q: op differs (-encoding/json +fast):\n%s", line, d)
		}
		var op BatchOp
		var w float64
		if _, err := decodeBatchLine(strings.TrimSpace(line), &op, &w); err == nil {
			fast++
		}
	}
	if fast < 1000 {
		t.Errorf("only %d good lines took the fast path", fast)
	}
	t.Logf("%d good lines decoded without encoding/json", fast)
}

// TestFieldOf: fieldOf finds every member by its name and nothing else
// (names of other lengths, prefixes, other case, near misses).
func TestFieldOf(t *testing.T) {
	for f, name := range batchFieldNames {
		if got, ok := fieldOf(name); !ok || got != batchField(f) {
			t.Errorf("fieldOf(%q) = %d, %v; want %d", name, got, ok, f)
		}
		for _, other := range []string{name[:len(name)-1], name + "s", strings.ToUpper(name), "x" + name[1:]} {
			if slices.Contains(batchFieldNames[:], other) {
				continue
			}
			if got, ok := fieldOf(other); ok {
				t.Errorf("fieldOf(%q) = %d, want none", other, got)
			}
		}
	}
	if _, ok := fieldOf(""); ok {
		t.Error(`fieldOf("") found a member`)
	}
}
