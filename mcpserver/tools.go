package mcpserver

// The tool list: names, titles, descriptions (what an agent reads to pick
// a tool) and annotations. SPEC.md §10 documents each.

func (s *Server) registerStoreTools() {
	addTool(s, toolDef{name: "put_node", title: "Put node", kind: additive,
		description: "Create or replace a node: a canonical key (file:path, sym:pkg.Name, decision:topic, …), " +
			"an optional type and an optional JSON payload. The replaced version stays readable (history, at_rev). " +
			"Returns the revision committed."}, s.putNode)
	addTool(s, toolDef{name: "get_node", title: "Get node", kind: readOnly,
		description: "Read one node (type, payload, scope, provenance, revisions, times), at the latest revision or at at_rev / at_time."}, s.getNode)
	addTool(s, toolDef{name: "delete_node", title: "Delete node", kind: destructive,
		description: "Delete a node (its edges stay, pointing at a missing node). Earlier versions stay readable with at_rev. Returns the revision."}, s.deleteNode)
	addTool(s, toolDef{name: "supersede", title: "Supersede", kind: additive,
		description: "Record that new replaces old (a decision revised, a constraint lifted): one revision writing new -supersedes-> old. " +
			"old then reads as history: listing reads, exports, the engines and context leave it out unless asked, get_node/get_kv say by what and since when; " +
			"reads at earlier revisions still see it current. Chains resolve to the newest. Both items must exist; a chain may not loop back. " +
			"Items are node keys or kv entries as kv:SCOPE/NS/KEY. Returns the revision."}, s.supersede)
	addTool(s, toolDef{name: "feedback", title: "Feedback on an answer", kind: additive, description: "Say which items of a related or context answer were useful or useless for its target: the related ranking (related and context with feedback true) learns from it, and forgets it over later feedback. One revision. SPEC 8.2.2."}, s.feedback)
	addTool(s, toolDef{name: "put_edge", title: "Put edge", kind: additive,
		description: "Create or replace the edge src -rel-> dst with an optional weight and JSON payload. " +
			"rel must be a registered relation (list_relations; add_relation registers one); an unknown name fails with the nearest known one suggested. " +
			"Endpoints need not exist as nodes yet. Returns the revision."}, s.putEdge)
	addTool(s, toolDef{name: "delete_edge", title: "Delete edge", kind: destructive,
		description: "Delete the edge src -rel-> dst. Returns the revision."}, s.deleteEdge)
	addTool(s, toolDef{name: "get_out", title: "Out-edges", kind: readOnly,
		description: "List the edges leaving a node (what it uses, calls, imports, defines…), optionally of one relation, " +
			"ordered by relation then destination key; paged by limit/offset."}, s.getOut)
	addTool(s, toolDef{name: "get_in", title: "In-edges", kind: readOnly,
		description: "List the edges arriving at a node (who uses, calls, imports it…), optionally of one relation, " +
			"ordered by relation then source key; paged by limit/offset."}, s.getIn)
	addTool(s, toolDef{name: "put_kv", title: "Put decision / constraint / procedure", kind: additive,
		description: "Record a versioned key/value entry (scope, namespace, key) → JSON payload: decisions, constraints, procedures. " +
			"Returns the revision."}, s.putKV)
	addTool(s, toolDef{name: "get_kv", title: "Get kv entry", kind: readOnly,
		description: "Read one key/value entry, at the latest revision or at at_rev / at_time."}, s.getKV)
	addTool(s, toolDef{name: "list_kv", title: "List kv entries", kind: readOnly,
		description: "List the live key/value entries of a namespace, by key."}, s.listKV)
	addTool(s, toolDef{name: "delete_kv", title: "Delete kv entry", kind: destructive,
		description: "Delete a key/value entry. Returns the revision."}, s.deleteKV)
	addTool(s, toolDef{name: "batch", title: "Batch of operations", kind: destructive,
		description: "Apply a list of operations (put_node, del_node, put_edge, del_edge, put_kv, del_kv, add_rel; the shape diff_since returns) " +
			"as one revision: all or nothing. Any invalid operation fails the whole batch, naming it."}, s.batch)
	addTool(s, toolDef{name: "history", title: "History", kind: readOnly,
		description: "Every version of a node (key), a kv entry (namespace, key) or an edge (src, rel, dst): each put and delete " +
			"with its revision, time, payload and provenance, oldest first."}, s.history)
	addTool(s, toolDef{name: "diff_since", title: "Changes since", kind: readOnly,
		description: "The operations committed after a revision or time, in commit order, optionally only those of one run or task " +
			"(what changed since the last task?). Paged with cursor."}, s.diffSince)
	addTool(s, toolDef{name: "list_relations", title: "Relations", kind: readOnly,
		description: "List the registered relations with their default weights and engine flags."}, s.listRelations)
	addTool(s, toolDef{name: "add_relation", title: "Register relation", kind: additive,
		description: "Register a new relation name for put_edge. Returns the revision and its id."}, s.addRelation)
	addTool(s, toolDef{name: "stats", title: "Store statistics", kind: readOnly,
		description: "Revision, retention horizon, node/edge/kv/relation counts, adjacency and file sizes, warnings."}, s.stats)
	addTool(s, toolDef{name: "check", title: "Integrity check", kind: readOnly,
		description: "Verify every keyspace of the store: integrity problems, warnings and missing nodes (keys referenced by edges with no node)."}, s.check)
	addTool(s, toolDef{name: "ingest", title: "Ingest a code tree", kind: destructive,
		description: "Read a code tree into memory (files, packages, symbols and their relations: defines, calls, imports, implements, tests…): " +
			"Go type-checked, Python, TypeScript, JavaScript and Rust with tree-sitter. Writes what changed since the last ingest as one revision " +
			"(symbols that disappeared are deleted); an unchanged tree writes nothing. Returns per-language counts and the revision."}, s.ingest)
}

func (s *Server) registerAnalysisTools() {
	addTool(s, toolDef{name: "related", title: "Related nodes", kind: readOnly,
		description: "Rank the nodes related to one or more starting points by spreading activation over the graph " +
			"(each query resolves to keys by exact match, prefix, substring or fuzzy match). Use it to find what else matters for a file, symbol or decision."}, s.related)
	addTool(s, toolDef{name: "impact", title: "Blast radius", kind: readOnly,
		description: "List the nodes affected by a change to one node (direction in: who depends on it; out: what it depends on), " +
			"with hop distance and a decaying score."}, s.impact)
	addTool(s, toolDef{name: "pagerank", title: "Central nodes", kind: readOnly,
		description: "Rank every node by PageRank: the most central files, symbols and decisions."}, s.pagerank)
	addTool(s, toolDef{name: "search", title: "Find keys", kind: readOnly,
		description: "Find node keys from strings: exact key, else key prefix, else substring (case-insensitive), else fuzzy trigram match."}, s.search)
	addTool(s, toolDef{name: "resonate", title: "Resonance", kind: readOnly,
		description: "Standing-wave resonance from starting points: nodes where waves from them reinforce; with sweep, the resonant frequencies."}, s.resonate)
	addTool(s, toolDef{name: "context", title: "What applies here", kind: readOnly,
		description: "Ask this before working on a file, directory or symbol: the constraints, decisions and procedures that apply to it " +
			"(linked to it, to what encloses it, or by applies_to globs), the related code ranked by the engines, what changed since the " +
			"previous run, and what earlier tasks attempted, each with provenance, within a token budget. Returns the pack as Markdown and structured."}, s.context)
}

func (s *Server) registerMemoryTools() {
	addTool(s, toolDef{name: "create_entities", title: "Create Entities", kind: additive,
		description: "Create multiple new entities in the knowledge graph"}, s.createEntities)
	addTool(s, toolDef{name: "create_relations", title: "Create Relations", kind: additive,
		description: "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice"}, s.createRelations)
	addTool(s, toolDef{name: "add_observations", title: "Add Observations", kind: additive,
		description: "Add new observations to existing entities in the knowledge graph"}, s.addObservations)
	addTool(s, toolDef{name: "delete_entities", title: "Delete Entities", kind: destructive,
		description: "Delete multiple entities and their associated relations from the knowledge graph"}, s.deleteEntities)
	addTool(s, toolDef{name: "delete_observations", title: "Delete Observations", kind: destructive,
		description: "Delete specific observations from entities in the knowledge graph"}, s.deleteObservations)
	addTool(s, toolDef{name: "delete_relations", title: "Delete Relations", kind: destructive,
		description: "Delete multiple relations from the knowledge graph"}, s.deleteRelations)
	addTool(s, toolDef{name: "read_graph", title: "Read Graph", kind: readOnly,
		description: "Read the knowledge graph, one bounded page at a time (limit, then cursor = nextCursor until it is absent)"}, s.readGraph)
	addTool(s, toolDef{name: "search_nodes", title: "Search Nodes", kind: readOnly,
		description: "Search for nodes in the knowledge graph based on a query"}, s.searchNodes)
	addTool(s, toolDef{name: "open_nodes", title: "Open Nodes", kind: readOnly,
		description: "Open specific nodes in the knowledge graph by their names"}, s.openNodes)
}
