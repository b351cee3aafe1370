package ingest

import (
	"path"
	"slices"
	"strings"
)

// Streaming extraction (GoOptions.Stream): each merge sends what it added
// to the stream, and the extractor's graph keeps those nodes without their
// payloads (finish asks which keys are nodes, nothing more) and none of
// their edges. What finish adds, and the few nodes and edges added outside
// a merge, go last (flushRest). Every batch is in a fixed order, so the
// log record of the load is the same for the same tree.

// streamPending is what the current merge added, until it is sent.
type streamPending struct {
	keys  []string // nodes added to the graph, with payloads until sent
	edges []Edge   // the fragment's edges, deduplicated, in first-added order
	at    map[edgeKey]int32
	// decl: the symbols the merge declared → their file's index in
	// declFiles + 1, kept with each as it is sent (Graph.markSent) rather
	// than in the extractor's syms: declaredIn reads it there.
	decl map[string]uint32
}

// addNode adds n to the graph and, streaming, to what the merge sends.
func (x *extractor) addNode(n Node) {
	x.g.AddNode(n)
	if x.stream != nil {
		x.pend.keys = append(x.pend.keys, n.Key)
	}
}

// addEdges adds a fragment's edges as Graph.AddEdge would (weight 0 is the
// relation's weight, a repeated edge keeps the larger), keeping the order
// they came in.
func (p *streamPending) addEdges(es []Edge) {
	if p.at == nil {
		p.at = make(map[edgeKey]int32, len(es))
	}
	for _, e := range es {
		if e.Weight == 0 {
			e.Weight = RelationWeights[e.Rel]
		}
		k := edgeKey{e.Src, e.Rel, e.Dst}
		if i, ok := p.at[k]; ok {
			p.edges[i].Weight = max(p.edges[i].Weight, e.Weight)
			continue
		}
		p.at[k] = int32(len(p.edges))
		p.edges = append(p.edges, e)
	}
}

// dirsAdded records the directory nodes AddDirs added above file rel:
// those on the way up that still hold their payloads.
func (p *streamPending) dirsAdded(g *Graph, rel string) {
	for dir := path.Dir(rel); ; dir = path.Dir(dir) {
		n, ok := g.Node(DirKey(dir))
		if !ok || n.Payload == nil {
			return
		}
		p.keys = append(p.keys, n.Key)
		if dir == "." {
			return
		}
	}
}

// flushMerged sends what the merge added: its nodes (each once, kept in
// the graph by key alone), its fragment's edges, then the directory
// edges AddDirs put in the graph, sorted.
func (x *extractor) flushMerged() {
	p := &x.pend
	nodes := make([]Node, 0, len(p.keys))
	for _, k := range p.keys {
		n, _ := x.g.Node(k)
		if n.Payload == nil {
			if _, sent := x.g.sentTag(k); !sent && p.decl[k] > 0 {
				x.syms[k] = p.decl[k] - 1 // kept as a node: declaredIn reads syms
			}
			continue // sent already (a key recorded twice)
		}
		nodes = append(nodes, n)
		x.g.markSent(n.Key, p.decl[n.Key])
	}
	edges := p.edges
	if len(x.g.edges) > 0 {
		edges = append(edges, x.g.takeEdges()...)
	}
	x.stream.send(nodes, edges)
	p.keys, p.edges = p.keys[:0], nil
	clear(p.decl)
	if len(p.at) > 1<<16 {
		p.at = nil // the largest package's map goes rather than be cleared at its size for every later one
	} else {
		clear(p.at)
	}
}

// flushRest sends what is left once finish has run: the nodes still
// holding payloads (added outside a merge, or by finish), by key, and
// every edge of the graph (finish's, dangling ones dropped), sorted.
func (x *extractor) flushRest() {
	var nodes []Node
	x.g.EachNode(func(n Node) {
		if n.Payload != nil {
			nodes = append(nodes, n)
		}
	})
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Key, b.Key) })
	x.stream.send(nodes, x.g.takeEdges())
}

// takeEdges removes every edge from g and returns them sorted (Edges).
func (g *Graph) takeEdges() []Edge {
	out := g.Edges()
	clear(g.edges)
	return out
}
