package mcpserver

import (
	"context"
	"encoding/json"

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
		list, err := ops.ListEdges(r, ops.EdgesRequest{
			Key: a.Key, Rel: a.Rel, In: !out, At: at, Filter: filter, Limit: limit, Offset: offset,
		})
		res = EdgeList{Rev: uint64(rev), Total: list.Total, Edges: list.Edges, NextOffset: list.NextOffset}
		return err
	})
	return res, err
}
