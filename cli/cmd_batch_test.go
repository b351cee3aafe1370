package cli

import (
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

func TestBatchAppliesOneRevision(t *testing.T) {
	db := newStore(t)
	r := runEnv(t, goodBatch, nil, "--db", db, "batch", "--run", "r1")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("batch: exit %d: %s", r.Code, r.Stderr)
	}
	rev := revOf(t, r.Stdout)
	if want := "rev " + revString(rev) + " (5 operations)\n"; r.Stdout != want {
		t.Errorf("batch printed %q, want %q", r.Stdout, want)
	}
	ops := jsonLines(t, ok(t, "--db", db, "--json", "diff-since", "0"))
	if len(ops) != 5 {
		t.Fatalf("diff-since shows %d operations, want 5", len(ops))
	}
	for _, op := range ops {
		if op["rev"] != revN(rev) {
			t.Errorf("operation %v not in revision %d", op, rev)
		}
		if op["run_id"] != "r1" {
			t.Errorf("operation %v does not inherit --run r1", op)
		}
	}
	diffJSON(t, ok(t, "--db", db, "--json", "get-kv", "repo", "procedures", "test"), []map[string]any{
		kv("repo", "procedures", "test", map[string]any{"cmd": "make test"}, rev, "r1", "t7"),
	})
	withPayload := edge("file:a.go", "defines", "sym:a.F", rev, "0.5")
	withPayload["payload"] = map[string]any{"line": n("3")}
	diffJSON(t, ok(t, "--db", db, "--json", "get-out", "file:a.go"), []map[string]any{withPayload})
	diffJSON(t, ok(t, "--db", db, "--json", "get-in", "file:a.go"), []map[string]any{edge("team:core", "owns", "file:a.go", rev, "1")})
	// The role travels: batch → store → diff-since → rel list.
	if ops[3]["op"] != "add_rel" || ops[3]["role"] != "structure" {
		t.Errorf("diff-since add_rel = %v, want role structure", ops[3])
	}
	rels := jsonLines(t, ok(t, "--db", db, "--json", "rel", "list"))
	if last := rels[len(rels)-1]; last["name"] != "owns" || last["role"] != "structure" {
		t.Errorf("rel list last = %v", last)
	}
}

func TestBatchAllOrNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  string // appended after goodBatch's 6 lines as line 7
		code int
		msg  string
	}{
		{"not json", `{"op":"put_node",`, ExitUsage, "batch line 7: not a JSON object"},
		{"not an object", `[1,2]`, ExitUsage, "batch line 7: not a JSON object"},
		{"no op", `{"key":"a:1"}`, ExitUsage, `batch line 7: missing "op"`},
		{"unknown op", `{"op":"put_edg","src":"a:1"}`, ExitUsage, `batch line 7: unknown op "put_edg" (did you mean "put_edge"?)`},
		{"foreign field", `{"op":"del_node","key":"a:1","payload":1}`, ExitUsage, `batch line 7: field "payload" is not allowed in del_node`},
		{"missing field", `{"op":"put_edge","src":"a:1","rel":"calls"}`, ExitUsage, `batch line 7: put_edge needs field "dst"`},
		{"wrong type", `{"op":"put_node","key":7}`, ExitUsage, `batch line 7: field "key" must be a JSON string, not number`},
		{"bad weight", `{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2","weight":-1}`, ExitUsage, "batch line 7: weight must be a finite number > 0"},
		{"kv without payload", `{"op":"put_kv","scope":"s","namespace":"n","key":"k"}`, ExitUsage, `batch line 7: put_kv needs field "payload"`},
		{"invalid utf-8", "{\"op\":\"put_node\",\"key\":\"a:\xff\"}", ExitUsage, "batch line 7: not valid UTF-8"},
		// Found by the store, inside the transaction: still nothing written.
		{"unknown relation", `{"op":"put_edge","src":"a:1","rel":"cals","dst":"a:2"}`, ExitUsage, `batch line 7 (put_edge): unknown relation "cals"`},
		{"delete missing", `{"op":"del_edge","src":"a:1","rel":"calls","dst":"a:2"}`, ExitNotFound, "batch line 7 (del_edge)"},
		{"relation twice", `{"op":"add_rel","rel":"owns"}`, -1, "batch line 7 (add_rel)"},
		{"bad role", `{"op":"add_rel","rel":"uses","role":"dependency"}`, ExitUsage, `batch line 7 (add_rel): unknown role "dependency"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newStore(t)
			before := fingerprint(t, db)
			r := runEnv(t, goodBatch+tc.bad+"\n", nil, "--db", db, "batch")
			if tc.code < 0 {
				if r.Code == 0 {
					t.Fatalf("batch succeeded")
				}
				tc.code = r.Code
			}
			wantFailure(t, r, tc.code, tc.msg)
			if after := fingerprint(t, db); after != before {
				t.Errorf("failed batch changed the store:\n%s", after)
			}
		})
	}
}

func TestBatchEmpty(t *testing.T) {
	db := newStore(t)
	r := runEnv(t, "\n  \n", nil, "--db", db, "batch")
	if r.Code != 0 || r.Stdout != "rev 0 (no change)\n" {
		t.Errorf("empty batch: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// diff-since --json is batch input: replaying a store's history into an
// empty store reproduces its state.
func TestBatchReplaysDiffSince(t *testing.T) {
	src := newStore(t)
	ok(t, "--db", src, "rel", "add", "owns", "--weight", "0.5", "--bidirectional", "--run", "r0")
	ok(t, "--db", src, "rel", "add", "blocks", "--inhibitory")
	ok(t, "--db", src, "put-edge", "team:core", "owns", "file:a.go")
	edgeGraph(t, src)
	ok(t, "--db", src, "put-node", "file:a.go", "--payload", `{"x":[1,2]}`, "--scope", "repo", "--run", "r3")
	ok(t, "--db", src, "put-kv", "repo", "decisions", "errors", `{"rule":"wrap"}`, "--task", "t1")
	ok(t, "--db", src, "del-edge", "file:a.go", "defines", "sym:a.G")
	ok(t, "--db", src, "del-kv", "repo", "decisions", "errors")
	ok(t, "--db", src, "put-kv", "repo", "decisions", "style", `"gofmt"`)

	dst := newStore(t)
	history := ok(t, "--db", src, "--json", "diff-since", "0")
	if r := runEnv(t, history, nil, "--db", dst, "batch"); r.Code != 0 {
		t.Fatalf("replay: exit %d: %s", r.Code, r.Stderr)
	}
	for _, args := range [][]string{
		{"get-out", "file:a.go"}, {"get-in", "sym:a.F"}, {"get-out", "sym:a.F"},
		{"list-kv", "repo", "decisions"}, {"get-node", "file:a.go"}, {"rel", "list"}, {"get-in", "file:a.go"},
	} {
		want := stripRevs(jsonLines(t, ok(t, append([]string{"--db", src, "--json"}, args...)...)))
		got := stripRevs(jsonLines(t, ok(t, append([]string{"--db", dst, "--json"}, args...)...)))
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s after replay (-source +replica):\n%s", strings.Join(args, " "), d)
		}
	}
}

// stripRevs drops revision numbers: a replay commits in one revision.
func stripRevs(objs []map[string]any) []map[string]any {
	for _, o := range objs {
		delete(o, "rev")
	}
	return objs
}

func TestParseBatchLineNumbers(t *testing.T) {
	ops, err := parseBatch(strings.NewReader("\n" + `{"op":"del_node","key":"a:1","rev":3,"ts":"x"}` + "\n\n" + `{"op":"del_kv","scope":"s","namespace":"n","key":"k"}`))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, op := range ops {
		lines = append(lines, op.line)
	}
	if d := cmp.Diff([]int{2, 4}, lines); d != "" {
		t.Errorf("line numbers (-want +got):\n%s", d)
	}
}

// TestBatchEmptyJSON: a batch that commits nothing prints {"rev":0} like
// every write that changed nothing (SPEC §6.2), with no "ops" or "ts".
func TestBatchEmptyJSON(t *testing.T) {
	db := initStore(t)
	r := runEnv(t, "", nil, "--db", db, "--json", "batch")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	diffJSON(t, r.Stdout, []map[string]any{{"rev": n("0")}})
}
