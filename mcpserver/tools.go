package mcpserver

// The tool list: names, titles, descriptions (what an agent reads to pick
// a tool) and annotations. SPEC.md §10 documents each.

func (s *Server) registerStoreTools() {
	addTool(s, toolDef{name: "put_node", title: "Remember (node)", kind: additive,
		description: "Remember a fact or decision as a node: key decision:TOPIC, fact:TOPIC, or the key of the code it is about " +
			"(file:PATH, sym:PKG.NAME); payload: any JSON (e.g. {\"text\": ...}). Link it with put_edge. " +
			"Replacing a key keeps the old version in history",
		lean: []string{"key", "type", "payload"}}, s.putNode)
	addTool(s, toolDef{name: "get_node", title: "Get node", kind: readOnly,
		description: "Read one node by exact key: type, payload, provenance, and whether it is current or superseded (by what)",
		lean:        []string{"key"}}, s.getNode)
	addTool(s, toolDef{name: "delete_node", title: "Delete node", kind: destructive,
		description: "Delete a node (its edges stay, pointing at a missing node). Earlier versions stay readable with at_rev. Returns the revision."}, s.deleteNode)
	addTool(s, toolDef{name: "supersede", title: "Supersede", kind: additive,
		description: "When a decision or fact is replaced (revised, lifted, wrong), record that new supersedes old, both existing: " +
			"old then drops out of context, listings and the engines, and reads say by what. Node keys or kv:SCOPE/NS/KEY",
		lean: []string{"old", "new"}}, s.supersede)
	addTool(s, toolDef{name: "feedback", title: "Feedback on an answer", kind: additive, description: "Say which items of a related or context answer were useful or useless for its target: the related ranking (related and context with feedback true) learns from it, and forgets it over later feedback. One revision. SPEC 8.2.2."}, s.feedback)
	addTool(s, toolDef{name: "put_edge", title: "Put edge", kind: additive,
		description: "Link two keys: src -rel-> dst. For memory: constrains (a rule on code), decided_for (a decision for code), " +
			"derived_from, contradicts; code relations: calls, imports, defines, references, tests. Ends need not exist yet",
		lean: []string{"src", "rel", "dst"}}, s.putEdge)
	addTool(s, toolDef{name: "delete_edge", title: "Delete edge", kind: destructive,
		description: "Delete the edge src -rel-> dst. Returns the revision."}, s.deleteEdge)
	addTool(s, toolDef{name: "get_out", title: "Out-edges", kind: readOnly,
		description: "List the edges leaving a node (what it uses, calls, imports, defines…), optionally of one relation, " +
			"ordered by relation then destination key; paged by limit/offset."}, s.getOut)
	addTool(s, toolDef{name: "get_in", title: "In-edges", kind: readOnly,
		description: "List the edges arriving at a node (who uses, calls, imports it…), optionally of one relation, " +
			"ordered by relation then source key; paged by limit/offset."}, s.getIn)
	addTool(s, toolDef{name: "put_kv", title: "Remember (decision)", kind: additive,
		description: "Remember a decision, constraint or procedure as a versioned entry (scope, namespace, key) -> JSON payload, " +
			"e.g. namespace decisions, payload {\"text\": ..., \"applies_to\": [\"cli/**\"]}: context then shows it for those paths",
		lean: []string{"scope", "namespace", "key", "payload"}}, s.putKV)
	addTool(s, toolDef{name: "get_kv", title: "Get kv entry", kind: readOnly,
		description: "Read one decision/constraint/procedure entry by scope, namespace and key",
		lean:        []string{"scope", "namespace", "key"}}, s.getKV)
	addTool(s, toolDef{name: "list_kv", title: "List kv entries", kind: readOnly,
		description: "List the live key/value entries of a namespace, by key."}, s.listKV)
	addTool(s, toolDef{name: "delete_kv", title: "Delete kv entry", kind: destructive,
		description: "Delete a key/value entry. Returns the revision."}, s.deleteKV)
	addTool(s, toolDef{name: "batch", title: "Batch of operations", kind: destructive,
		description: "Apply a list of operations (put_node, del_node, put_edge, del_edge, put_kv, del_kv, add_rel; the shape diff_since returns) " +
			"as one revision: all or nothing. Any invalid operation fails the whole batch, naming it."}, s.batch)
	addTool(s, toolDef{name: "history", title: "History", kind: readOnly,
		description: "Look back: every version of a node (key), kv entry (namespace, key) or edge (src, rel, dst), oldest first, " +
			"with revision, time, payload and who wrote it",
		lean: []string{"key", "namespace", "scope", "src", "rel", "dst"}}, s.history)
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
		description: "Rank what else matters for a file, symbol or decision (spreading activation over the graph); files: true for related files. " +
			"Use before editing to find code and notes you would otherwise miss",
		lean: []string{"queries", "top", "files"}}, s.related)
	addTool(s, toolDef{name: "impact", title: "Blast radius", kind: readOnly,
		description: "Who is affected if this node changes (direction in, default; out: what it depends on), with hop distance and score. " +
			"Use before changing an API or a shared file",
		lean: []string{"key", "direction", "depth"}}, s.impact)
	addTool(s, toolDef{name: "pagerank", title: "Central nodes", kind: readOnly,
		description: "Rank every node by PageRank: the most central files, symbols and decisions."}, s.pagerank)
	addTool(s, toolDef{name: "search", title: "Find keys", kind: readOnly,
		description: "Find node keys from words or partial names (exact, prefix, substring, fuzzy), to get the keys other tools take",
		lean:        []string{"queries"}}, s.search)
	addTool(s, toolDef{name: "resonate", title: "Resonance", kind: readOnly,
		description: "Standing-wave resonance from starting points: nodes where waves from them reinforce; with sweep, the resonant frequencies."}, s.resonate)
	addTool(s, toolDef{name: "context", title: "Recall: what applies here", kind: readOnly,
		description: "Recall: call before working on a file, directory or symbol. Returns, within a token budget, the constraints and " +
			"decisions that apply there, related code, what changed since the last run and what earlier tasks tried, as Markdown",
		lean: []string{"targets", "budget"}}, s.context)
}

func (s *Server) registerMemoryTools() {
	if offersReference(s.opts.Tools) {
		s.addGraphResource()
	}
	addTool(s, toolDef{name: "create_entities", reference: true, title: "Create Entities", kind: additive,
		description: "Create multiple new entities in the knowledge graph"}, s.createEntities)
	addTool(s, toolDef{name: "create_relations", reference: true, title: "Create Relations", kind: additive,
		description: "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice"}, s.createRelations)
	addTool(s, toolDef{name: "add_observations", reference: true, title: "Add Observations", kind: additive,
		description: "Add new observations to existing entities in the knowledge graph"}, s.addObservations)
	addTool(s, toolDef{name: "delete_entities", reference: true, title: "Delete Entities", kind: destructive,
		description: "Delete multiple entities and their associated relations from the knowledge graph"}, s.deleteEntities)
	addTool(s, toolDef{name: "delete_observations", reference: true, title: "Delete Observations", kind: destructive,
		description: "Delete specific observations from entities in the knowledge graph"}, s.deleteObservations)
	addTool(s, toolDef{name: "delete_relations", reference: true, title: "Delete Relations", kind: destructive,
		description: "Delete multiple relations from the knowledge graph"}, s.deleteRelations)
	addTool(s, toolDef{name: "read_graph", reference: true, title: "Read Graph", kind: readOnly,
		description: "Read the entire knowledge graph"}, s.readGraph)
	addTool(s, toolDef{name: "search_nodes", reference: true, title: "Search Nodes", kind: readOnly,
		description: "Search for nodes in the knowledge graph based on a query"}, s.searchNodes)
	addTool(s, toolDef{name: "open_nodes", reference: true, title: "Open Nodes", kind: readOnly,
		description: "Open specific nodes in the knowledge graph by their names"}, s.openNodes)
}
