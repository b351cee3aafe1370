package mcpserver

// The reference memory server's three read tools. Unlike the reference,
// read_graph is paginated and every answer is bounded: an agent never
// receives the whole store at once.

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
)

// errPageFull stops a scan once a page is complete.
var errPageFull = errors.New("page full")

// Page sizes of the memory read tools.
const (
	defaultGraphLimit   = 100  // read_graph items (entities + relations) per page
	maxGraphLimit       = 1000 //
	defaultSearchLimit  = 50   // search_nodes entities
	maxSearchLimit      = 500  //
	maxRelatedRelations = 1000 // relations returned by search_nodes / open_nodes
	maxSearchQuery      = 2048 // the reference's limit on a query
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
	Entities   []EntityRecord        `json:"entities"`
	Relations  []GraphRelationRecord `json:"relations"`
	Rev        uint64                `json:"rev" jsonschema:"the revision read"`
	NextCursor string                `json:"nextCursor,omitempty" jsonschema:"read_graph: present when more follows; pass it as cursor"`
	Truncated  bool                  `json:"truncated,omitempty" jsonschema:"search_nodes/open_nodes: true when the answer was cut at its limit"`
}

// ReadGraphArgs: read_graph.
type ReadGraphArgs struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many entities and relations together (default 100, at most 1000)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"continue where the previous page stopped (its nextCursor); pages of one cursor chain all read the same revision"`
	ScopeArg
	ViewArgs
}

// graphCursor is a read_graph position: the revision of the first page,
// the node id to resume at and how many of its items (its entity, then its
// relations) earlier pages returned.
type graphCursor struct {
	rev  lmdbstore.Revision
	id   lmdbstore.NodeID
	done int
}

func (c graphCursor) String() string {
	return fmt.Sprintf("%d:%016x:%d", c.rev, uint64(c.id), c.done)
}

func parseGraphCursor(s string) (graphCursor, error) {
	parts := strings.Split(s, ":")
	bad := invalidArg("cursor %q is not one read_graph returned", s)
	if len(parts) != 3 || len(parts[1]) != 16 {
		return graphCursor{}, bad
	}
	rev, err1 := strconv.ParseUint(parts[0], 10, 64)
	id, err2 := hex.DecodeString(parts[1])
	done, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || done < 0 {
		return graphCursor{}, bad
	}
	var v uint64
	for _, b := range id {
		v = v<<8 | uint64(b)
	}
	return graphCursor{lmdbstore.Revision(rev), lmdbstore.NodeID(v), done}, nil
}

func (s *Server) readGraph(_ context.Context, a *ReadGraphArgs) (Graph, error) {
	limit, _, err := pageBounds(a.Limit, 0, defaultGraphLimit, maxGraphLimit)
	if err != nil {
		return Graph{}, err
	}
	view := a.ViewArgs
	var from graphCursor
	if a.Cursor != "" {
		if from, err = parseGraphCursor(a.Cursor); err != nil {
			return Graph{}, err
		}
		if view.AtRev != nil || view.AtTime != "" {
			return Graph{}, invalidArg("a cursor already fixes the revision: give cursor or at_rev/at_time, not both")
		}
		rev := uint64(from.rev)
		view.AtRev = &rev
	}
	scope := s.readScope(a.ScopeArg)
	res := Graph{Entities: []EntityRecord{}, Relations: []GraphRelationRecord{}}
	err = s.read(view, func(r *lmdbstore.ReadTxn, _ lmdbstore.At, rev lmdbstore.Revision) error {
		res.Rev = uint64(rev)
		at := lmdbstore.AtRevision(rev) // every page of a chain reads this revision
		items := 0
		err := r.ScanNodes(at, func(n lmdbstore.Node) error {
			if a.Cursor != "" && n.ID < from.id {
				return nil
			}
			if scope != "" && n.Scope != scope {
				return nil
			}
			done := 0 // items of this node already returned: its entity, then its relations
			if a.Cursor != "" && n.ID == from.id {
				done = from.done
			}
			if items == limit {
				res.NextCursor = graphCursor{rev, n.ID, done}.String()
				return errPageFull
			}
			if done == 0 {
				res.Entities = append(res.Entities, entityRecord(n))
				items++
				done++
			}
			rels, err := s.graphRelations(r, at, n.Key, true)
			if err != nil {
				return err
			}
			for i := done - 1; i < len(rels); i++ {
				if items == limit {
					res.NextCursor = graphCursor{rev, n.ID, i + 1}.String()
					return errPageFull
				}
				res.Relations = append(res.Relations, rels[i])
				items++
			}
			return nil
		})
		if err == errPageFull {
			return nil
		}
		return err
	})
	return res, err
}

// graphRelations lists key's out-edges (out) or in-edges as relations, by
// relation name, then the other end's key.
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
		rels[i] = GraphRelationRecord{From: e.Src, To: e.Dst, RelationType: relationType(e.Rel, full.Payload),
			CreatedAt: records.Time(full.CreatedTS), Rev: e.Rev}
	}
	return rels, nil
}

// SearchNodesArgs: search_nodes.
type SearchNodesArgs struct {
	Query string `json:"query" jsonschema:"the search query to match against entity names, types, and observation content (case-insensitive substring)"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many entities (default 50, at most 500)"`
	ScopeArg
	ViewArgs
}

func (s *Server) searchNodes(_ context.Context, a *SearchNodesArgs) (Graph, error) {
	limit, _, err := pageBounds(a.Limit, 0, defaultSearchLimit, maxSearchLimit)
	if err != nil {
		return Graph{}, err
	}
	if len(a.Query) > maxSearchQuery {
		return Graph{}, invalidArg("query is %d bytes, at most %d", len(a.Query), maxSearchQuery)
	}
	q := strings.ToLower(a.Query)
	scope := s.readScope(a.ScopeArg)
	var res Graph
	err = s.read(a.ViewArgs, func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error {
		var found []EntityRecord
		truncated := false
		err := r.ScanNodes(at, func(n lmdbstore.Node) error {
			if scope != "" && n.Scope != scope {
				return nil
			}
			e := entityRecord(n)
			if !entityMatches(e, q) {
				return nil
			}
			if len(found) == limit {
				truncated = true
				return errPageFull
			}
			found = append(found, e)
			return nil
		})
		if err != nil && err != errPageFull {
			return err
		}
		slices.SortFunc(found, func(a, b EntityRecord) int { return cmp.Compare(a.Name, b.Name) })
		res, err = s.subgraph(r, at, rev, found)
		res.Truncated = res.Truncated || truncated
		return err
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
	Names []string `json:"names" jsonschema:"the names of the entities to retrieve"`
	ViewArgs
}

func (s *Server) openNodes(_ context.Context, a *OpenNodesArgs) (Graph, error) {
	if len(a.Names) > maxSearchLimit {
		return Graph{}, invalidArg("%d names: at most %d per call", len(a.Names), maxSearchLimit)
	}
	var res Graph
	err := s.read(a.ViewArgs, func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error {
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
		var err error
		res, err = s.subgraph(r, at, rev, found)
		return err
	})
	return res, err
}

// subgraph is entities plus every relation with at least one end among
// them (each once), at most maxRelatedRelations.
func (s *Server) subgraph(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision, entities []EntityRecord) (Graph, error) {
	g := Graph{Entities: entities, Relations: []GraphRelationRecord{}, Rev: uint64(rev)}
	if g.Entities == nil {
		g.Entities = []EntityRecord{}
	}
	type edgeKey struct{ from, rel, to string }
	seen := map[edgeKey]bool{}
	for _, e := range entities {
		for _, out := range []bool{true, false} {
			rels, err := s.graphRelations(r, at, e.Name, out)
			if err != nil {
				return Graph{}, err
			}
			for _, rel := range rels {
				k := edgeKey{rel.From, rel.RelationType, rel.To}
				if seen[k] {
					continue
				}
				if len(g.Relations) == maxRelatedRelations {
					g.Truncated = true
					return g, nil
				}
				seen[k] = true
				g.Relations = append(g.Relations, rel)
			}
		}
	}
	return g, nil
}

func isNotFoundOrInvalid(err error) bool {
	return errors.Is(err, lmdbstore.ErrNotFound) || errors.Is(err, lmdbstore.ErrInvalid)
}
