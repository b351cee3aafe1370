package ops

// Edge listing (get-out, get-in; SPEC.md §6.3 "edge", §4): a node's live
// edges in one direction, resolved from ids to keys, relation names and
// commit times, filtered by the status of the listed item (the peer), in
// the order (relation name, peer key), so output depends on neither ids
// nor where the edges came from. Keys and relation names come from the
// store's own caches (lmdbstore keeps them: they never change once
// committed); nothing here caches across calls.

import (
	"cmp"
	"slices"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/roles"
)

// EdgesRequest selects the edges to list.
type EdgesRequest struct {
	Key    string
	Rel    string // only this relation ("": all)
	In     bool   // in-edges (get-in); out-edges otherwise
	At     lmdbstore.At
	Filter lmdbstore.StatusFilter
	// AnyStatus lists every live edge whatever its peer's status, without
	// reading statuses (Filter is ignored, Peers and PeerStatus are empty).
	AnyStatus bool
	Limit     int // at most this many edges of the ordered list (0: all)
	Offset    int // skip this many first
}

// EdgeList is a page of a node's edges.
type EdgeList struct {
	Total      int            // matching edges, all pages
	Edges      []records.Edge // the page, never nil
	NextOffset int            // the offset of the next page; 0: none
	// Peers[i] is the status of the item Edges[i] lists (dst of an
	// out-edge, src of an in-edge), for a surface's own rendering.
	Peers []lmdbstore.Status
}

// ListEdges lists the edges req selects in r.
func ListEdges(r *lmdbstore.ReadTxn, req EdgesRequest) (EdgeList, error) {
	if req.Limit < 0 || req.Offset < 0 {
		return EdgeList{}, invalidf("limit and offset must be >= 0")
	}
	var es []lmdbstore.Edge
	var err error
	if req.In {
		es, err = r.GetIn(req.Key, req.Rel, req.At)
	} else {
		es, err = r.GetOut(req.Key, req.Rel, req.At)
	}
	if err != nil {
		return EdgeList{}, err
	}
	type listed struct {
		rec  records.Edge
		peer lmdbstore.Status
	}
	times := make(map[lmdbstore.Revision]string) // edges of one node share few revisions
	all := make([]listed, 0, len(es))
	for _, e := range es {
		rec, err := edgeRecord(r, e, times)
		if err != nil {
			return EdgeList{}, err
		}
		if req.AnyStatus {
			all = append(all, listed{rec: rec})
			continue
		}
		peer := rec.Dst
		if req.In {
			peer = rec.Src
		}
		st, err := r.Status(peer, req.At, req.Filter.ValidAt)
		if err != nil {
			return EdgeList{}, err
		}
		if rec.Rel != roles.RelSupersedes && !req.Filter.Shows(st) {
			continue // supersedes edges are always listed
		}
		if !st.Current() || len(st.Contradicts) > 0 {
			ps := records.StatusOf(st)
			rec.PeerStatus = &ps
		}
		all = append(all, listed{rec, st})
	}
	slices.SortFunc(all, func(a, b listed) int {
		if c := cmp.Compare(a.rec.Rel, b.rec.Rel); c != 0 {
			return c
		}
		if req.In {
			return cmp.Compare(a.rec.Src, b.rec.Src)
		}
		return cmp.Compare(a.rec.Dst, b.rec.Dst)
	})
	res := EdgeList{Total: len(all), Edges: []records.Edge{}}
	if req.Offset >= len(all) {
		return res, nil
	}
	end := len(all)
	if req.Limit > 0 && req.Offset+req.Limit < end {
		end = req.Offset + req.Limit
		res.NextOffset = end
	}
	res.Edges = make([]records.Edge, 0, end-req.Offset)
	if !req.AnyStatus {
		res.Peers = make([]lmdbstore.Status, 0, end-req.Offset)
	}
	for _, x := range all[req.Offset:end] {
		// The payload: one lookup each, so only for the edges returned.
		full, err := r.GetEdge(x.rec.Src, x.rec.Rel, x.rec.Dst, req.At)
		if err != nil {
			return EdgeList{}, err
		}
		x.rec.Payload = records.OptionalPayload(full.Payload)
		res.Edges = append(res.Edges, x.rec)
		if !req.AnyStatus {
			res.Peers = append(res.Peers, x.peer)
		}
	}
	return res, nil
}

// edgeRecord is e without its payload; times memoises commit times.
func edgeRecord(r *lmdbstore.ReadTxn, e lmdbstore.Edge, times map[lmdbstore.Revision]string) (records.Edge, error) {
	src, rel, dst, err := r.EdgeKeys(e)
	if err != nil {
		return records.Edge{}, err
	}
	ts, ok := times[e.Rev]
	if !ok {
		t, err := r.RevisionTime(e.Rev)
		if err != nil {
			return records.Edge{}, err
		}
		ts = records.Time(t)
		times[e.Rev] = ts
	}
	return records.Edge{Src: src, Rel: rel, Dst: dst, Rev: uint64(e.Rev), TS: ts, Weight: records.Weight(e.Weight)}, nil
}
