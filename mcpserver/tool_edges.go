package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
)

// PutEdgeArgs: put_edge.
type PutEdgeArgs struct {
	Src     string          `json:"src" jsonschema:"canonical key of the source node (need not exist yet)"`
	Rel     string          `json:"rel" jsonschema:"registered relation name, e.g. calls, imports, defines, decided_for (see list_relations)"`
	Dst     string          `json:"dst" jsonschema:"canonical key of the destination node (need not exist yet)"`
	Weight  *float64        `json:"weight,omitempty" jsonschema:"edge weight, finite and > 0 (default: the relation's default weight)"`
	Payload json.RawMessage `json:"payload,omitempty" jsonschema:"any JSON value stored with the edge"`
	ProvenanceArgs
}

func (s *Server) putEdge(_ context.Context, a *PutEdgeArgs) (records.Commit, error) {
	w, err := checkWeight(a.Weight)
	if err != nil {
		return records.Commit{}, err
	}
	payload := a.Payload
	if string(payload) == "null" {
		payload = nil // an edge payload of null means none (as in batch)
	}
	return s.write(a.ProvenanceArgs, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutEdge(lmdbstore.EdgePut{Src: a.Src, Rel: a.Rel, Dst: a.Dst, Weight: w, Payload: payload})
	})
}

// checkWeight is an optional weight as a float32 (ops.CheckWeight).
func checkWeight(w *float64) (float32, error) {
	f, err := ops.CheckWeight("weight", w)
	if err != nil {
		return 0, invalidArg("%v", err)
	}
	return f, nil
}

// EdgeArgs: delete_edge.
type EdgeArgs struct {
	Src string `json:"src" jsonschema:"canonical key of the source node"`
	Rel string `json:"rel" jsonschema:"relation name"`
	Dst string `json:"dst" jsonschema:"canonical key of the destination node"`
	ProvenanceArgs
}

func (s *Server) deleteEdge(_ context.Context, a *EdgeArgs) (records.Commit, error) {
	return s.write(a.ProvenanceArgs, func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteEdge(a.Src, a.Rel, a.Dst)
	})
}

// Default and largest page of get_out / get_in.
const (
	defaultEdgeLimit = 1000
	maxEdgeLimit     = 10000
)

// NeighboursArgs: get_out, get_in.
type NeighboursArgs struct {
	Key    string `json:"key" jsonschema:"canonical key of the node"`
	Rel    string `json:"rel,omitempty" jsonschema:"only edges of this relation"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many edges (default 1000, at most 10000)"`
	Offset int    `json:"offset,omitempty" jsonschema:"skip this many edges of the ordered list (pass next_offset, with at_rev set to the rev returned, to page)"`
	ViewArgs
	ListStatusArgs
}

// EdgeList is the answer of get_out and get_in.
type EdgeList struct {
	Rev        uint64         `json:"rev" jsonschema:"the revision the read saw"`
	Total      int            `json:"total" jsonschema:"number of matching edges"`
	Edges      []records.Edge `json:"edges" jsonschema:"ordered by relation name, then the other end's key"`
	NextOffset int            `json:"next_offset,omitempty" jsonschema:"present when more edges follow: the offset of the next page"`
}

func (s *Server) getOut(_ context.Context, a *NeighboursArgs) (EdgeList, error) {
	return s.neighbours(a, true)
}

func (s *Server) getIn(_ context.Context, a *NeighboursArgs) (EdgeList, error) {
	return s.neighbours(a, false)
}

func pageBounds(limit, offset, def, max int) (int, int, error) {
	if limit < 0 || offset < 0 {
		return 0, 0, invalidArg("limit and offset must be >= 0")
	}
	if limit == 0 {
		limit = def
	}
	if limit > max {
		return 0, 0, invalidArg("limit %d is above the maximum %d", limit, max)
	}
	return limit, offset, nil
}

func (s *Server) neighbours(a *NeighboursArgs, out bool) (EdgeList, error) {
	limit, offset, err := pageBounds(a.Limit, a.Offset, defaultEdgeLimit, maxEdgeLimit)
	if err != nil {
		return EdgeList{}, err
	}
	filter, err := a.filter(s.opts.Now)
	if err != nil {
		return EdgeList{}, err
	}
	var res EdgeList
	err = s.read(a.ViewArgs, func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error {
		var es []lmdbstore.Edge
		var err error
		if out {
			es, err = r.GetOut(a.Key, a.Rel, at)
		} else {
			es, err = r.GetIn(a.Key, a.Rel, at)
		}
		if err != nil {
			return err
		}
		recs, err := s.edgeRecords(r, es, out)
		if err != nil {
			return err
		}
		if recs, err = currentPeers(r, at, recs, out, filter); err != nil {
			return err
		}
		res = EdgeList{Rev: uint64(rev), Total: len(recs), Edges: []records.Edge{}}
		if offset < len(recs) {
			end := min(offset+limit, len(recs))
			res.Edges = recs[offset:end]
			if end < len(recs) {
				res.NextOffset = end
			}
		}
		return addPayloads(r, at, res.Edges)
	})
	return res, err
}

// edgeRecords resolves edges to records (keys, relation names, commit
// times; no payloads) in output order: relation name, then the peer's key.
func (s *Server) edgeRecords(r *lmdbstore.ReadTxn, es []lmdbstore.Edge, out bool) ([]records.Edge, error) {
	recs := make([]records.Edge, 0, len(es))
	for _, e := range es {
		rec, err := s.edgeRecord(r, e)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b records.Edge) int {
		if c := cmp.Compare(a.Rel, b.Rel); c != 0 {
			return c
		}
		if out {
			return cmp.Compare(a.Dst, b.Dst)
		}
		return cmp.Compare(a.Src, b.Src)
	})
	return recs, nil
}

// addPayloads reads the payload of each edge (one lookup each, so only for
// the edges returned).
func addPayloads(r *lmdbstore.ReadTxn, at lmdbstore.At, recs []records.Edge) error {
	for i := range recs {
		full, err := r.GetEdge(recs[i].Src, recs[i].Rel, recs[i].Dst, at)
		if err != nil {
			return err
		}
		recs[i].Payload = records.OptionalPayload(full.Payload)
	}
	return nil
}

// edgeRecord is e without its payload.
func (s *Server) edgeRecord(r *lmdbstore.ReadTxn, e lmdbstore.Edge) (records.Edge, error) {
	src, err := s.fixed.key(r, e.Src)
	if err != nil {
		return records.Edge{}, err
	}
	dst, err := s.fixed.key(r, e.Dst)
	if err != nil {
		return records.Edge{}, err
	}
	rel, err := s.fixed.rel(r, e.Rel)
	if err != nil {
		return records.Edge{}, err
	}
	t, err := s.fixed.time(r, e.Rev)
	if err != nil {
		return records.Edge{}, err
	}
	return records.Edge{Src: src, Rel: rel, Dst: dst, Rev: uint64(e.Rev), TS: records.Time(t), Weight: Weight(e.Weight)}, nil
}

// currentPeers leaves out edges whose listed item (dst for out-edges, src
// for in-edges) is superseded or expired (SPEC.md §4) and f does not
// include it, and gives the rest the listed item's status when it is not
// plainly current, as `memctl get-out`/`get-in` do; supersedes edges
// always stay.
func currentPeers(r *lmdbstore.ReadTxn, at lmdbstore.At, recs []records.Edge, out bool, f lmdbstore.StatusFilter) ([]records.Edge, error) {
	kept := recs[:0]
	for _, e := range recs {
		peer := e.Dst
		if !out {
			peer = e.Src
		}
		st, err := r.Status(peer, at, f.ValidAt)
		if err != nil {
			return nil, err
		}
		if e.Rel != "supersedes" && !f.Shows(st) {
			continue
		}
		if !st.Current() || len(st.Contradicts) > 0 {
			ps := records.StatusOf(st)
			e.PeerStatus = &ps
		}
		kept = append(kept, e)
	}
	return kept, nil
}
