package mcpserver_test

// TestReferenceDifferential runs one scripted session against the
// reference memory server itself and against `memctl mcp --tools
// reference`, through the TypeScript SDK's client, and compares the
// answers field by field. memctl must answer as the reference does; the
// differences it may show are listed by name (acceptedDifferences, SPEC.md
// §10.4), and a step marked with one must show it, so the list stays true.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referenceMemoryVersion is the npm version of the reference server the
// test expects (its server reports itself as memory-server 0.6.3); .ci/run
// installs it beside the TypeScript SDK.
const referenceMemoryVersion = "2026.8.31"

// acceptedDifferences are the deliberate differences from the reference,
// by name; SPEC.md §10.4 lists the same.
var acceptedDifferences = map[string]string{
	"extra-fields":         "results carry more members than the reference's (rev, existing, notFound, entity times and scope, nextCursor)",
	"extra-arguments":      "tools take optional arguments the reference lacks (scope, cursor, limit, at_rev, at_time)",
	"informative-messages": "a delete that matched nothing in part says so, where the reference always says it succeeded",
	"token-cap":            "an answer beyond about 20,000 tokens comes in parts: nextCursor, spelled out in the text",
	"one-per-name":         "an entity or relation given twice in one call is stored once (the reference stores it twice)",
	"relation-aliases":     "relationTypes that map to one relation name (works at, works_at) are one relation",
	"validation-messages":  "arguments of the wrong shape are refused by both, in different words",
}

// refStep is one call of the session.
type refStep struct {
	Tool     string `json:"tool,omitempty"`
	Args     any    `json:"args,omitempty"`
	Follow   bool   `json:"follow,omitempty"`   // memctl: follow nextCursor and merge
	Resource string `json:"resource,omitempty"` // read a resource instead
	differs  string // the accepted difference this step shows
}

type obj = map[string]any

func ent(name, typ string, obs ...string) obj {
	if obs == nil {
		obs = []string{}
	}
	return obj{"name": name, "entityType": typ, "observations": obs}
}

func rel(from, typ, to string) obj { return obj{"from": from, "to": to, "relationType": typ} }

// referenceSession is the scripted session: every edge case of issue #27
// (a graph of 150 entities and 149 relations, more than 50 search results,
// unknown arguments and fields, relations to missing entities, text
// content, creation order, the resource) and then the accepted differences.
func referenceSession() []refStep {
	st := func(tool string, args any) refStep { return refStep{Tool: tool, Args: args} }
	differs := func(name string, s refStep) refStep { s.differs = name; return s }
	steps := []refStep{
		st("read_graph", obj{}),
		st("search_nodes", obj{"query": "anything"}),
		st("create_entities", obj{"entities": []obj{
			ent("Alice", "person", "likes Go"), ent("Bob", "person"),
			ent("Acme Corp", "organization", "Founded 1999"), ent("北京", "city", "capital", "捕获"),
		}}),
		st("create_entities", obj{"entities": []obj{ent("Alice", "person", "dup"), ent("Carol", "person", "new")}}),
		// Unknown arguments and fields are ignored, as zod does.
		st("create_entities", obj{"foo": 1, "entities": []obj{{"name": "Dave", "entityType": "person", "observations": []string{}, "id": 7}}}),
		st("create_relations", obj{"relations": []obj{rel("Alice", "works_at", "Acme Corp"), rel("Bob", "reports to", "Alice"), rel("Alice", "住在", "北京")}}),
		st("create_relations", obj{"relations": []obj{rel("Alice", "works_at", "Acme Corp"), rel("Bob", "works_at", "Acme Corp")}}),
		// Relations to and from entities that do not exist are stored.
		st("create_relations", obj{"relations": []obj{rel("Alice", "knows", "Ghost"), rel("Phantom", "haunts", "Bob")}}),
		st("create_relations", obj{"relations": []obj{{"from": "Carol", "to": "Dave", "relationType": "mentors", "weight": 3}}, "extra": true}),
		st("read_graph", obj{}),
		st("read_graph", obj{"foo": 1}),
		st("add_observations", obj{"observations": []obj{{"entityName": "Alice", "contents": []string{"likes tea", "likes Go"}}, {"entityName": "Bob", "contents": []string{"new hire"}}}}),
		st("add_observations", obj{"observations": []obj{{"entityName": "Alice", "contents": []string{"likes tea"}}}}),
		st("add_observations", obj{"observations": []obj{{"entityName": "Bob", "contents": []string{"x", "x"}}, {"entityName": "Bob", "contents": []string{"x", "y"}}}}),
		st("add_observations", obj{"observations": []obj{{"entityName": "Carol", "contents": []string{"z"}}, {"entityName": "Nobody", "contents": []string{"lost"}}}}),
		st("add_observations", obj{"observations": []obj{{"entityName": "Dave", "contents": []string{"tab\there", `quote " and \ backslash`, "<b>&amp;</b>", "line\nbreak"}, "id": 1}}}),
		st("open_nodes", obj{"names": []string{"Bob", "Alice", "Nobody"}}),
		st("open_nodes", obj{"names": []string{"Ghost"}, "extra": []int{1}}),
		st("open_nodes", obj{"names": []string{}}),
		st("search_nodes", obj{"query": "TEA"}),
		st("search_nodes", obj{"query": "person"}),
		st("search_nodes", obj{"query": "acme", "foo": 1}),
		st("search_nodes", obj{"query": ""}),
		st("search_nodes", obj{"query": "no such text"}),
		st("search_nodes", obj{"query": "捕"}),
		// Arguments of the wrong shape: both refuse.
		differs("validation-messages", st("search_nodes", obj{})),
		differs("validation-messages", st("create_entities", obj{"entities": []obj{{"name": "X", "entityType": "t", "observations": "not a list"}}})),
		st("delete_observations", obj{"deletions": []obj{{"entityName": "Bob", "observations": []string{"x"}}}}),
		differs("informative-messages", st("delete_observations", obj{"deletions": []obj{{"entityName": "Alice", "observations": []string{"likes tea", "never said"}}, {"entityName": "Nobody", "observations": []string{"x"}}}})),
		st("delete_relations", obj{"relations": []obj{rel("Bob", "works_at", "Acme Corp")}}),
		differs("informative-messages", st("delete_relations", obj{"relations": []obj{rel("Alice", "住在", "北京"), rel("Alice", "never", "Bob")}})),
		st("read_graph", obj{}),
		st("delete_entities", obj{"entityNames": []string{"Bob"}}),
		// Deleting a name that is no entity still drops its relations.
		differs("informative-messages", st("delete_entities", obj{"entityNames": []string{"Ghost"}})),
		st("read_graph", obj{}),
		// An entity created again goes to the end, as in the reference's file.
		st("create_entities", obj{"entities": []obj{ent("Bob", "person", "back")}}),
		st("create_relations", obj{"relations": []obj{rel("Bob", "", "Alice"), rel("Bob", "likes café", "Carol")}}),
		st("read_graph", obj{}),
		refStep{Resource: "memory://knowledge-graph"},
	}
	// A graph of 150 entities and 149 relations, created out of name order.
	var big []obj
	for i := 149; i >= 0; i-- {
		big = append(big, ent(fmt.Sprintf("E%03d", i), "entity", fmt.Sprintf("observation of entity %d", i)))
	}
	var chain []obj
	for i := 0; i < 149; i++ {
		j := (i * 37) % 149
		chain = append(chain, rel(fmt.Sprintf("E%03d", j), "next", fmt.Sprintf("E%03d", j+1)))
	}
	var some []string
	for i := 0; i < 150; i += 2 {
		some = append(some, fmt.Sprintf("E%03d", i))
	}
	steps = append(steps,
		st("create_entities", obj{"entities": big}),
		st("create_relations", obj{"relations": chain}),
		st("read_graph", obj{}),
		st("search_nodes", obj{"query": "E1"}),
		st("search_nodes", obj{"query": "ENTITY"}),
		st("open_nodes", obj{"names": some}),
		refStep{Resource: "memory://knowledge-graph"},
	)
	// Beyond the token cap: memctl answers in parts, which together are
	// the reference's answer.
	var long []obj
	for i := 0; i < 150; i++ {
		long = append(long, obj{"entityName": fmt.Sprintf("E%03d", i), "contents": []string{strings.Repeat(fmt.Sprintf("detail %d of a long note; ", i), 30)}})
	}
	steps = append(steps,
		st("add_observations", obj{"observations": long}),
		differs("token-cap", refStep{Tool: "read_graph", Args: obj{}, Follow: true}),
		differs("token-cap", refStep{Tool: "search_nodes", Args: obj{"query": "detail"}, Follow: true}),
		st("delete_entities", obj{"entityNames": some}),
		differs("token-cap", refStep{Tool: "read_graph", Args: obj{}, Follow: true}),
		st("search_nodes", obj{"query": "of entity 14"}),
		// The accepted differences that change the graph come last.
		differs("one-per-name", st("create_entities", obj{"entities": []obj{ent("Twin", "t"), ent("Twin", "t")}})),
		differs("one-per-name", st("create_relations", obj{"relations": []obj{rel("Alice", "twice", "Carol"), rel("Alice", "twice", "Carol")}})),
		differs("relation-aliases", st("create_relations", obj{"relations": []obj{rel("Alice", "works at", "Acme Corp")}})),
	)
	return steps
}

// callResult is one answer as the driver reports it.
type callResult struct {
	ProtocolError string   `json:"protocolError"`
	IsError       bool     `json:"isError"`
	Text          *string  `json:"text"`
	Blocks        int      `json:"blocks"`
	Structured    obj      `json:"structured"`
	Pages         int      `json:"pages"`
	Texts         []string `json:"texts"`
	MimeType      string   `json:"mimeType"`
	URI           string   `json:"uri"`
}

func (c callResult) failed() bool { return c.ProtocolError != "" || c.IsError }

func (c callResult) text() string {
	if c.Text == nil {
		return ""
	}
	return *c.Text
}

// referenceServer is the reference's dist/index.js beside the SDK, or "".
func referenceServer(modules string) string {
	js := filepath.Join(modules, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(js); err != nil {
		return ""
	}
	return js
}

func TestReferenceDifferential(t *testing.T) {
	modules := os.Getenv("MEMCTL_TEST_NODE_MODULES")
	node, err := exec.LookPath("node")
	if modules == "" || err != nil || referenceServer(modules) == "" {
		t.Skipf("set MEMCTL_TEST_NODE_MODULES to a node_modules with @modelcontextprotocol/sdk and @modelcontextprotocol/server-memory@%s (and have node) to run", referenceMemoryVersion)
	}
	var pkg struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(modules, "@modelcontextprotocol", "server-memory", "package.json")); err == nil {
		json.Unmarshal(b, &pkg)
	}
	if pkg.Version != referenceMemoryVersion {
		t.Logf("reference server %s installed; this test was written against %s", pkg.Version, referenceMemoryVersion)
	}
	dir := t.TempDir()
	steps := referenceSession()
	stepsFile := filepath.Join(dir, "steps.json")
	b, _ := json.Marshal(steps)
	if err := os.WriteFile(stepsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(filepath.Dir(modules), "memctl_reference_diff_test.mjs")
	src, err := os.ReadFile(filepath.Join("testdata", "reference_diff.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(script)
	cmd := exec.Command(node, script)
	cmd.Env = append(testEnv(), "STEPS="+stepsFile, "REFERENCE_JS="+referenceServer(modules),
		"MEMORY_FILE="+filepath.Join(dir, "memory.jsonl"), "MEMCTL_BIN="+memctlBin, "MEMCTL_DB="+newStore(t))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, stderr.String())
	}
	var run struct {
		Server    struct{ Ref, Mem obj }
		Tools     struct{ Ref, Mem []obj }
		Resources struct{ Ref, Mem []obj }
		Results   []struct{ Ref, Mem callResult }
	}
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("driver output: %v\n%.2000s", err, out)
	}
	t.Logf("reference server %v; %d calls each", run.Server.Ref, len(steps))
	if len(run.Results) != len(steps) || len(steps) < 50 {
		t.Fatalf("%d results for %d steps (want 50 or more)", len(run.Results), len(steps))
	}
	seen := map[string]bool{}
	compareToolLists(t, run.Tools.Ref, run.Tools.Mem, seen)
	compareResources(t, run.Resources.Ref, run.Resources.Mem)
	for i, s := range steps {
		r := run.Results[i]
		name := fmt.Sprintf("step %d %s%s %.120s", i, s.Tool, s.Resource, mustJSON(s.Args))
		diffs := compareCall(s, r.Ref, r.Mem)
		if s.differs != "" {
			seen[s.differs] = true
			if len(diffs) == 0 {
				t.Errorf("%s: marked %q but answers as the reference does: drop the mark (and the difference, if it is gone)", name, s.differs)
			}
			continue
		}
		for _, d := range diffs {
			if kind, ok := strings.CutPrefix(d, "accepted "); ok {
				seen[strings.TrimSuffix(strings.Fields(kind)[0], ":")] = true
				continue
			}
			t.Errorf("%s: %s", name, d)
		}
	}
	for name := range acceptedDifferences {
		if !seen[name] {
			t.Errorf("accepted difference %q never showed: drop it from the list and SPEC.md §10.4", name)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var mcpErrorPrefix = regexp.MustCompile(`^MCP error -?\d+: `)

// compareCall lists how mem's answer differs from ref's; a difference
// that is accepted wherever it occurs starts with "accepted NAME".
func compareCall(s refStep, ref, mem callResult) []string {
	var diffs []string
	if ref.failed() != mem.failed() {
		return []string{fmt.Sprintf("reference failed=%v (%s%s), memctl failed=%v (%s%s)",
			ref.failed(), ref.ProtocolError, ref.text(), mem.failed(), mem.ProtocolError, mem.text())}
	}
	if ref.failed() {
		want := mcpErrorPrefix.ReplaceAllString(ref.ProtocolError+ref.text(), "")
		got := mem.ProtocolError + mem.text()
		if strings.HasPrefix(want, "Input validation error") {
			return []string{"validation messages: " + want + " / " + got}
		}
		if got != want {
			diffs = append(diffs, fmt.Sprintf("error %q, reference %q", got, want))
		}
		return diffs
	}
	if s.Resource != "" {
		if mem.text() != ref.text() || mem.MimeType != ref.MimeType || mem.URI != ref.URI {
			diffs = append(diffs, fmt.Sprintf("resource: memctl %s %s %.300q, reference %s %s %.300q", mem.URI, mem.MimeType, mem.text(), ref.URI, ref.MimeType, ref.text()))
		}
		return diffs
	}
	if mem.Blocks != ref.Blocks {
		diffs = append(diffs, fmt.Sprintf("%d content blocks, reference %d", mem.Blocks, ref.Blocks))
	}
	// The text content, byte for byte (a part of a cut answer ends with
	// the sentence that names the cursor).
	if s.Follow {
		if mem.Pages < 2 {
			diffs = append(diffs, "not cut at the token cap")
		} else {
			diffs = append(diffs, fmt.Sprintf("accepted token-cap: %d parts", mem.Pages))
			for j, text := range mem.Texts[:len(mem.Texts)-1] {
				if !strings.Contains(text, "For the rest, call "+s.Tool+" with {") {
					diffs = append(diffs, fmt.Sprintf("part %d: the text does not say how to read the rest: %.200q", j, text[max(0, len(text)-300):]))
				}
			}
		}
	} else if mem.text() != ref.text() {
		if strings.HasPrefix(ref.text(), "[") || strings.HasPrefix(ref.text(), "{") {
			diffs = append(diffs, "text: "+cmp.Diff(ref.text(), mem.text()))
		} else {
			diffs = append(diffs, fmt.Sprintf("message %q, reference %q", mem.text(), ref.text()))
		}
	}
	// The structured content: every member of the reference's, with the
	// reference's fields of its entities and relations; memctl's further
	// members are accepted.
	for k, want := range ref.Structured {
		got, ok := mem.Structured[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("structured content has no %q", k))
			continue
		}
		if k == "message" && s.differs == "informative-messages" {
			continue
		}
		if d := cmp.Diff(want, project(got, want)); d != "" {
			diffs = append(diffs, fmt.Sprintf("structured %q (-reference +memctl):\n%s", k, d))
		}
	}
	for k := range mem.Structured {
		if _, ok := ref.Structured[k]; !ok {
			diffs = append(diffs, "accepted extra-fields: "+k)
		}
	}
	return diffs
}

// project keeps of got only what shape holds: the members of its objects
// (entities, relations) that the reference's have.
func project(got, shape any) any {
	switch sh := shape.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got
		}
		out := map[string]any{}
		for k, v := range g {
			if w, ok := sh[k]; ok {
				out[k] = project(v, w)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(sh) == 0 {
			return got
		}
		out := make([]any, len(g))
		for i := range g {
			out[i] = project(g[i], sh[min(i, len(sh)-1)])
		}
		return out
	}
	return got
}

// compareToolLists: the nine tools with the reference's names, titles,
// descriptions and annotations; every argument of the reference's with
// its type and whether it is required; every member of its output schema.
func compareToolLists(t *testing.T, ref, mem []obj, seen map[string]bool) {
	t.Helper()
	byName := func(ts []obj) map[string]obj {
		m := map[string]obj{}
		for _, tool := range ts {
			m[tool["name"].(string)] = tool
		}
		return m
	}
	r, m := byName(ref), byName(mem)
	names := func(m map[string]obj) []string {
		var out []string
		for n := range m {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(names(r), names(m)) {
		t.Errorf("tools: memctl %v, reference %v", names(m), names(r))
	}
	for name, rt := range r {
		mt := m[name]
		if mt == nil {
			continue
		}
		for _, k := range []string{"title", "description"} {
			if rt[k] != mt[k] {
				t.Errorf("%s %s: %q, reference %q", name, k, mt[k], rt[k])
			}
		}
		hints := func(a any) map[string]bool {
			out := map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true} // MCP's defaults
			am, _ := a.(map[string]any)
			for k := range out {
				if v, ok := am[k].(bool); ok {
					out[k] = v
				}
			}
			return out
		}
		if d := cmp.Diff(hints(rt["annotations"]), hints(mt["annotations"])); d != "" {
			t.Errorf("%s annotations (-reference +memctl):\n%s", name, d)
		}
		for _, schema := range []string{"inputSchema", "outputSchema"} {
			rs, _ := rt[schema].(map[string]any)
			ms, _ := mt[schema].(map[string]any)
			rp, _ := rs["properties"].(map[string]any)
			mp, _ := ms["properties"].(map[string]any)
			for p, rps := range rp {
				mps, ok := mp[p].(map[string]any)
				if !ok {
					t.Errorf("%s %s: no property %q", name, schema, p)
					continue
				}
				if !sameType(rps.(map[string]any)["type"], mps["type"]) {
					t.Errorf("%s %s.%s: type %v, reference %v", name, schema, p, mps["type"], rps.(map[string]any)["type"])
				}
			}
			for p := range mp {
				if _, ok := rp[p]; !ok {
					seen["extra-arguments"] = schema == "inputSchema" || seen["extra-arguments"]
				}
			}
			if schema == "inputSchema" {
				req := func(s map[string]any) []string {
					var out []string
					l, _ := s["required"].([]any)
					for _, x := range l {
						out = append(out, x.(string))
					}
					slices.Sort(out)
					return out
				}
				if !slices.Equal(req(rs), req(ms)) {
					t.Errorf("%s required arguments %v, reference %v", name, req(ms), req(rs))
				}
			}
		}
	}
}

// sameType: memctl's ["null","array"] (a Go slice may be nil) is the
// reference's "array".
func sameType(ref, mem any) bool {
	if fmt.Sprint(ref) == fmt.Sprint(mem) {
		return true
	}
	l, ok := mem.([]any)
	return ok && len(l) == 2 && l[0] == "null" && l[1] == ref
}

func compareResources(t *testing.T, ref, mem []obj) {
	t.Helper()
	if len(ref) != 1 || len(mem) != 1 {
		t.Errorf("resources: memctl %v, reference %v", mem, ref)
		return
	}
	for _, k := range []string{"uri", "name", "title", "description", "mimeType"} {
		if ref[0][k] != mem[0][k] {
			t.Errorf("resource %s: %v, reference %v", k, mem[0][k], ref[0][k])
		}
	}
}
