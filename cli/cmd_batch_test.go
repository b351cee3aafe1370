package cli

import (
	"fmt"
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
		{"bad role", `{"op":"add_rel","rel":"uses","role":"dependency"}`, ExitUsage, `batch line 7: role: unknown role "dependency"`},
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

// bulkLines is a JSON Lines load of puts: repeated keys, one put that
// changes nothing, payloads in non-canonical spelling, a hub with more
// edges than a chunk holds.
func bulkLines() string {
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, `{"op":"put_edge","src":"sym:s%d","rel":"calls","dst":"sym:hub"}`+"\n", i)
		if i%3 == 0 {
			fmt.Fprintf(&b, `{"op":"put_node","key":"sym:s%d","payload":{"b": %d, "a": "x"}}`+"\n", i, i)
		}
	}
	b.WriteString(`{"op":"put_edge","src":"sym:s1","rel":"calls","dst":"sym:hub"}` + "\n")                            // no change
	b.WriteString(`{"op":"put_edge","src":"sym:s2","rel":"calls","dst":"sym:hub","weight":0.5,"run_id":"r9"}` + "\n") // a change
	b.WriteString(`{"op":"put_node","key":"sym:hub","type":"symbol","scope":"repo"}` + "\n")
	return b.String()
}

// TestBatchBulkMatchesBatch: batch --bulk into an empty store and a plain
// batch give the same snapshot hash, operations and answers; check passes.
func TestBatchBulkMatchesBatch(t *testing.T) {
	lines := bulkLines()
	plain, bulk := newStore(t), newStore(t)
	r1 := runEnv(t, lines, nil, "--db", plain, "--json", "batch", "--run", "r1")
	r2 := runEnv(t, lines, nil, "--db", bulk, "--json", "batch", "--run", "r1", "--bulk")
	if r1.Code != 0 || r2.Code != 0 {
		t.Fatalf("batch: exit %d %q; --bulk: exit %d %q", r1.Code, r1.Stderr, r2.Code, r2.Stderr)
	}
	c1, c2 := jsonLines(t, r1.Stdout)[0], jsonLines(t, r2.Stdout)[0]
	if c1["rev"] != c2["rev"] || c1["ops"] != c2["ops"] {
		t.Errorf("batch committed %v, --bulk %v", c1, c2)
	}
	hash := func(db string) string {
		f := exportTo(t, db)
		return strings.Fields(ok(t, "snapshot", "hash", f))[0]
	}
	if hash(plain) != hash(bulk) {
		t.Error("snapshot hash of the bulk-loaded store differs")
	}
	for _, args := range [][]string{{"diff-since", "0"}, {"get-in", "sym:hub"}, {"get-out", "sym:s2"}, {"get-node", "sym:s3"}} {
		a := ok(t, append([]string{"--db", plain, "--json"}, args...)...)
		b := ok(t, append([]string{"--db", bulk, "--json"}, args...)...)
		if d := cmp.Diff(normTS(a), normTS(b)); d != "" {
			t.Errorf("%v differs (-batch +bulk):\n%s", args, d)
		}
	}
	ok(t, "--db", bulk, "check")
	// Into a store that already holds edges: the ordinary path, same result.
	r3 := runEnv(t, lines, nil, "--db", bulk, "--json", "batch", "--run", "r2", "--bulk")
	r4 := runEnv(t, lines, nil, "--db", plain, "--json", "batch", "--run", "r2")
	if r3.Code != 0 || r4.Code != 0 || normTS(r3.Stdout) != normTS(r4.Stdout) {
		t.Errorf("second load: --bulk %d %q %q, batch %d %q", r3.Code, r3.Stdout, r3.Stderr, r4.Code, r4.Stdout)
	}
}

// normTS blanks commit times, which differ between two stores.
func normTS(s string) string { return tsPattern.ReplaceAllString(s, "TS") }

func TestBatchBulkRefusals(t *testing.T) {
	db := newStore(t)
	r := runEnv(t, `{"op":"put_node","key":"a:1"}`+"\n"+`{"op":"del_node","key":"a:1"}`+"\n", nil, "--db", db, "batch", "--bulk")
	if r.Code != ExitUsage || r.Stderr != "memctl: batch line 2: --bulk takes only put_node and put_edge, not del_node\n" {
		t.Errorf("del_node in a bulk load: exit %d, %q", r.Code, r.Stderr)
	}
	r = runEnv(t, `{"op":"put_node","key":"a:1"}`+"\n\n"+`{"op":"put_node","key":"a:2","payload":{"a":1,"a":2}}`+"\n", nil, "--db", db, "batch", "--bulk")
	if r.Code == 0 || !strings.HasPrefix(r.Stderr, "memctl: batch line 3 (put_node): ") {
		t.Errorf("bad payload in a bulk load: exit %d, %q", r.Code, r.Stderr)
	}
	if out := ok(t, "--db", db, "--json", "stats"); !strings.Contains(out, `"revision":0`) {
		t.Errorf("a refused bulk load wrote something: %s", out)
	}
}
