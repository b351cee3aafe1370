package engines

import "github.com/memctl/memctl/csr"

// Direction is the way impact walks edges. Edges point from user to used, so
// walking in-edges answers "who depends on this node".
type Direction int

const (
	DirectionIn Direction = iota
	DirectionOut
	DirectionBoth
)

func (d Direction) String() string {
	switch d {
	case DirectionIn:
		return "in"
	case DirectionOut:
		return "out"
	case DirectionBoth:
		return "both"
	}
	return "invalid"
}

// ParseDirection maps "in", "out" and "both" to a Direction.
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "in", "":
		return DirectionIn, nil
	case "out":
		return DirectionOut, nil
	case "both":
		return DirectionBoth, nil
	}
	return 0, invalidf("unknown direction %q (want in, out or both)", s)
}

// Impact defaults.
const (
	DefaultImpactDepth = 3
	DefaultImpactDecay = 0.55
)

// ImpactParams configures a blast-radius query.
type ImpactParams struct {
	Depth     int     // hops, 1..MaxDepthCap
	Decay     float64 // per-hop factor, in (0, 1]
	Direction Direction
	Relations []uint32
	TopK      int // <= 0: all affected nodes
}

// DefaultImpactParams returns the documented defaults (all results).
func DefaultImpactParams() ImpactParams {
	return ImpactParams{Depth: DefaultImpactDepth, Decay: DefaultImpactDecay}
}

// Affected is one node in a blast radius.
type Affected struct {
	Node     csr.NodeIndex
	Distance int     // fewest hops from the origin
	Score    float64 // best product of decay × weight over shortest paths
}

func affectedBefore(a, b Affected) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Distance != b.Distance {
		return a.Distance < b.Distance
	}
	return a.Node < b.Node
}

// Impact walks breadth-first from origin up to Depth hops and returns every
// node reached (the origin excluded), ordered by score descending, distance
// ascending, node index ascending. SPEC.md §8.5 defines the walk.
func (e *Engine) Impact(origin csr.NodeIndex, p ImpactParams) ([]Affected, error) {
	switch {
	case p.Depth < 1 || p.Depth > MaxDepthCap:
		return nil, invalidf("depth %d not in 1..%d", p.Depth, MaxDepthCap)
	case !finite(p.Decay) || p.Decay <= 0 || p.Decay > 1:
		return nil, invalidf("decay %v not in (0, 1]", p.Decay)
	case p.Direction < DirectionIn || p.Direction > DirectionBoth:
		return nil, invalidf("bad direction %d", p.Direction)
	}
	if err := e.checkNode(origin); err != nil {
		return nil, err
	}
	mask, err := e.relationMask(p.Relations)
	if err != nil {
		return nil, err
	}
	s := e.getScratch()
	defer e.putScratch(s)
	s.f1.need(s.n)
	s.i1.need(s.n)
	gen := s.nextGen() // f1 = score, i1 = distance
	s.touched = s.touched[:0]
	s.frontier = append(s.frontier[:0], origin)
	s.f1.set(origin, gen, 1)
	s.i1.set(origin, gen, 0)

	var hop int32
	reach := func(u, t uint32, w float32) {
		y := s.f1.e[u].v * p.Decay * edgeWeight(w)
		d, seen := s.i1.get(t, gen)
		switch {
		case !seen:
			s.i1.set(t, gen, hop)
			s.f1.set(t, gen, y)
			s.touched = append(s.touched, t)
			s.nextList = append(s.nextList, t)
		case d == hop && y > s.f1.e[t].v:
			s.f1.e[t].v = y
		}
	}
	forward := p.Direction != DirectionIn   // walk out-edges of every relation
	backward := p.Direction != DirectionOut // walk in-edges of every relation
	for hop = 1; int(hop) <= p.Depth && len(s.frontier) > 0; hop++ {
		s.nextList = s.nextList[:0]
		for _, u := range s.frontier {
			ts, rs, ws, err := e.out(u)
			if err != nil {
				return nil, err
			}
			for i, t := range ts {
				if m := mask[rs[i]]; m != 0 && (forward || m&relBidirectional != 0) {
					reach(u, t, ws[i])
				}
			}
			ss, rs, ws, err := e.in(u)
			if err != nil {
				return nil, err
			}
			for i, t := range ss {
				if m := mask[rs[i]]; m != 0 && (backward || m&relBidirectional != 0) {
					reach(u, t, ws[i])
				}
			}
		}
		s.frontier, s.nextList = s.nextList, s.frontier
	}
	out := make([]Affected, 0, len(s.touched))
	for _, v := range s.touched {
		out = append(out, Affected{Node: v, Distance: int(s.i1.e[v].v), Score: s.f1.e[v].v})
	}
	return topKBy(out, p.TopK, affectedBefore), nil
}
