package mcpserver

// Tool sets (SPEC.md §10.5): which tools a server offers, chosen at start
// (`memctl mcp --tools core,+history`). Every tool listed is paid for in
// tokens on every turn of the agent, and clients cut long lists, so the
// default is the few tools an agent needs most.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// toolSets names groups of tools. "all" is every tool the server has.
var toolSets = map[string][]string{
	// core: remember (put_kv, put_node, put_edge), recall (context,
	// get_node, get_kv), find (search, related, impact), revise (supersede),
	// look back (history).
	"core": {"context", "search", "related", "impact", "put_kv", "put_node", "put_edge",
		"get_node", "get_kv", "supersede", "history"},
	// memory: the store's own reads and writes.
	"memory": {"put_node", "get_node", "delete_node", "supersede", "put_edge", "delete_edge",
		"get_out", "get_in", "put_kv", "get_kv", "list_kv", "delete_kv", "batch", "history",
		"diff_since", "list_relations", "add_relation", "stats", "check", "ingest"},
	// analysis: the engines and context packs, and feedback on their
	// answers (off by default in the ranking, SPEC.md §8.2.2).
	"analysis": {"context", "related", "impact", "pagerank", "search", "resonate", "feedback"},
	// reference: the reference memory server's nine tools, a drop-in for
	// @modelcontextprotocol/server-memory.
	"reference": {"create_entities", "create_relations", "add_observations", "delete_entities",
		"delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"},
}

// DefaultTools is the tool set of `memctl mcp` without --tools.
const DefaultTools = "core"

// ToolSelection is the set of tools a server offers.
type ToolSelection struct {
	all           bool
	with, without map[string]bool
}

// offers reports whether the selection holds tool name.
func (t ToolSelection) offers(name string) bool {
	return (t.all || t.with[name]) && !t.without[name]
}

// knownTools is every tool of every set.
func knownTools() []string {
	var names []string
	for _, set := range toolSets {
		for _, n := range set {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// ParseTools reads a --tools value: comma-separated set names (core,
// memory, analysis, reference, all) and single tools, a tool prefixed by
// "+" added, by "-" left out: "core,+history,-impact", "reference,memory".
func ParseTools(spec string) (ToolSelection, error) {
	sel := ToolSelection{with: map[string]bool{}, without: map[string]bool{}}
	known := knownTools()
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		op := byte('+')
		if item != "" && (item[0] == '+' || item[0] == '-') {
			op, item = item[0], strings.TrimSpace(item[1:])
		}
		var names []string
		switch {
		case item == "all":
			if op == '-' {
				return ToolSelection{}, fmt.Errorf("--tools: -all leaves nothing")
			}
			sel.all = true
			continue
		case toolSets[item] != nil:
			names = toolSets[item]
		case slices.Contains(known, item):
			names = []string{item}
		case item == "":
			return ToolSelection{}, fmt.Errorf("--tools %q: an empty item", spec)
		default:
			return ToolSelection{}, fmt.Errorf("--tools: %q is neither a tool set (%s) nor a tool (%s)",
				item, strings.Join(setNames(), ", "), strings.Join(known, ", "))
		}
		for _, n := range names { // a later item overrides an earlier one
			if op == '-' {
				delete(sel.with, n)
				sel.without[n] = true
			} else {
				sel.with[n] = true
				delete(sel.without, n)
			}
		}
	}
	if !sel.all && len(sel.with) == 0 {
		return ToolSelection{}, fmt.Errorf("--tools %q leaves no tool", spec)
	}
	return sel, nil
}

func setNames() []string {
	names := []string{"all"}
	for n := range toolSets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
