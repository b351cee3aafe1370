package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// records decodes the array under key of a tool result into objects.
func records(t testing.TB, b []byte, key string) []map[string]any {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var out []map[string]any
	if err := json.Unmarshal(m[key], &out); err != nil {
		t.Fatalf("%s: %v: %s", key, err, m[key])
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out
}

func orEmpty(recs []map[string]any) []map[string]any {
	if recs == nil {
		return []map[string]any{}
	}
	return recs
}

func diff(t testing.TB, what string, got, want any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: MCP (+) vs CLI (-):\n%s", what, d)
	}
}

type commit struct {
	Rev uint64 `json:"rev"`
	TS  string `json:"ts"`
}

// TestStoreToolsMatchCLI writes a store through the MCP tools and reads it
// back through every read tool, comparing each answer with the memctl
// CLI's --json answer on the same store.
func TestStoreToolsMatchCLI(t *testing.T) {
	db := newStore(t)
	s := startServer(t, db, "--run", "run-s", "--task", "index", "--scope", "repo")

	var c commit
	var revs []commit
	put := func(name string, args map[string]any) {
		t.Helper()
		s.ok(name, args, &c)
		if c.Rev != uint64(len(revs)+1) {
			t.Fatalf("%s committed rev %d, want %d", name, c.Rev, len(revs)+1)
		}
		revs = append(revs, c)
	}
	put("put_node", map[string]any{"key": "file:a.go", "payload": json.RawMessage(`{"lang":"go","big":12345678901234567890,"b":1,"a":2}`)})
	put("put_node", map[string]any{"key": "sym:a.F", "type": "func", "run_id": "run-2", "task_id": "refactor"})
	put("put_edge", map[string]any{"src": "file:a.go", "rel": "defines", "dst": "sym:a.F"})
	put("put_edge", map[string]any{"src": "sym:a.F", "rel": "calls", "dst": "sym:b.G", "weight": 0.3, "payload": map[string]any{"line": 42}})
	put("put_edge", map[string]any{"src": "sym:a.F", "rel": "references", "dst": "file:a.go"})
	put("put_kv", map[string]any{"namespace": "decisions", "key": "errors", "payload": map[string]any{"rule": "wrap with %w"}})
	put("put_kv", map[string]any{"namespace": "decisions", "key": "errors", "payload": map[string]any{"rule": "wrap with %w", "v": 2}, "task_id": "review"})
	put("put_kv", map[string]any{"scope": "other", "namespace": "decisions", "key": "x", "payload": "plain string"})
	var br struct {
		Rev uint64 `json:"rev"`
		Ops int    `json:"ops"`
	}
	s.ok("batch", map[string]any{"run_id": "run-b", "ops": []map[string]any{
		{"op": "add_rel", "rel": "mentions", "weight": 0.5, "bidirectional": true},
		{"op": "put_node", "key": "doc:readme", "payload": map[string]any{"title": "README"}},
		{"op": "put_edge", "src": "doc:readme", "rel": "mentions", "dst": "sym:a.F"},
		{"op": "put_edge", "src": "doc:readme", "rel": "mentions", "dst": "file:a.go", "weight": 2},
		{"op": "put_kv", "scope": "repo", "namespace": "procedures", "key": "release", "payload": []int{1, 2}},
	}}, &br)
	if br.Rev != uint64(len(revs)+1) || br.Ops != 5 {
		t.Fatalf("batch: %+v", br)
	}
	revs = append(revs, commit{Rev: br.Rev})
	put("delete_edge", map[string]any{"src": "sym:a.F", "rel": "references", "dst": "file:a.go"})
	put("put_node", map[string]any{"key": "sym:gone", "payload": 1})
	put("delete_node", map[string]any{"key": "sym:gone"})
	put("delete_kv", map[string]any{"scope": "other", "namespace": "decisions", "key": "x"})
	put("put_node", map[string]any{"key": "file:a.go", "payload": json.RawMessage(`{"lang":"go","v":2}`)})
	last := len(revs)

	// Payloads come back in the store's canonical form (SPEC §2: members
	// sorted, numbers as written, so one beyond float64 survives).
	var node map[string]any
	b, _ := s.call("get_node", map[string]any{"key": "file:a.go", "at_rev": 1})
	if !strings.Contains(string(b), `"payload":{"a":2,"b":1,"big":12345678901234567890,"lang":"go"}`) {
		t.Errorf("payload not returned in canonical form: %s", b)
	}

	keys := []string{"file:a.go", "sym:a.F", "sym:b.G", "doc:readme", "sym:gone"}
	for _, key := range keys {
		for _, at := range []int{0, 1, 3, 5, 9, last - 1} {
			args := map[string]any{"key": key}
			cliArgs := []string{key}
			if at > 0 {
				args["at_rev"] = at
				cliArgs = append(cliArgs, "--at-rev", fmt.Sprint(at))
			}
			what := fmt.Sprintf("%s at %d", key, at)
			_, _, code := tryCLI(t, "", append([]string{"--db", db, "get-node"}, cliArgs...)...)
			b, isErr := s.call("get_node", args)
			switch {
			case code == 1 && isErr:
				if !strings.Contains(string(b), "not found") {
					t.Errorf("get_node %s: %s", what, b)
				}
			case code == 0 && !isErr:
				diff(t, "get_node "+what, asMap(t, b), cliJSON(t, db, append([]string{"get-node"}, cliArgs...)...)[0])
				node = asMap(t, b)
			default:
				t.Errorf("get_node %s: CLI exit %d, MCP error %v (%s)", what, code, isErr, b)
			}
			for _, dir := range []string{"out", "in"} {
				for _, rel := range []string{"", "mentions", "calls"} {
					a := map[string]any{"key": key}
					ca := append([]string{"get-" + dir}, cliArgs...)
					for k, v := range args {
						a[k] = v
					}
					if rel != "" {
						a["rel"] = rel
						ca = append(ca, "--rel", rel)
					}
					var got []byte
					got, isErr = s.call("get_"+dir, a)
					if isErr {
						t.Fatalf("get_%s %s: %s", dir, what, got)
					}
					diff(t, fmt.Sprintf("get_%s %s rel %q", dir, what, rel), records(t, got, "edges"), orEmpty(cliEdges(t, db, ca...)))
				}
			}
		}
	}
	_ = node

	// at_time reads the revision committed at or before the time.
	b, _ = s.call("get_node", map[string]any{"key": "file:a.go", "at_time": revs[2].TS})
	diff(t, "get_node at_time", asMap(t, b), cliJSON(t, db, "get-node", "file:a.go", "--at", revs[2].TS)[0])

	// kv entries.
	for _, at := range []int{0, 6, 7} {
		a := map[string]any{"namespace": "decisions", "key": "errors"}
		ca := []string{"get-kv", "repo", "decisions", "errors"}
		la := map[string]any{"namespace": "decisions"}
		cla := []string{"list-kv", "repo", "decisions"}
		if at > 0 {
			a["at_rev"], la["at_rev"] = at, at
			ca = append(ca, "--at-rev", fmt.Sprint(at))
			cla = append(cla, "--at-rev", fmt.Sprint(at))
		}
		b, _ := s.call("get_kv", a)
		diff(t, fmt.Sprintf("get_kv at %d", at), asMap(t, b), cliJSON(t, db, ca...)[0])
		b, _ = s.call("list_kv", la)
		diff(t, fmt.Sprintf("list_kv at %d", at), records(t, b, "entries"), orEmpty(cliJSON(t, db, cla...)))
	}
	b, _ = s.call("list_kv", map[string]any{"scope": "repo", "namespace": "procedures"})
	diff(t, "list_kv procedures", records(t, b, "entries"), orEmpty(cliJSON(t, db, "list-kv", "repo", "procedures")))

	// diff_since, whole and filtered, and paged.
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"since_rev": 0}, []string{"diff-since", "0"}},
		{map[string]any{"since_rev": 4}, []string{"diff-since", "4"}},
		{map[string]any{"since_rev": 0, "run_id": "run-b"}, []string{"diff-since", "0", "--run", "run-b"}},
		{map[string]any{"since_rev": 0, "task_id": "review"}, []string{"diff-since", "0", "--task", "review"}},
		{map[string]any{"since_time": revs[3].TS}, []string{"diff-since", revs[3].TS}},
	} {
		b, _ := s.call("diff_since", tc.args)
		diff(t, fmt.Sprintf("diff_since %v", tc.args), records(t, b, "ops"), orEmpty(cliJSON(t, db, tc.cli...)))
	}
	var paged []map[string]any
	args := map[string]any{"since_rev": 0, "limit": 3}
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatal("diff_since paging does not end")
		}
		b, _ := s.call("diff_since", args)
		paged = append(paged, records(t, b, "ops")...)
		cur, _ := field(t, b, "next_cursor").(string)
		if cur == "" {
			break
		}
		args = map[string]any{"cursor": cur, "limit": 3}
	}
	diff(t, "diff_since paged by 3", paged, cliJSON(t, db, "diff-since", "0"))

	// history: the log's operations on one entity.
	all := cliJSON(t, db, "diff-since", "0")
	pick := func(keep func(map[string]any) bool) []map[string]any {
		out := []map[string]any{}
		for _, op := range all {
			if keep(op) {
				out = append(out, op)
			}
		}
		return out
	}
	b, _ = s.call("history", map[string]any{"key": "file:a.go"})
	diff(t, "history node", records(t, b, "versions"), pick(func(op map[string]any) bool {
		return (op["op"] == "put_node" || op["op"] == "del_node") && op["key"] == "file:a.go"
	}))
	b, _ = s.call("history", map[string]any{"key": "sym:gone"})
	if n := len(records(t, b, "versions")); n != 2 {
		t.Errorf("history of a deleted node: %d versions, want 2 (put, delete)", n)
	}
	b, _ = s.call("history", map[string]any{"namespace": "decisions", "key": "errors"})
	diff(t, "history kv", records(t, b, "versions"), pick(func(op map[string]any) bool {
		return strings.HasSuffix(op["op"].(string), "_kv") && op["scope"] == "repo" && op["namespace"] == "decisions" && op["key"] == "errors"
	}))
	b, _ = s.call("history", map[string]any{"src": "sym:a.F", "rel": "references", "dst": "file:a.go"})
	diff(t, "history edge", records(t, b, "versions"), pick(func(op map[string]any) bool {
		return strings.HasSuffix(op["op"].(string), "_edge") && op["src"] == "sym:a.F" && op["rel"] == "references"
	}))
	b, _ = s.call("history", map[string]any{"key": "file:a.go", "limit": 1})
	if v := records(t, b, "versions"); len(v) != 1 || v[0]["rev"] != float64(last) || field(t, b, "truncated") != true {
		t.Errorf("history limit 1: %s", b)
	}

	// Provenance: server defaults, overridden per call.
	n := cliJSON(t, db, "get-node", "sym:a.F")[0]
	if n["run_id"] != "run-2" || n["task_id"] != "refactor" || n["scope"] != "repo" {
		t.Errorf("provenance of sym:a.F: %v", n)
	}
	n = cliJSON(t, db, "get-node", "doc:readme")[0]
	if n["run_id"] != "run-b" || n["task_id"] != "index" {
		t.Errorf("provenance of a batch op: %v", n)
	}

	// Relations, stats, check.
	b, _ = s.call("list_relations", map[string]any{})
	diff(t, "list_relations", records(t, b, "relations"), cliJSON(t, db, "rel", "list"))
	b, _ = s.call("stats", map[string]any{})
	st, cst := asMap(t, b), cliJSON(t, db, "stats")[0]
	delete(st, "map_size")
	delete(cst, "map_size")
	diff(t, "stats", st, cst)
	b, _ = s.call("check", map[string]any{})
	chk := cliJSON(t, db, "check")
	sum := chk[len(chk)-1]
	var missing []any
	for _, f := range chk {
		if f["kind"] == "missing_node" {
			missing = append(missing, f["key"])
		}
	}
	got := asMap(t, b)
	if got["ok"] != sum["ok"] || got["missing_nodes"] != sum["missing_nodes"] || len(got["problems"].([]any)) != 0 {
		t.Errorf("check: MCP %v, CLI %v", got, sum)
	}
	diff(t, "check missing nodes", got["missing_nodes_listed"], missing)

	// add_relation, then the relation is usable.
	var added struct {
		Rev  uint64 `json:"rev"`
		ID   uint32 `json:"id"`
		Name string `json:"name"`
	}
	s.ok("add_relation", map[string]any{"name": "owns", "default_weight": 0.25, "inhibitory": true}, &added)
	if added.ID != 12 || added.Name != "owns" {
		t.Errorf("add_relation: %+v", added)
	}
	s.ok("put_edge", map[string]any{"src": "doc:readme", "rel": "owns", "dst": "file:a.go"}, &c)
	e := cliEdges(t, db, "get-out", "doc:readme", "--rel", "owns")
	if len(e) != 1 || e[0]["weight"] != 0.25 {
		t.Errorf("edge of an added relation: %v", e)
	}
	// A role given is stored (rel list shows it); the default is memory;
	// an unknown role is a tool error that registers nothing.
	s.ok("add_relation", map[string]any{"name": "wraps", "role": "usage"}, nil)
	s.fails("add_relation", map[string]any{"name": "bogus", "role": "vibes"}, "role")
	s.ok("batch", map[string]any{"ops": []map[string]any{{"op": "add_rel", "rel": "co_edited", "role": "history"}}}, nil)
	s.fails("batch", map[string]any{"ops": []map[string]any{{"op": "add_rel", "rel": "bogus", "role": "vibes"}}}, "op 1: role")
	roleOf := map[string]any{}
	for _, r := range cliJSON(t, db, "rel", "list") {
		roleOf[r["name"].(string)] = r["role"]
	}
	if roleOf["owns"] != "memory" || roleOf["wraps"] != "usage" || roleOf["co_edited"] != "history" || roleOf["bogus"] != nil {
		t.Errorf("roles after add_relation and batch: owns %v, wraps %v, co_edited %v, bogus %v", roleOf["owns"], roleOf["wraps"], roleOf["co_edited"], roleOf["bogus"])
	}
}

// TestAnalysisToolsMatchCLI compares the engine tools with the CLI's
// engine commands on a snapshot the CLI exported at the same revision.
func TestAnalysisToolsMatchCLI(t *testing.T) {
	db := newStore(t)
	var ops strings.Builder
	// A small code-like graph: files define symbols, symbols call each
	// other, tests test files.
	for f := 0; f < 6; f++ {
		fmt.Fprintf(&ops, `{"op":"put_node","key":"file:pkg/f%d.go"}`+"\n", f)
		for k := 0; k < 4; k++ {
			fmt.Fprintf(&ops, `{"op":"put_edge","src":"file:pkg/f%d.go","rel":"defines","dst":"sym:pkg.F%d_%d"}`+"\n", f, f, k)
			fmt.Fprintf(&ops, `{"op":"put_edge","src":"sym:pkg.F%d_%d","rel":"calls","dst":"sym:pkg.F%d_%d","weight":0.7}`+"\n", f, k, (f+1)%6, (k+f)%4)
		}
		fmt.Fprintf(&ops, `{"op":"put_edge","src":"file:pkg/f%d_test.go","rel":"tests","dst":"file:pkg/f%d.go"}`+"\n", f, f)
	}
	runCLI(t, ops.String(), "--db", db, "batch")
	s := startServer(t, db)
	snap := filepath.Join(t.TempDir(), "g.snap")
	runCLI(t, "", "--db", db, "export", "--out", snap)

	b, _ := s.call("related", map[string]any{"queries": []string{"file:pkg/f1.go"}, "top": 10})
	diff(t, "related", records(t, b, "results"), cliJSON(t, db, "activate", "--snapshot", snap, "file:pkg/f1.go", "--top", "10"))
	b, _ = s.call("related", map[string]any{"queries": []string{"F2_1", "f3"}, "profile": "classic", "depth": 2, "rel": []string{"calls"}, "strategy": "heap", "top": 0})
	diff(t, "related filtered", records(t, b, "results"), cliJSON(t, db, "activate", "--snapshot", snap, "F2_1", "f3", "--profile", "classic", "--depth", "2", "--rel", "calls", "--strategy", "heap", "--top", "0"))
	b, _ = s.call("related", map[string]any{"queries": []string{"pkg/f2"}, "files": true, "depth": 4, "top": 3})
	diff(t, "related files", records(t, b, "results"), cliJSON(t, db, "activate", "--snapshot", snap, "pkg/f2", "--files", "--depth", "4", "--top", "3"))
	b, _ = s.call("impact", map[string]any{"key": "sym:pkg.F2_1", "top": 0})
	diff(t, "impact", records(t, b, "affected"), cliJSON(t, db, "impact", "--snapshot", snap, "sym:pkg.F2_1"))
	b, _ = s.call("impact", map[string]any{"key": "file:pkg/f2.go", "direction": "both", "depth": 2, "top": 5})
	diff(t, "impact both", records(t, b, "affected"), cliJSON(t, db, "impact", "--snapshot", snap, "file:pkg/f2.go", "--direction", "both", "--depth", "2", "--top", "5"))
	b, _ = s.call("pagerank", map[string]any{"top": 8})
	diff(t, "pagerank", records(t, b, "results"), cliJSON(t, db, "pagerank", "--snapshot", snap, "--top", "8"))
	b, _ = s.call("pagerank", map[string]any{"top": 8, "weighted": true})
	diff(t, "pagerank weighted", records(t, b, "results"), cliJSON(t, db, "pagerank", "--snapshot", snap, "--top", "8", "--weighted"))
	b, _ = s.call("resonate", map[string]any{"queries": []string{"sym:pkg.F0_0"}})
	diff(t, "resonate", records(t, b, "results"), cliJSON(t, db, "resonate", "--snapshot", snap, "sym:pkg.F0_0"))
	b, _ = s.call("resonate", map[string]any{"queries": []string{"sym:pkg.F0_0"}, "sweep": true, "top": 3})
	diff(t, "resonate sweep", records(t, b, "resonant"), orEmpty(cliJSON(t, db, "resonate", "--snapshot", snap, "sym:pkg.F0_0", "--sweep", "--top", "3")))

	// search: exact, prefix (first 8 in key order), substring (case-folded).
	var allKeys []string
	for f := 0; f < 6; f++ {
		allKeys = append(allKeys, fmt.Sprintf("file:pkg/f%d.go", f), fmt.Sprintf("file:pkg/f%d_test.go", f))
		for k := 0; k < 4; k++ {
			allKeys = append(allKeys, fmt.Sprintf("sym:pkg.F%d_%d", f, k))
		}
	}
	sort.Strings(allKeys)
	var sr struct {
		Matches []struct {
			Query, Key, Match string
			Score             float64
		} `json:"matches"`
	}
	s.ok("search", map[string]any{"queries": []string{"sym:pkg.F3_2", "sym:pkg.F1", "F5_3_NOPE", "pkg/F4"}}, &sr)
	var want []string
	want = append(want, "sym:pkg.F3_2 exact sym:pkg.F3_2")
	for _, k := range allKeys {
		if strings.HasPrefix(k, "sym:pkg.F1") {
			want = append(want, "sym:pkg.F1 prefix "+k)
		}
	}
	for _, k := range allKeys {
		if strings.Contains(strings.ToLower(k), "pkg/f4") {
			want = append(want, "pkg/F4 substring "+k)
		}
	}
	var got []string
	for _, m := range sr.Matches {
		if m.Query == "F5_3_NOPE" {
			continue // fuzzy: scored by trigram similarity, not checked here
		}
		got = append(got, m.Query+" "+m.Match+" "+m.Key)
	}
	slices.Sort(got)
	slices.Sort(want)
	diff(t, "search", got, want)

	// The engine snapshot follows the store: a write by the CLI (another
	// process) is seen by the next analysis call.
	runCLI(t, "", "--db", db, "put-edge", "sym:pkg.F9_9", "calls", "sym:pkg.F2_1")
	b, _ = s.call("impact", map[string]any{"key": "sym:pkg.F2_1", "depth": 1, "top": 0})
	if !strings.Contains(string(b), "sym:pkg.F9_9") {
		t.Errorf("impact after another process's write does not see it: %s", b)
	}
	// A past revision still answers as it was.
	b, _ = s.call("impact", map[string]any{"key": "sym:pkg.F2_1", "depth": 1, "top": 0, "at_rev": 1})
	if strings.Contains(string(b), "sym:pkg.F9_9") {
		t.Errorf("impact at_rev 1 sees a later edge: %s", b)
	}
	s.fails("impact", map[string]any{"key": "zzqqxx"}, `no node matches "zzqqxx"`)
	// A query, as the CLI's impact takes: the best match is the origin.
	var im struct {
		Origin string `json:"origin"`
	}
	s.ok("impact", map[string]any{"key": "F2_1", "depth": 1}, &im)
	if im.Origin != "sym:pkg.F2_1" {
		t.Errorf("impact of the query F2_1 started from %q", im.Origin)
	}
	s.fails("related", map[string]any{"queries": []string{"zzzzzz"}}, "no node matches")
	s.fails("related", map[string]any{"queries": []string{"f1"}, "rel": []string{"cals"}}, "cals")
}

// TestToolErrors: one clear line per failure, and a failed write leaves
// the store as it was.
func TestToolErrors(t *testing.T) {
	db := newStore(t)
	s := startServer(t, db)
	s.ok("put_node", map[string]any{"key": "a:1"}, nil)
	s.ok("put_node", map[string]any{"key": "a:1", "payload": 2}, nil)
	s.ok("put_node", map[string]any{"key": "a:1", "payload": 3}, nil)

	s.fails("put_edge", map[string]any{"src": "a:1", "rel": "cals", "dst": "a:2"}, `unknown relation "cals" (did you mean "calls"?)`)
	s.fails("put_node", map[string]any{"key": ""}, "empty node key")
	s.fails("put_node", map[string]any{"key": strings.Repeat("k", 5000)}, "longer than")
	s.fails("put_edge", map[string]any{"src": "a:1", "rel": "calls", "dst": "a:2", "weight": -1}, "weight")
	s.fails("get_node", map[string]any{"key": "a:nope"}, `not found: node "a:nope"`)
	s.fails("get_node", map[string]any{"key": "a:1", "at_rev": 99}, "revision 99 (latest is 3)")
	s.fails("get_node", map[string]any{"key": "a:1", "at_rev": 1, "at_time": "2026-01-01T00:00:00Z"}, "mutually exclusive")
	s.fails("get_node", map[string]any{"key": "a:1", "at_time": "yesterday"}, "RFC 3339")
	s.fails("delete_edge", map[string]any{"src": "a:1", "rel": "calls", "dst": "a:2"}, "not found")
	s.fails("batch", map[string]any{"ops": []map[string]any{
		{"op": "put_node", "key": "b:1"},
		{"op": "put_edge", "src": "b:1", "rel": "nope", "dst": "b:2"},
	}}, `op 2 (put_edge): unknown relation "nope"`)
	s.fails("batch", map[string]any{"ops": []map[string]any{{"op": "put_nod", "key": "b:1"}}}, `did you mean "put_node"`)
	s.fails("batch", map[string]any{"ops": []map[string]any{{"op": "put_kv", "scope": "s", "namespace": "n", "key": "k"}}}, `needs field "payload"`)
	s.fails("batch", map[string]any{"ops": []map[string]any{{"op": "del_node", "key": "b:1", "weight": 2}}}, `field "weight" is not allowed in del_node`)
	s.fails("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "nobody", "contents": []string{"x"}}}}, "Entity with name nobody not found")
	if out := runCLI(t, "", "--db", db, "diff-since", "3"); out != "" {
		t.Errorf("failed writes changed the store:\n%s", out)
	}
	if rels := cliJSON(t, db, "rel", "list"); len(rels) != 10 {
		t.Errorf("a failed create_relations registered a relation: %d relations", len(rels))
	}

	// A read before the retention horizon.
	runCLI(t, "", "--db", db, "compact", "--retain", "1")
	s.fails("get_node", map[string]any{"key": "a:1", "at_rev": 1}, "horizon")
	b, _ := s.call("get_node", map[string]any{"key": "a:1", "at_rev": 3})
	if field(t, b, "payload") != float64(3) {
		t.Errorf("read at the horizon: %s", b)
	}
}

// TestSecretsRedacted: writes through MCP pass the store's secret scanner
// like the CLI's (SPEC §2) and say how many secrets they replaced; nothing
// of a secret reaches the store, through memctl's tools or the memory
// server's.
func TestSecretsRedacted(t *testing.T) {
	const token = "ghp_R8kq2ZtW7vN3xLp9sQm4Yb6Hc1Fd5Gj0Ke2A"
	db := newStore(t)
	s := startServer(t, db)
	var c struct {
		Rev      uint64 `json:"rev"`
		Redacted int    `json:"redacted"`
	}
	s.ok("put_kv", map[string]any{"namespace": "ops", "key": "deploy",
		"payload": map[string]any{"note": "push with " + token, "dsn": "postgres://app:Sup3rS3cretPw@db/prod"}}, &c)
	if c.Rev != 1 || c.Redacted != 2 {
		t.Errorf("put_kv: %+v, want rev 1 and 2 secrets redacted", c)
	}
	s.ok("batch", map[string]any{"ops": []map[string]any{{"op": "put_node", "key": "doc:a", "payload": map[string]any{"t": token}}}}, &c)
	if c.Redacted != 1 {
		t.Errorf("batch: %+v", c)
	}
	s.ok("create_entities", map[string]any{"entities": []map[string]any{{"name": "ci", "entityType": "service", "observations": []string{"token " + token}}}}, &c)
	if c.Redacted != 1 {
		t.Errorf("create_entities: %+v", c)
	}
	c.Redacted = 0 // absent when none: decoding leaves the field as it was
	s.ok("put_node", map[string]any{"key": "doc:b"}, &c)
	if c.Redacted != 0 {
		t.Errorf("put_node without a secret: %+v", c)
	}
	b, _ := s.call("open_nodes", map[string]any{"names": []string{"ci"}})
	if !strings.Contains(string(b), "[REDACTED:github-pat]") {
		t.Errorf("open_nodes: %s", b)
	}
	if log := runCLI(t, "", "--db", db, "diff-since", "0"); strings.Contains(log, token) || strings.Contains(log, "Sup3rS3cretPw") {
		t.Errorf("a secret was stored:\n%s", log)
	}
}

// TestSnapshotCarriedForward: the engine snapshot is rebuilt when a write
// changes what the engines read (keys, edges, valid times), and carried to
// the new revision otherwise (kv writes, a new payload of a node it holds);
// either way the answers are the CLI's on a fresh export.
func TestSnapshotCarriedForward(t *testing.T) {
	db := newStore(t)
	runCLI(t, `{"op":"put_node","key":"a:1"}
{"op":"put_edge","src":"a:1","rel":"calls","dst":"a:2"}
{"op":"put_edge","src":"a:2","rel":"calls","dst":"a:3"}
`, "--db", db, "batch")
	s := startServer(t, db, "--log-level", "debug")
	builds := func() int { return strings.Count(s.stderr.String(), "engine snapshot built") }
	related := func(what string, wantBuilds int) {
		t.Helper()
		b, _ := s.call("related", map[string]any{"queries": []string{"a:1"}, "top": 0})
		snap := filepath.Join(t.TempDir(), "g.snap")
		runCLI(t, "", "--db", db, "export", "--out", snap)
		diff(t, "related after "+what, records(t, b, "results"), cliJSON(t, db, "activate", "--snapshot", snap, "a:1", "--top", "0"))
		st := cliJSON(t, db, "stats")[0]
		if field(t, b, "rev") != st["revision"] {
			t.Errorf("after %s: related answered for rev %v, the store is at %v", what, field(t, b, "rev"), st["revision"])
		}
		if got := builds(); got != wantBuilds {
			t.Errorf("after %s: %d snapshot builds, want %d", what, got, wantBuilds)
		}
	}
	related("the first call", 1)
	s.ok("put_kv", map[string]any{"scope": "r", "namespace": "decisions", "key": "k", "payload": 1}, nil)
	related("a kv write", 1)
	s.ok("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "a:1", "contents": []string{"seen"}}}}, nil)
	related("an observation on a live node", 1)
	s.ok("put_node", map[string]any{"key": "a:2"}, nil) // a missing node becomes live
	related("a node put on a missing node", 2)
	s.ok("put_edge", map[string]any{"src": "a:1", "rel": "calls", "dst": "a:9"}, nil)
	related("an edge write", 3)
	runCLI(t, "", "--db", db, "put-node", "a:new") // another process: a new key
	related("a new node by another process", 4)

	// Valid time (SPEC §4): the snapshot leaves out what is not valid now,
	// so a write that ends an item's valid time, or the clock passing its
	// end, changes what the engines read.
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	s.ok("put_node", map[string]any{"key": "a:1", "valid_until": "2199-01-01T00:00:00Z"}, nil)
	related("a live node's valid time that holds now", 4)
	s.ok("put_node", map[string]any{"key": "a:2", "valid_until": past}, nil)
	related("a live node expired by a write", 5)
	runCLI(t, `{"op":"put_kv","scope":"r","namespace":"n","key":"x","payload":1}
{"op":"put_edge","src":"a:1","rel":"calls","dst":"kv:r/n/x"}
`, "--db", db, "batch")
	related("an edge to a kv entry", 6)
	s.ok("put_kv", map[string]any{"scope": "r", "namespace": "n", "key": "x", "payload": 1, "valid_until": past}, nil)
	related("that kv entry expired by a write", 7)
	related("the next call", 7)
	// Expiry by the clock alone is TestSnapshotClock's (an injected
	// clock), and every rule's is enginesnap's TestExactRules.
}

// TestSchemasAreObjects: every schema in every tool's input and output
// schema is a JSON object. A boolean schema (`true`, what an empty Go
// jsonschema.Schema marshals to) is valid JSON Schema, but clients that
// expect objects refuse the whole tools/list (the TypeScript SDK does).
func TestSchemasAreObjects(t *testing.T) {
	s := startServer(t, newStore(t))
	res, err := s.sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case bool:
			t.Errorf("%s: boolean schema %v", path, x)
		case map[string]any:
			for _, k := range []string{"properties", "$defs"} {
				if m, ok := x[k].(map[string]any); ok {
					for name, sub := range m {
						walk(path+"."+name, sub)
					}
				}
			}
			if items, ok := x["items"]; ok {
				walk(path+"[]", items)
			}
		default:
			t.Errorf("%s: schema is %T", path, v)
		}
	}
	for _, tool := range res.Tools {
		walk(tool.Name+".in", tool.InputSchema)
		walk(tool.Name+".out", tool.OutputSchema)
	}
	if len(res.Tools) < 30 {
		t.Errorf("%d tools listed", len(res.Tools))
	}
}

// TestNodeClient runs testdata/node_client.mjs: the TypeScript SDK's client
// against `memctl mcp`, every tool once. It needs node and the SDK
// (MEMCTL_TEST_NODE_MODULES=/path/to/node_modules); it is skipped otherwise.
func TestNodeClient(t *testing.T) {
	modules := os.Getenv("MEMCTL_TEST_NODE_MODULES")
	node, err := exec.LookPath("node")
	if modules == "" || err != nil {
		t.Skip("set MEMCTL_TEST_NODE_MODULES to a node_modules with @modelcontextprotocol/sdk (and have node) to run")
	}
	// ES modules resolve packages from the script's directory upwards, so
	// run a copy placed beside the node_modules directory.
	script := filepath.Join(filepath.Dir(modules), "memctl_node_client_test.mjs")
	src, err := os.ReadFile(filepath.Join("testdata", "node_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(script)
	cmd := exec.Command(node, script)
	tree, err := filepath.Abs(filepath.Join("..", "testdata", "treesitter", "python"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(testEnv(), "MEMCTL_BIN="+memctlBin, "MEMCTL_DB="+newStore(t), "MEMCTL_TREE="+tree)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "client errors: 0") || strings.Contains(string(out), "CLIENT ERROR") {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestIngestTool: the ingest tool writes the store `memctl ingest code`
// writes (same logical snapshot, same summary), an unchanged tree writes
// nothing, and bad arguments are one-line tool errors that change nothing.
func TestIngestTool(t *testing.T) {
	// A copy outside this repository: the ingest records the git state of
	// the tree it reads (SPEC §9.7), which must not move under the test.
	tree := filepath.Join(t.TempDir(), "python")
	if err := os.CopyFS(tree, os.DirFS(filepath.Join("..", "testdata", "treesitter", "python"))); err != nil {
		t.Fatal(err)
	}
	viaCLI := newStore(t)
	want := cliJSON(t, viaCLI, "ingest", "code", tree)[0]
	db := newStore(t)
	s := startServer(t, db)
	b, _ := s.call("ingest", map[string]any{"dir": tree})
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "seconds")
	delete(want, "seconds")
	diff(t, "ingest summary", []map[string]any{got}, []map[string]any{want})
	logical := func(db string) []byte {
		snap := filepath.Join(t.TempDir(), "l.snap")
		runCLI(t, "", "--db", db, "export", "--logical", "--out", snap)
		b, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !slices.Equal(logical(db), logical(viaCLI)) {
		t.Error("the ingest tool's store differs from memctl ingest code's (logical snapshots)")
	}
	var again struct {
		Unchanged bool   `json:"unchanged"`
		Rev       uint64 `json:"rev"`
	}
	s.ok("ingest", map[string]any{"dir": tree, "languages": []string{"python"}}, &again)
	if !again.Unchanged || again.Rev != 0 {
		t.Errorf("second ingest of an unchanged tree: %+v", again)
	}
	before := logical(db)
	s.fails("ingest", map[string]any{"dir": filepath.Join(tree, "no-such-dir")}, "no-such-dir")
	s.fails("ingest", map[string]any{"dir": tree, "languages": []string{"cobol"}}, `language "cobol"`)
	s.fails("ingest", map[string]any{}, `missing properties: ["dir"]`)
	s.fails("ingest", map[string]any{"dir": ""}, "dir is required")
	if !slices.Equal(before, logical(db)) {
		t.Error("a failed ingest changed the store")
	}
}

// TestContextTool: the context tool answers what `memctl context --json`
// answers on the same store (the MCP result adds the Markdown), and bad
// arguments are one-line tool errors.
func TestContextTool(t *testing.T) {
	db := newStore(t)
	runCLI(t, `{"op":"put_node","key":"dir:."}
{"op":"put_node","key":"dir:lmdbstore"}
{"op":"put_node","key":"file:lmdbstore/store.go"}
{"op":"put_node","key":"file:lmdbstore/read.go"}
{"op":"put_node","key":"file:cli/app.go"}
{"op":"put_edge","src":"file:cli/app.go","rel":"calls","dst":"file:lmdbstore/store.go"}
{"op":"put_edge","src":"file:lmdbstore/read.go","rel":"references","dst":"file:lmdbstore/store.go"}
{"op":"put_kv","scope":"repo","namespace":"decisions","key":"locking","payload":{"text":"one writer","applies_to":["lmdbstore/**"]}}
{"op":"put_kv","scope":"repo","namespace":"decisions","key":"flags","payload":{"text":"flags first","applies_to":["cli/**"]}}
`, "--db", db, "batch", "--run", "r1", "--task", "t1")
	s := startServer(t, db)
	var got map[string]any
	s.ok("context", map[string]any{"targets": []string{"lmdbstore/store.go"}, "budget": 500}, &got)
	want := cliJSON(t, db, "context", "lmdbstore/store.go", "--budget", "500")[0]
	md, _ := got["markdown"].(string)
	if !strings.Contains(md, "one writer") || strings.Contains(md, "flags first") {
		t.Errorf("markdown:\n%s", md)
	}
	for _, m := range []map[string]any{got, want} {
		delete(m, "markdown")
		delete(m, "snapshot") // who built the engine snapshot differs
	}
	diff(t, "context", got, want)
	s.fails("context", map[string]any{"targets": []string{"lmdbstore/store.go"}, "budget": 0}, "budget must be > 0")
	s.fails("context", map[string]any{"targets": []string{"x"}, "since": "yesterday"}, "neither a revision")
	s.fails("context", map[string]any{"targets": []string{"zzqqxx-nothing-matches"}}, "no match")
}

// TestSemanticsTools: supersede, valid time and contradictions through
// MCP answer what the CLI answers on the same store: the superseded item
// is history in listing reads unless included, get_node says by what,
// valid_at moves expiry, diff_since carries the valid time, and a chain
// that would loop is a tool error that writes nothing.
func TestSemanticsTools(t *testing.T) {
	db := newStore(t)
	s := startServer(t, db)
	s.ok("put_node", map[string]any{"key": "decision:old", "payload": map[string]any{"text": "retry 3 times"}}, nil)
	s.ok("put_node", map[string]any{"key": "decision:new", "payload": map[string]any{"text": "retry with backoff"}}, nil)
	s.ok("put_node", map[string]any{"key": "decision:later", "valid_from": "2030-01-01T00:00:00Z"}, nil)
	for _, k := range []string{"decision:old", "decision:new", "decision:later"} {
		s.ok("put_edge", map[string]any{"src": k, "rel": "constrains", "dst": "file:a.go"}, nil)
	}
	s.ok("supersede", map[string]any{"old": "decision:old", "new": "decision:new"}, nil)
	s.ok("put_kv", map[string]any{"scope": "repo", "namespace": "decisions", "key": "k", "payload": 1, "valid_until": "2020-01-01T00:00:00Z"}, nil)
	s.fails("supersede", map[string]any{"old": "decision:new", "new": "decision:old"}, "already supersedes")
	s.fails("put_node", map[string]any{"key": "x:1", "valid_from": "soon"}, "valid_from")

	var node map[string]any
	s.ok("get_node", map[string]any{"key": "decision:old"}, &node)
	diff(t, "get_node decision:old", node, cliJSON(t, db, "get-node", "decision:old")[0])
	st, _ := node["status"].(map[string]any)
	if st["newest"] != "decision:new" || st["current"] != false {
		t.Errorf("status of the superseded decision: %v", st)
	}
	srcs := func(args map[string]any) []string {
		var l struct {
			Edges []struct{ Src string } `json:"edges"`
		}
		s.ok("get_in", args, &l)
		var out []string
		for _, e := range l.Edges {
			out = append(out, e.Src)
		}
		return out
	}
	if got := srcs(map[string]any{"key": "file:a.go"}); !slices.Equal(got, []string{"decision:new"}) {
		t.Errorf("get_in now: %v, want only decision:new", got)
	}
	if got := srcs(map[string]any{"key": "file:a.go", "include_superseded": true, "include_expired": true}); len(got) != 3 {
		t.Errorf("get_in with history: %v", got)
	}
	if got := srcs(map[string]any{"key": "file:a.go", "valid_at": "2031-01-01T00:00:00Z"}); !slices.Equal(got, []string{"decision:later", "decision:new"}) {
		t.Errorf("get_in in 2031: %v", got)
	}
	// The listed items' statuses (peer_status when not plainly current:
	// decision:old superseded, decision:later not yet valid) are the CLI's.
	var history struct {
		Edges []map[string]any `json:"edges"`
	}
	s.ok("get_in", map[string]any{"key": "file:a.go", "include_superseded": true, "include_expired": true}, &history)
	cliHistory := cliEdges(t, db, "get-in", "file:a.go", "--include-superseded", "--include-expired")
	diff(t, "get_in with history", history.Edges, cliHistory)
	peers := map[string]map[string]any{}
	for _, e := range history.Edges {
		ps, _ := e["peer_status"].(map[string]any)
		peers[e["src"].(string)] = ps
	}
	if ps := peers["decision:old"]; ps == nil || ps["newest"] != "decision:new" {
		t.Errorf("peer_status of decision:old: %v", ps)
	}
	if ps := peers["decision:later"]; ps == nil || ps["pending"] != true || ps["expired"] != true {
		t.Errorf("peer_status of decision:later: %v", ps)
	}
	if ps, ok := peers["decision:new"]; !ok || ps != nil {
		t.Errorf("decision:new is current, yet peer_status %v (listed %v)", ps, ok)
	}
	var kvs struct {
		Entries []map[string]any `json:"entries"`
	}
	s.ok("list_kv", map[string]any{"scope": "repo", "namespace": "decisions"}, &kvs)
	if len(kvs.Entries) != 0 {
		t.Errorf("list_kv lists an expired entry: %v", kvs.Entries)
	}
	s.ok("list_kv", map[string]any{"scope": "repo", "namespace": "decisions", "include_expired": true}, &kvs)
	diff(t, "list_kv with expired", kvs.Entries, cliJSON(t, db, "list-kv", "repo", "decisions", "--include-expired"))
	var ops struct {
		Ops []map[string]any `json:"ops"`
	}
	s.ok("diff_since", map[string]any{"since_rev": 0}, &ops)
	diff(t, "diff_since", ops.Ops, cliJSON(t, db, "diff-since", "0"))
	// A replay through batch keeps the valid times.
	other := newStore(t)
	o := startServer(t, other)
	o.ok("batch", map[string]any{"ops": ops.Ops}, nil)
	if a, b := cliJSON(t, db, "get-node", "decision:later")[0]["valid_from"], cliJSON(t, other, "get-node", "decision:later")[0]["valid_from"]; a != b || a != "2030-01-01T00:00:00Z" {
		t.Errorf("valid_from after a replay: %v, source %v", b, a)
	}
}

// TestIngestToolPrecise: ingest with precise runs the SCIP indexers as
// `memctl ingest code --precise` does, found on the server's PATH: a
// scip-go that writes testdata/scip/go.scip (an index of the tree below)
// gives the store and the precise summary the CLI gives; without
// precise the summary names no indexer. A failing indexer leaves the
// language on syntax, with the reason in the summary.
func TestIngestToolPrecise(t *testing.T) {
	index, err := filepath.Abs(filepath.Join("..", "testdata", "scip", "go.scip"))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// scip-go --quiet -o OUT ./...: copy the index to OUT.
	fake := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then cp '" + index + "' \"$2\"; exit 0; fi; shift; done\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "scip-go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	tree := t.TempDir()
	for name, src := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.21\n",
		"a.go":   "package m\n\nimport \"fmt\"\n\nfunc A() {\n\tB()\n\tfmt.Println()\n}\n\ntype T struct{}\nfunc (T) M() {\n\tA()\n}\n",
		"b.go":   "package m\n\nfunc B() {\n\tT{}.M()\n\tB()\n}\n\ntype I interface{ M() }\n",
	} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	viaCLI := newStore(t)
	want := cliJSON(t, viaCLI, "ingest", "code", tree, "--precise")[0]
	db := newStore(t)
	s := startServer(t, db)
	b, _ := s.call("ingest", map[string]any{"dir": tree, "precise": true})
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]any{got, want} {
		delete(m, "seconds")
		if ps, ok := m["precise"].([]any); ok {
			for _, p := range ps {
				delete(p.(map[string]any), "seconds")
			}
		}
	}
	diff(t, "ingest summary with precise", []map[string]any{got}, []map[string]any{want})
	ps, _ := got["precise"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["indexer"] != "scip-go" || ps[0].(map[string]any)["fallback"] != nil {
		t.Errorf("precise summary %v: want Go read by scip-go", got["precise"])
	}
	logical := func(db string) []byte {
		snap := filepath.Join(t.TempDir(), "l.snap")
		runCLI(t, "", "--db", db, "export", "--logical", "--out", snap)
		b, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !slices.Equal(logical(db), logical(viaCLI)) {
		t.Error("the ingest tool's precise store differs from memctl ingest code --precise's (logical snapshots)")
	}

	// A plain ingest of another store names no indexer.
	plain := startServer(t, newStore(t))
	b, _ = plain.call("ingest", map[string]any{"dir": tree})
	if strings.Contains(string(b), `"indexer"`) {
		t.Errorf("ingest without precise names an indexer: %s", b)
	}

	// An indexer that fails: Go stays on syntax, and the summary says why.
	if err := os.WriteFile(filepath.Join(bin, "scip-go"), []byte("#!/bin/sh\necho 'no go.work' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	failing := startServer(t, newStore(t))
	b, _ = failing.call("ingest", map[string]any{"dir": tree, "precise": true})
	if !strings.Contains(string(b), `"fallback":"scip-go: exited with status 3: no go.work"`) {
		t.Errorf("a failing indexer: want its fallback in the summary: %s", b)
	}
}
