package contextpack

import (
	"encoding/json"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/roles"
)

// related ranks the code neighbourhood of the targets: the related
// profile of activation with its defaults (SPEC.md §8.2.1, what `activate`
// answers: role weights, recency term, per-container cap) from the
// targets over the ranking relations, the places it gives to files filled
// in the order of `activate --files` (fused with lexical similarity),
// keeping files and symbols live and current at the view, minus the
// targets themselves and what they enclose (a file's own symbols). At
// most limit items, best first.
func (c *call) related(targets []Target, limit int) ([]Neighbour, error) {
	e, err := c.engine()
	if err != nil {
		return nil, err
	}
	g := e.Graph
	var seeds []engines.Seed
	skip := map[csr.NodeIndex]bool{}
	var inside []uint32 // relations from a target to what it encloses
	for _, name := range []string{roles.RelDefines, roles.RelContains} {
		if id, err := e.Engine.RelationID(name); err == nil {
			inside = append(inside, id)
		}
	}
	for _, t := range targets {
		n, ok, err := g.LookupKey(t.Key)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // no ranking edges yet: nothing to spread from
		}
		seeds = append(seeds, engines.Seed{Node: n, Score: 1})
		skip[n] = true
		if t.Kind != "file" {
			continue
		}
		dsts, rels, _, err := g.OutChecked(n)
		if err != nil {
			return nil, err
		}
		for i, d := range dsts {
			for _, in := range inside {
				if rels[i] == in {
					skip[csr.NodeIndex(d)] = true
				}
			}
		}
	}
	if len(seeds) == 0 {
		return nil, nil
	}
	p := engines.DefaultRelatedParams()
	p.Relations = e.RankingRelations()
	p.TopK = min(4*limit+len(skip)+64, 20000)
	// The places the mixed ranking gives to files are filled in the order
	// of the files-only ranking of the same walk, which fuses activation
	// with lexical similarity (what `activate --files` answers).
	if c.req.Feedback {
		o, err := ops.ReadFeedback(c.r, c.at)
		if err != nil {
			return nil, err
		}
		fp := ops.DefaultFeedbackParams()
		p.FeedbackWeight = fp.Weight
		if p.Feedback, err = o.Links(g, seeds, fp); err != nil {
			return nil, err
		}
	}
	// Placing rarely reads far down the rankings (about limit + 25 of
	// the mixed one on the Go standard library, of a top-k of about
	// 4 × limit): rank a shorter prefix first, and the full top-k only
	// when placing ran past its end. A top-k ranking is the prefix of a
	// longer one (engines' contract), so the items placed are the same.
	full := p.TopK
	if !c.a.rankFull {
		p.TopK = min(full, max(1, limit+len(skip)+c.a.rankSlack))
	}
	for {
		out, short, err := c.placeRelated(e, seeds, p, skip, limit)
		if err != nil || !short || p.TopK == full {
			return out, err
		}
		c.a.rankRetries.Add(1)
		p.TopK = full
	}
}

// defaultRankSlack is Assembler.rankSlack: on the Go standard library,
// placing reads 15–30 items past limit of the mixed ranking.
const defaultRankSlack = 64

// placeRelated fills the Related places from the walk's rankings with
// p.TopK: short reports that it read one of them to its end while that
// ranking was cut at p.TopK (a longer one may place otherwise).
func (c *call) placeRelated(e *enginesnap.Snap, seeds []engines.Seed, p engines.RelatedParams, skip map[csr.NodeIndex]bool, limit int) (out []Neighbour, short bool, err error) {
	g := e.Graph
	views, err := c.relatedViews(e, seeds, p)
	if err != nil {
		return nil, false, err
	}
	scored, files := views[0], views[1]
	filesCut := len(files) == p.TopK
	used := make(map[csr.NodeIndex]bool, limit)
	out = make([]Neighbour, 0, limit)
	// place lists s at a place of activation's ranking scored score.
	place := func(s engines.Scored, score float64) (bool, error) {
		if used[s.Node] {
			return false, nil
		}
		nb, ok, err := c.neighbour(g, s.Node, skip)
		if ok {
			used[s.Node] = true
			nb.Score = score
			out = append(out, nb)
		}
		return ok, err
	}
	for _, s := range scored {
		if len(out) >= limit {
			break
		}
		if skip[s.Node] {
			continue
		}
		key, err := g.Key(s.Node)
		if err != nil {
			return nil, false, err
		}
		placed := false
		if kindOf(key) == "file" {
			// A file's place (every file activation ranks outside the
			// targets has one): the next usable file of the files-only
			// ranking, or this one when that ranking is used up. The
			// item keeps the place's score, so Related reads as one
			// ranking.
			for len(files) > 0 && !placed {
				if placed, err = place(files[0], s.Score); err != nil {
					return nil, false, err
				}
				files = files[1:]
			}
			if !placed && filesCut {
				return nil, true, nil
			}
		}
		if !placed {
			if _, err := place(s, s.Score); err != nil {
				return nil, false, err
			}
		}
	}
	if len(out) == 0 {
		out = nil // as when nothing was appended
	}
	return out, len(out) < limit && len(scored) == p.TopK, nil
}

// relatedViews is the walk's mixed and files-only rankings, from the
// Assembler's memo when the same walk was ranked over the same snapshot
// (and the request reads no feedback overlay, which depends on the view).
func (c *call) relatedViews(e *enginesnap.Snap, seeds []engines.Seed, p engines.RelatedParams) ([][]engines.Scored, error) {
	if c.req.Feedback {
		return e.Engine.RelatedViews(seeds, p, "", "file")
	}
	key := memoKey(seeds, p.TopK)
	if views, ok := c.a.related.get(e, key); ok {
		return views, nil
	}
	views, err := e.Engine.RelatedViews(seeds, p, "", "file")
	if err != nil {
		return nil, err
	}
	c.a.related.put(e, key, views)
	return views, nil
}

// neighbour is the Related item of node n, without its score (the
// caller gives it the score of its place): false when n is a target,
// inside one, not a file or symbol, not live at the view, or not current
// there (superseded, or not valid at the request's valid-at time).
func (c *call) neighbour(g *csr.Graph, n csr.NodeIndex, skip map[csr.NodeIndex]bool) (Neighbour, bool, error) {
	if skip[n] {
		return Neighbour{}, false, nil
	}
	p, ok := c.a.places.get(c.snap, c.view, n)
	if !ok {
		var err error
		if p, err = c.place(g, n); err != nil {
			return Neighbour{}, false, err
		}
		c.a.places.put(c.snap, c.view, n, p)
	}
	// History is not a neighbour: the snapshot may predate a supersede or
	// a new valid time (neither rebuilds it, §12.5).
	if !p.ok || !p.valid.Contains(c.validAt) {
		return Neighbour{}, false, nil
	}
	return p.nb, true, nil
}

// place is what the view says about node n (neighbourMemo): whether it is
// a live file or symbol that nothing supersedes, its item and valid time.
func (c *call) place(g *csr.Graph, n csr.NodeIndex) (placed, error) {
	key, err := g.Key(n)
	if err != nil {
		return placed{}, err
	}
	kind := kindOf(key)
	if kind != "file" && kind != "symbol" {
		return placed{}, nil
	}
	node, live, err := liveNode(c.r, key, c.at)
	if err != nil || !live {
		return placed{}, err
	}
	if current, err := c.r.Visible(key, c.at, lmdbstore.StatusFilter{IncludeExpired: true}); err != nil || !current {
		return placed{}, err // superseded
	}
	nb := Neighbour{Key: key, Kind: kind, Prov: nodeProv(node)}
	if kind == "symbol" {
		var sp ingest.SymbolPayload
		_ = json.Unmarshal(node.Payload, &sp)
		nb.Path, nb.LineStart, nb.LineEnd = sp.Path, sp.LineStart, sp.LineEnd
	} else {
		nb.Path = key[len("file:"):]
	}
	return placed{ok: true, nb: nb, valid: node.Valid}, nil
}

func nodeProv(n lmdbstore.Node) Provenance {
	return Provenance{Rev: n.Rev, TS: n.UpdatedTS, Scope: n.Scope, Run: n.RunID, Task: n.TaskID}
}
