package mcpserver

// The reference memory server's three read tools. They answer as the
// reference does (SPEC.md §10.4): every entity and relation in the order
// they were created, the text content the reference's pretty-printed JSON.
// Unlike the reference, an answer is cut at about graphTokenCap tokens of
// text: the rest follows with the cursor the answer names, in its text as
// well as in nextCursor, so an agent that knows nothing of cursors is told.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the memory read tools.
const (
	// graphTokenCap bounds the text of one answer (o200k tokens): below
	// the 25,000 that common clients cut a tool result at, far above what
	// a memory of a few hundred entities needs.
	graphTokenCap  = 20000
	maxGraphLimit  = 10000 // an explicit limit of items per answer
	maxSearchQuery = 2048  // the reference's limit on a query
	maxOpenNames   = 10000
)

// readScope is the scope filter of a read: "" matches every scope.
func (s *Server) readScope(a ScopeArg) string {
	switch a.Scope {
	case "*":
		return ""
	case "":
		return s.opts.Defaults.Scope
	}
	return a.Scope
}

// Graph is the answer of read_graph, search_nodes and open_nodes.
type Graph struct {
	Entities       []EntityRecord        `json:"entities"`
	Relations      []GraphRelationRecord `json:"relations"`
	Rev            uint64                `json:"rev" jsonschema:"the revision read"`
	NextCursor     string                `json:"nextCursor,omitempty" jsonschema:"present when the answer was cut: call the tool again with the same arguments and this cursor for the rest"`
	TotalEntities  int                   `json:"totalEntities,omitempty" jsonschema:"with nextCursor: the entities of the whole answer"`
	TotalRelations int                   `json:"totalRelations,omitempty" jsonschema:"with nextCursor: the relations of the whole answer"`

	// more is the sentence the text content ends with when the answer was cut.
	more string
}

// Text is the reference's text content: the graph pretty-printed as
// JSON.stringify(graph, null, 2) prints it, with the reference's fields
// only, followed by how to read the rest when the answer was cut.
func (g Graph) Text() string {
	t := prettyJSON(refGraph{Entities: refEntities(g.Entities), Relations: refRelations(g.Relations)})
	if g.more != "" {
		t += "\n\n" + g.more
	}
	return t
}

type refEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type refGraph struct {
	Entities  []refEntity     `json:"entities"`
	Relations []GraphRelation `json:"relations"`
}

func refEntities(es []EntityRecord) []refEntity {
	out := make([]refEntity, len(es))
	for i, e := range es {
		out[i] = refEntity{e.Name, e.EntityType, e.Observations}
	}
	return out
}

func refRelations(rs []GraphRelationRecord) []GraphRelation {
	out := make([]GraphRelation, len(rs))
	for i, r := range rs {
		out[i] = GraphRelation{r.From, r.To, r.RelationType}
	}
	return out
}

// prettyJSON is v as JavaScript's JSON.stringify(v, null, 2) writes it
// (two-space indent, no HTML escaping).
func prettyJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%q", err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ReadGraphArgs: read_graph.
type ReadGraphArgs struct {
	Cursor string `json:"cursor,omitempty" jsonschema:"only when an earlier answer was cut: its nextCursor"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many entities and relations together per answer (default: as many as fit in about 20000 tokens)"`
	ScopeArg
	ViewArgs
}

// graphCursor is a position in an answer: the revision the first part
// read and how many items (entities, then relations) earlier parts held.
type graphCursor struct {
	rev    lmdbstore.Revision
	offset int
}

func (c graphCursor) String() string { return fmt.Sprintf("%d:%d", c.rev, c.offset) }

func parseGraphCursor(s string) (graphCursor, error) {
	r, o, ok := strings.Cut(s, ":")
	rev, err1 := strconv.ParseUint(r, 10, 64)
	off, err2 := strconv.Atoi(o)
	if !ok || err1 != nil || err2 != nil || off < 0 {
		return graphCursor{}, invalidArg("cursor %q is not one this tool returned", s)
	}
	return graphCursor{lmdbstore.Revision(rev), off}, nil
}

// pageView is the view a paged read sees: a cursor pins the revision of
// the answer's first part.
func pageView(cursor string, view ViewArgs) (graphCursor, ViewArgs, error) {
	if cursor == "" {
		return graphCursor{}, view, nil
	}
	c, err := parseGraphCursor(cursor)
	if err != nil {
		return c, view, err
	}
	if view.AtRev != nil || view.AtTime != "" {
		return c, view, invalidArg("a cursor already fixes the revision: give cursor or at_rev/at_time, not both")
	}
	rev := uint64(c.rev)
	view.AtRev = &rev
	return c, view, nil
}

func (s *Server) readGraph(_ context.Context, a *ReadGraphArgs) (Graph, error) {
	if a.Limit < 0 || a.Limit > maxGraphLimit {
		return Graph{}, invalidArg("limit must be between 1 and %d", maxGraphLimit)
	}
	from, view, err := pageView(a.Cursor, a.ViewArgs)
	if err != nil {
		return Graph{}, err
	}
	scope := s.readScope(a.ScopeArg)
	var res Graph
	err = s.read(view, func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error {
		ents, rels, err := s.wholeGraph(r, at, scope)
		if err != nil {
			return err
		}
		res = page(ents, rels, rev, from.offset, a.Limit, func(cursor string) string {
			return fmt.Sprintf(`call read_graph with {"cursor": %q}`, cursor)
		})
		return nil
	})
	return res, err
}

// wholeGraph is every entity of scope ("" every scope) and every relation
// with its own scope or an end among them (every live edge when scope is
// ""), in creation order.
func (s *Server) wholeGraph(r *lmdbstore.ReadTxn, at lmdbstore.At, scope string) ([]EntityRecord, []GraphRelationRecord, error) {
	var ents []EntityRecord
	listed := map[string]bool{}
	err := r.ScanNodes(at, func(n lmdbstore.Node) error {
		if scope != "" && n.Scope != scope {
			return nil
		}
		ents = append(ents, entityRecord(n))
		listed[n.Key] = true
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var rels []GraphRelationRecord
	err = r.ScanEdges(at, func(e lmdbstore.Edge) error {
		src, rel, dst, err := r.EdgeKeys(e)
		if err != nil {
			return err
		}
		full, err := r.GetEdge(src, rel, dst, at)
		if err != nil {
			return err
		}
		if scope != "" && full.Scope != scope && !listed[src] && !listed[dst] {
			return nil
		}
		rels = append(rels, relationRecord(src, rel, dst, full))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ents, rels, creationOrder(r, ents, rels)
}

// page is the part of an answer that starts at offset: entities, then
// relations, as many as fit in graphTokenCap tokens of text (at least one
// item) and at most limit (0: no limit). more phrases the call that reads
// the rest.
func page(ents []EntityRecord, rels []GraphRelationRecord, rev lmdbstore.Revision, offset, limit int, more func(cursor string) string) Graph {
	g := Graph{Entities: []EntityRecord{}, Relations: []GraphRelationRecord{}, Rev: uint64(rev)}
	total := len(ents) + len(rels)
	enc := bpe.O200kBase()
	tokens := 16 // the frame: braces, the two member names, the sentence's share
	i := min(offset, total)
	for ; i < total; i++ {
		if limit > 0 && i-offset == limit {
			break
		}
		var item any
		if i < len(ents) {
			item = refEntities(ents[i : i+1])[0]
		} else {
			item = refRelations(rels[i-len(ents) : i-len(ents)+1])[0]
		}
		b, _ := json.MarshalIndent(item, "    ", "  ")
		tokens += enc.Count(string(b)) + 2
		if tokens > graphTokenCap && i > offset {
			break
		}
		if i < len(ents) {
			g.Entities = append(g.Entities, ents[i])
		} else {
			g.Relations = append(g.Relations, rels[i-len(ents)])
		}
	}
	if i < total {
		g.NextCursor = graphCursor{rev, i}.String()
		g.TotalEntities, g.TotalRelations = len(ents), len(rels)
		g.more = fmt.Sprintf("This answer is cut to fit: it holds items %d to %d of %d (%d entities, then %d relations). For the rest, %s.",
			offset+1, i, total, len(ents), len(rels), more(g.NextCursor))
	}
	return g
}

// relationRecord is the edge src -rel-> dst as a relation.
func relationRecord(src, rel, dst string, e lmdbstore.EdgeRecord) GraphRelationRecord {
	return GraphRelationRecord{From: src, To: dst, RelationType: relationType(rel, e.Payload),
		CreatedAt: records.Time(e.CreatedTS), Rev: uint64(e.Rev), rel: rel, createdRev: e.CreatedRev}
}

// errLogRead stops a log read at the end of the revision it wanted.
var errLogRead = errors.New("revision read")

// creationOrder sorts entities and relations in the order they were
// created, as the reference server's file keeps them: by the revision that
// created them, then by their place in that revision's log.
func creationOrder(r *lmdbstore.ReadTxn, ents []EntityRecord, rels []GraphRelationRecord) error {
	perRev := map[lmdbstore.Revision]int{}
	for _, e := range ents {
		perRev[e.createdRev]++
	}
	for _, e := range rels {
		perRev[e.createdRev]++
	}
	type item struct{ node, src, rel, dst string }
	pos := map[item]int{}
	for rev, n := range perRev {
		if n < 2 || rev == 0 {
			continue // alone in its revision: its place there does not matter
		}
		i := 0
		err := r.DiffSince(lmdbstore.AtRevision(rev-1), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			if op.Rev != rev {
				return errLogRead
			}
			var k item
			switch op.Kind {
			case lmdbstore.OpPutNode:
				k = item{node: op.NodeKey}
			case lmdbstore.OpPutEdge:
				k = item{src: op.Src, rel: op.Rel, dst: op.Dst}
			default:
				return nil
			}
			if _, ok := pos[k]; !ok {
				pos[k] = i
			}
			i++
			return nil
		})
		if err != nil && err != errLogRead {
			return err
		}
	}
	slices.SortStableFunc(ents, func(a, b EntityRecord) int {
		return cmp.Or(cmp.Compare(a.createdRev, b.createdRev), cmp.Compare(pos[item{node: a.Name}], pos[item{node: b.Name}]))
	})
	slices.SortStableFunc(rels, func(a, b GraphRelationRecord) int {
		return cmp.Or(cmp.Compare(a.createdRev, b.createdRev),
			cmp.Compare(pos[item{src: a.From, rel: a.rel, dst: a.To}], pos[item{src: b.From, rel: b.rel, dst: b.To}]))
	})
	return nil
}

// graphRelations lists key's out-edges (out) or in-edges as relations.
func (s *Server) graphRelations(r *lmdbstore.ReadTxn, at lmdbstore.At, key string, out bool) ([]GraphRelationRecord, error) {
	list, err := ops.ListEdges(r, ops.EdgesRequest{Key: key, In: !out, At: at, AnyStatus: true})
	if err != nil {
		return nil, err
	}
	rels := make([]GraphRelationRecord, len(list.Edges))
	for i, e := range list.Edges {
		full, err := r.GetEdge(e.Src, e.Rel, e.Dst, at)
		if err != nil {
			return nil, err
		}
		rels[i] = relationRecord(e.Src, e.Rel, e.Dst, full)
	}
	return rels, nil
}

// SearchNodesArgs: search_nodes.
type SearchNodesArgs struct {
	Query  string `json:"query" jsonschema:"the search query to match against entity names, types, and observation content (case-insensitive)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"only when an earlier answer was cut: its nextCursor"`
	ScopeArg
	ViewArgs
}

func (s *Server) searchNodes(_ context.Context, a *SearchNodesArgs) (Graph, error) {
	if len(a.Query) > maxSearchQuery {
		return Graph{}, invalidArg("query is %d bytes, at most %d", len(a.Query), maxSearchQuery)
	}
	from, view, err := pageView(a.Cursor, a.ViewArgs)
	if err != nil {
		return Graph{}, err
	}
	q := strings.ToLower(a.Query)
	scope := s.readScope(a.ScopeArg)
	var res Graph
	err = s.read(view, func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error {
		var found []EntityRecord
		err := r.ScanNodes(at, func(n lmdbstore.Node) error {
			if scope != "" && n.Scope != scope {
				return nil
			}
			if e := entityRecord(n); entityMatches(e, q) {
				found = append(found, e)
			}
			return nil
		})
		if err != nil {
			return err
		}
		rels, err := s.subgraph(r, at, found)
		if err != nil {
			return err
		}
		q, _ := json.Marshal(a.Query)
		res = page(found, rels, rev, from.offset, 0, func(cursor string) string {
			return fmt.Sprintf(`call search_nodes with {"query": %s, "cursor": %q}`, q, cursor)
		})
		return nil
	})
	return res, err
}

func entityMatches(e EntityRecord, q string) bool {
	if strings.Contains(strings.ToLower(e.Name), q) || strings.Contains(strings.ToLower(e.EntityType), q) {
		return true
	}
	for _, o := range e.Observations {
		if strings.Contains(strings.ToLower(o), q) {
			return true
		}
	}
	return false
}

// OpenNodesArgs: open_nodes.
type OpenNodesArgs struct {
	Names  []string `json:"names" jsonschema:"the names of the entities to retrieve"`
	Cursor string   `json:"cursor,omitempty" jsonschema:"only when an earlier answer was cut: its nextCursor"`
	ViewArgs
}

func (s *Server) openNodes(_ context.Context, a *OpenNodesArgs) (Graph, error) {
	if len(a.Names) > maxOpenNames {
		return Graph{}, invalidArg("%d names: at most %d per call", len(a.Names), maxOpenNames)
	}
	from, view, err := pageView(a.Cursor, a.ViewArgs)
	if err != nil {
		return Graph{}, err
	}
	var res Graph
	err = s.read(view, func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error {
		var found []EntityRecord
		seen := map[string]bool{}
		for _, name := range a.Names {
			if seen[name] {
				continue
			}
			seen[name] = true
			n, err := r.GetNode(name, at)
			if err != nil {
				if isNotFoundOrInvalid(err) {
					continue // the reference returns only what exists
				}
				return err
			}
			found = append(found, entityRecord(n))
		}
		rels, err := s.subgraph(r, at, found)
		if err != nil {
			return err
		}
		res = page(found, rels, rev, from.offset, 0, func(cursor string) string {
			return fmt.Sprintf(`call open_nodes with the same names and {"cursor": %q}`, cursor)
		})
		return nil
	})
	return res, err
}

// subgraph sorts entities in creation order and lists every relation with
// at least one end among them, each once, in creation order.
func (s *Server) subgraph(r *lmdbstore.ReadTxn, at lmdbstore.At, entities []EntityRecord) ([]GraphRelationRecord, error) {
	type edgeKey struct{ from, rel, to string }
	seen := map[edgeKey]bool{}
	rels := []GraphRelationRecord{}
	for _, e := range entities {
		for _, out := range []bool{true, false} {
			list, err := s.graphRelations(r, at, e.Name, out)
			if err != nil {
				return nil, err
			}
			for _, rel := range list {
				k := edgeKey{rel.From, rel.rel, rel.To}
				if !seen[k] {
					seen[k] = true
					rels = append(rels, rel)
				}
			}
		}
	}
	return rels, creationOrder(r, entities, rels)
}

func isNotFoundOrInvalid(err error) bool {
	return errors.Is(err, lmdbstore.ErrNotFound) || errors.Is(err, lmdbstore.ErrInvalid)
}

// graphResourceURI is the reference server's resource: the whole graph.
const graphResourceURI = "memory://knowledge-graph"

// addGraphResource offers memory://knowledge-graph as the reference does:
// the whole graph (the server's --scope, as read_graph) pretty-printed.
func (s *Server) addGraphResource() {
	s.mcp.AddResource(&mcp.Resource{URI: graphResourceURI, Name: "knowledge-graph", Title: "Knowledge Graph",
		Description: "The full knowledge graph with all entities and relations", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			var text string
			err := s.read(ViewArgs{}, func(r *lmdbstore.ReadTxn, at lmdbstore.At, _ lmdbstore.Revision) error {
				ents, rels, err := s.wholeGraph(r, at, s.readScope(ScopeArg{}))
				text = prettyJSON(refGraph{Entities: refEntities(ents), Relations: refRelations(rels)})
				return err
			})
			if err != nil {
				return nil, errors.New(describe(err))
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: text}}}, nil
		})
}
