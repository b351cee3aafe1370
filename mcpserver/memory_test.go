package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type entity struct {
	Name             string   `json:"name"`
	EntityType       string   `json:"entityType"`
	Observations     []string `json:"observations"`
	ObservationTimes []string `json:"observationTimes"`
	Scope            string   `json:"scope"`
	CreatedAt        string   `json:"createdAt"`
	Rev              uint64   `json:"rev"`
}

type relation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
	CreatedAt    string `json:"createdAt"`
}

type graph struct {
	Entities   []entity   `json:"entities"`
	Relations  []relation `json:"relations"`
	Rev        uint64     `json:"rev"`
	NextCursor string     `json:"nextCursor"`
}

func names(es []entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

func rels(rs []relation) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.From+" -"+r.RelationType+"-> "+r.To)
	}
	slices.Sort(out)
	return out
}

// TestMemoryTools drives the reference memory server's nine tools with the
// reference's argument shapes and checks the store through the CLI.
func TestMemoryTools(t *testing.T) {
	db := newStore(t)
	s := startServer(t, db)

	var ce struct {
		Entities []entity `json:"entities"`
		Existing []string `json:"existing"`
		Rev      uint64   `json:"rev"`
	}
	s.ok("create_entities", map[string]any{"entities": []map[string]any{
		{"name": "John_Smith", "entityType": "person", "observations": []string{"Speaks fluent Spanish", "Likes tea"}},
		{"name": "Acme Corp", "entityType": "organization", "observations": []string{}},
		{"name": "北京", "entityType": "city", "observations": []string{"capital"}},
	}}, &ce)
	if len(ce.Entities) != 3 || ce.Rev != 1 {
		t.Fatalf("create_entities: %+v", ce)
	}
	s.ok("create_entities", map[string]any{"entities": []map[string]any{
		{"name": "John_Smith", "entityType": "person", "observations": []string{"dup"}},
		{"name": "Jane", "entityType": "person", "observations": []string{"Knows Go"}},
	}}, &ce)
	if len(ce.Entities) != 1 || ce.Entities[0].Name != "Jane" || !slices.Equal(ce.Existing, []string{"John_Smith"}) {
		t.Fatalf("create_entities with an existing name: %+v", ce)
	}
	// The node: key = name, type = entityType, observations in the payload
	// with the time and revision they were added.
	n := cliJSON(t, db, "get-node", "John_Smith")[0]
	if n["type"] != "person" {
		t.Errorf("entity type: %v", n)
	}
	var payload struct {
		Observations []struct {
			Text, Added string
			Rev         uint64
		} `json:"observations"`
	}
	b, _ := json.Marshal(n["payload"])
	if err := json.Unmarshal(b, &payload); err != nil || len(payload.Observations) != 2 ||
		payload.Observations[0].Text != "Speaks fluent Spanish" || payload.Observations[0].Rev != 1 || payload.Observations[0].Added == "" {
		t.Errorf("observations in the payload: %s", b)
	}

	var cr struct {
		Relations []relation `json:"relations"`
		Rev       uint64     `json:"rev"`
	}
	s.ok("create_relations", map[string]any{"relations": []map[string]any{
		{"from": "John_Smith", "to": "Acme Corp", "relationType": "works_at"},
		{"from": "Jane", "to": "Acme Corp", "relationType": "works at"},
		{"from": "John_Smith", "to": "北京", "relationType": "住在"},
		{"from": "John_Smith", "to": "Acme Corp", "relationType": "works_at"}, // duplicate in the call
		{"from": "Jane", "to": "John_Smith", "relationType": "knows"},
	}}, &cr)
	if len(cr.Relations) != 4 {
		t.Fatalf("create_relations: %+v", cr)
	}
	s.ok("create_relations", map[string]any{"relations": []map[string]any{
		{"from": "Jane", "to": "John_Smith", "relationType": "knows"},
	}}, &cr)
	if len(cr.Relations) != 0 || cr.Rev != 0 {
		t.Errorf("create_relations of an existing relation wrote: %+v", cr)
	}
	// Relations registered on first use; odd relationTypes mapped to names.
	var relNames []string
	for _, r := range cliJSON(t, db, "rel", "list") {
		relNames = append(relNames, r["name"].(string))
	}
	for _, want := range []string{"works_at", "knows"} {
		if !slices.Contains(relNames, want) {
			t.Errorf("relation %q not registered: %v", want, relNames)
		}
	}
	out := cliEdges(t, db, "get-out", "John_Smith")
	var cityEdge map[string]any
	for _, e := range out {
		if e["dst"] == "北京" {
			cityEdge = e
		}
	}
	if cityEdge == nil || !strings.HasPrefix(cityEdge["rel"].(string), "_") || fmt.Sprint(cityEdge["payload"]) != "map[relationType:住在]" {
		t.Errorf("non-ASCII relationType: %v", cityEdge)
	}
	in := cliEdges(t, db, "get-in", "Acme Corp", "--rel", "works_at")
	if len(in) != 2 {
		t.Errorf("works_at / works at: %v", in)
	}

	var ao struct {
		Results []struct {
			EntityName        string   `json:"entityName"`
			AddedObservations []string `json:"addedObservations"`
		} `json:"results"`
	}
	s.ok("add_observations", map[string]any{"observations": []map[string]any{
		{"entityName": "Jane", "contents": []string{"Knows Go", "Reviews PRs", "Reviews PRs"}},
		{"entityName": "Acme Corp", "contents": []string{"Founded 1999"}},
	}}, &ao)
	// As the reference: a content given twice in one entry is added twice.
	if len(ao.Results) != 2 || !slices.Equal(ao.Results[0].AddedObservations, []string{"Reviews PRs", "Reviews PRs"}) {
		t.Errorf("add_observations: %+v", ao)
	}

	// A node written through memctl's own tools keeps its payload fields.
	s.ok("put_node", map[string]any{"key": "file:a.go", "payload": json.RawMessage(`{"lang":"go","lines":10}`)}, nil)
	s.ok("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "file:a.go", "contents": []string{"hot path"}}}}, nil)
	b = []byte(runCLI(t, "", "--db", db, "--json", "get-node", "file:a.go"))
	if !strings.Contains(string(b), `"payload":{"lang":"go","lines":10,"observations":[{"added":"`) || !strings.Contains(string(b), `"text":"hot path"}]}`) {
		t.Errorf("payload after add_observations: %s", b)
	}
	s.ok("put_node", map[string]any{"key": "list:x", "payload": []int{1}}, nil)
	s.fails("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "list:x", "contents": []string{"x"}}}}, "not a JSON object")

	// open_nodes: the entities asked for, and every relation touching them.
	var g graph
	s.ok("open_nodes", map[string]any{"names": []string{"Jane", "nobody"}}, &g)
	if !slices.Equal(names(g.Entities), []string{"Jane"}) ||
		!slices.Equal(rels(g.Relations), []string{"Jane -knows-> John_Smith", "Jane -works at-> Acme Corp"}) {
		t.Errorf("open_nodes: %+v", g)
	}
	if !slices.Equal(g.Entities[0].Observations, []string{"Knows Go", "Reviews PRs", "Reviews PRs"}) || len(g.Entities[0].ObservationTimes) != 3 ||
		g.Entities[0].ObservationTimes[1] == "" || g.Relations[0].CreatedAt == "" {
		t.Errorf("open_nodes times: %+v", g)
	}
	// search_nodes: case-insensitive over names, types and observations.
	for q, want := range map[string][]string{
		"TEA":          {"John_Smith"},
		"person":       {"Jane", "John_Smith"},
		"acme":         {"Acme Corp"},
		"capital":      {"北京"},
		"no such text": nil,
	} {
		s.ok("search_nodes", map[string]any{"query": q}, &g)
		if !slices.Equal(names(g.Entities), want) {
			t.Errorf("search_nodes %q: %v, want %v", q, names(g.Entities), want)
		}
	}
	s.ok("search_nodes", map[string]any{"query": "tea"}, &g)
	if !slices.Equal(rels(g.Relations), []string{"Jane -knows-> John_Smith", "John_Smith -works_at-> Acme Corp", "John_Smith -住在-> 北京"}) {
		t.Errorf("search_nodes relations: %v", rels(g.Relations))
	}

	// read_graph, paged: every entity and relation exactly once.
	var allE []entity
	var allR []relation
	cursor := ""
	var first uint64
	for pages := 0; ; pages++ {
		args := map[string]any{"limit": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		g = graph{}
		s.ok("read_graph", args, &g)
		if len(g.Entities)+len(g.Relations) > 2 {
			t.Fatalf("read_graph page of %d items, limit 2", len(g.Entities)+len(g.Relations))
		}
		if pages == 0 {
			first = g.Rev
			// A write between pages does not change what the chain reads.
			s.ok("create_entities", map[string]any{"entities": []map[string]any{{"name": "Late", "entityType": "x", "observations": []string{}}}}, nil)
		} else if g.Rev != first {
			t.Fatalf("page %d read rev %d, the chain started at %d", pages, g.Rev, first)
		}
		allE, allR = append(allE, g.Entities...), append(allR, g.Relations...)
		if g.NextCursor == "" {
			break
		}
		cursor = g.NextCursor
		if pages > 50 {
			t.Fatal("read_graph does not end")
		}
	}
	wantNames := []string{"Acme Corp", "Jane", "John_Smith", "file:a.go", "list:x", "北京"}
	if !slices.Equal(names(allE), wantNames) {
		t.Errorf("read_graph entities: %v, want %v", names(allE), wantNames)
	}
	wantRels := []string{"Jane -knows-> John_Smith", "Jane -works at-> Acme Corp", "John_Smith -works_at-> Acme Corp", "John_Smith -住在-> 北京"}
	if !slices.Equal(rels(allR), wantRels) {
		t.Errorf("read_graph relations: %v, want %v", rels(allR), wantRels)
	}
	s.ok("read_graph", map[string]any{}, &g)
	if len(g.Entities) != 7 || g.NextCursor != "" {
		t.Errorf("read_graph after the late write: %d entities", len(g.Entities))
	}
	wantNames = append(wantNames, "Late")
	slices.Sort(wantNames)
	for _, limit := range []int{1, 3, 4, 5, 10} {
		var es []entity
		var rs []relation
		args := map[string]any{"limit": limit}
		for pages := 0; ; pages++ {
			g = graph{}
			s.ok("read_graph", args, &g)
			es, rs = append(es, g.Entities...), append(rs, g.Relations...)
			if g.NextCursor == "" || pages > 50 {
				break
			}
			args = map[string]any{"limit": limit, "cursor": g.NextCursor}
		}
		if !slices.Equal(names(es), wantNames) || !slices.Equal(rels(rs), wantRels) {
			t.Errorf("read_graph by %d: %v %v", limit, names(es), rels(rs))
		}
	}

	// Deletes.
	var oc struct {
		Success  bool     `json:"success"`
		Message  string   `json:"message"`
		NotFound []string `json:"notFound"`
	}
	s.ok("delete_observations", map[string]any{"deletions": []map[string]any{
		{"entityName": "John_Smith", "observations": []string{"Likes tea", "never said"}},
		{"entityName": "ghost", "observations": []string{"x"}},
	}}, &oc)
	if !oc.Success || oc.Message != "Deleted 1 of 3 observations. Entities not found: ghost" {
		t.Errorf("delete_observations: %+v", oc)
	}
	s.ok("open_nodes", map[string]any{"names": []string{"John_Smith"}}, &g)
	if !slices.Equal(g.Entities[0].Observations, []string{"Speaks fluent Spanish"}) {
		t.Errorf("after delete_observations: %v", g.Entities[0].Observations)
	}
	s.ok("delete_relations", map[string]any{"relations": []map[string]any{
		{"from": "Jane", "to": "Acme Corp", "relationType": "works at"},
		{"from": "Jane", "to": "Acme Corp", "relationType": "never_registered"},
	}}, &oc)
	if oc.Message != "Deleted 1 of 2 relations. The rest matched nothing." {
		t.Errorf("delete_relations: %+v", oc)
	}
	if in := cliEdges(t, db, "get-in", "Acme Corp", "--rel", "works_at"); len(in) != 1 || in[0]["src"] != "John_Smith" {
		t.Errorf("after delete_relations: %v", in)
	}
	s.ok("delete_entities", map[string]any{"entityNames": []string{"John_Smith", "ghost"}}, &oc)
	if oc.Message != "Deleted 1 of 2 entities. Not found: ghost" {
		t.Errorf("delete_entities: %+v", oc)
	}
	if _, _, code := tryCLI(t, "", "--db", db, "get-node", "John_Smith"); code != 1 {
		t.Errorf("deleted entity still readable (exit %d)", code)
	}
	for _, key := range []string{"Jane", "Acme Corp", "北京"} {
		for _, e := range append(cliEdges(t, db, "get-out", key), cliEdges(t, db, "get-in", key)...) {
			if e["src"] == "John_Smith" || e["dst"] == "John_Smith" {
				t.Errorf("relation of a deleted entity survives: %v", e)
			}
		}
	}
	if out, errOut, code := tryCLI(t, "", "--db", db, "check"); code != 0 {
		t.Errorf("check after the memory tools: %s%s", out, errOut)
	}
}

// TestMemoryScopes: per-project memory through scopes.
func TestMemoryScopes(t *testing.T) {
	db := newStore(t)
	a := startServer(t, db, "--scope", "projA")
	b := startServer(t, db, "--scope", "projB")
	a.ok("create_entities", map[string]any{"entities": []map[string]any{{"name": "A1", "entityType": "t", "observations": []string{"in A"}}}}, nil)
	b.ok("create_entities", map[string]any{"entities": []map[string]any{{"name": "B1", "entityType": "t", "observations": []string{"in B"}}}}, nil)
	var g graph
	a.ok("read_graph", map[string]any{}, &g)
	if !slices.Equal(names(g.Entities), []string{"A1"}) || g.Entities[0].Scope != "projA" {
		t.Errorf("read_graph in projA: %+v", g.Entities)
	}
	b.ok("search_nodes", map[string]any{"query": "in"}, &g)
	if !slices.Equal(names(g.Entities), []string{"B1"}) {
		t.Errorf("search_nodes in projB: %v", names(g.Entities))
	}
	b.ok("read_graph", map[string]any{"scope": "*"}, &g)
	if !slices.Equal(names(g.Entities), []string{"A1", "B1"}) {
		t.Errorf("read_graph in every scope: %v", names(g.Entities))
	}
	a.ok("read_graph", map[string]any{"scope": "projB"}, &g)
	if !slices.Equal(names(g.Entities), []string{"B1"}) {
		t.Errorf("read_graph of projB from projA's server: %v", names(g.Entities))
	}
	if n := cliJSON(t, db, "get-node", "B1")[0]; n["scope"] != "projB" {
		t.Errorf("scope stored: %v", n)
	}
}
