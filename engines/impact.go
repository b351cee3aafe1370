package engines

import (
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/roles"
)

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
	Distance int     // hops from the changed region (SPEC §8.5)
	Score    float64 // strength: summed decay × weight over arrivals from distance−1
	Owner    bool    // reached only by lifting (structure in-edges), not as a dependent
	Fanout   int     // its own dependents (dependency edges in the walk's direction): the tie-break
}

// affectedBefore is the impact order: distance ascending; dependents before
// owners; strength descending; more dependents of its own first (a change
// there spreads further); node index.
func affectedBefore(a, b Affected) bool {
	if a.Distance != b.Distance {
		return a.Distance < b.Distance
	}
	if a.Owner != b.Owner {
		return !a.Owner
	}
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Fanout != b.Fanout {
		return a.Fanout > b.Fanout
	}
	return a.Node < b.Node
}

// Node classes of the impact walk, stored in i1 as distance*4 + class.
const (
	classRegion    = 0 // the origin and what it contains: the change itself
	classDependent = 1 // reached along a dependency edge
	classOwner     = 2 // reached by lifting to an owner
)

// Impact answers "who is affected if origin changes" (SPEC.md §8.5). The
// changed region is origin plus everything it contains (structure
// out-edges, transitively). From it, a breadth-first walk of at most Depth
// hops follows dependency edges (usage and memory relations, history ones
// only when the relation filter names them) against their direction
// (DirectionIn: to the edge's source, who depends on it; DirectionOut: to
// what it depends on; both) and lifts every changed or affected node to its
// owners (structure in-edges); owners lift further but have no dependents of
// their own, and the walk never goes down from an owner to its other
// contents. Results exclude the region, ordered by affectedBefore.
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
	// kind[r]: 0 not walked, 'd' dependency, 'D' dependency both ways
	// (history, named explicitly), 's' structure.
	kind := make([]byte, len(mask))
	for r, m := range mask {
		if m == 0 {
			continue
		}
		switch e.relRole[r] {
		case roles.Structure:
			kind[r] = 's'
		case roles.Usage, roles.Memory:
			kind[r] = 'd'
		case roles.History:
			if len(p.Relations) > 0 {
				kind[r] = 'D'
			}
		}
	}
	back := p.Direction != DirectionOut // dependents: in-edges to their sources
	fwd := p.Direction != DirectionIn   // dependencies: out-edges to their targets

	s := e.getScratch()
	defer e.putScratch(s)
	s.f1.need(s.n)
	s.i1.need(s.n)
	gen := s.nextGen() // f1 = strength, i1 = distance*4 + class
	s.touched = s.touched[:0]

	// The changed region: origin and its contents, transitively.
	s.frontier = append(s.frontier[:0], origin)
	s.f1.set(origin, gen, 1)
	s.i1.set(origin, gen, classRegion)
	for i := 0; i < len(s.frontier); i++ {
		ts, rs, _, err := e.out(s.frontier[i])
		if err != nil {
			return nil, err
		}
		for j, t := range ts {
			if kind[rs[j]] == 's' {
				if _, seen := s.i1.get(t, gen); !seen {
					s.f1.set(t, gen, 1)
					s.i1.set(t, gen, classRegion)
					s.frontier = append(s.frontier, t)
				}
			}
		}
	}

	var hop int32
	reach := func(u, t uint32, w float32, class int32) {
		y := s.f1.e[u].v * p.Decay * edgeWeight(w)
		v, seen := s.i1.get(t, gen)
		switch {
		case !seen:
			s.i1.set(t, gen, hop*4+class)
			s.f1.set(t, gen, y)
			s.touched = append(s.touched, t)
			s.nextList = append(s.nextList, t)
		case v == hop*4+class:
			s.f1.e[t].v += y
		case v == hop*4+classOwner && class == classDependent:
			// A dependent at the same distance outranks an owner.
			s.i1.set(t, gen, hop*4+class)
			s.f1.set(t, gen, y)
		}
	}
	for hop = 1; int(hop) <= p.Depth && len(s.frontier) > 0; hop++ {
		s.nextList = s.nextList[:0]
		for _, u := range s.frontier {
			class := s.i1.e[u].v & 3
			if class != classOwner {
				ts, rs, ws, err := e.out(u)
				if err != nil {
					return nil, err
				}
				for i, t := range ts {
					if k := kind[rs[i]]; k == 'D' || (k == 'd' && fwd) {
						reach(u, t, ws[i], classDependent)
					}
				}
			}
			ss, rs, ws, err := e.in(u)
			if err != nil {
				return nil, err
			}
			for i, t := range ss {
				switch k := kind[rs[i]]; {
				case k == 's':
					reach(u, t, ws[i], classOwner)
				case class != classOwner && (k == 'D' || (k == 'd' && back)):
					reach(u, t, ws[i], classDependent)
				}
			}
		}
		s.frontier, s.nextList = s.nextList, s.frontier
	}
	out := make([]Affected, 0, len(s.touched))
	for _, v := range s.touched {
		c := s.i1.e[v].v
		a := Affected{Node: v, Distance: int(c / 4), Score: s.f1.e[v].v, Owner: c&3 == classOwner}
		if a.Fanout, err = e.fanout(v, kind, back, fwd); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return topKBy(out, p.TopK, affectedBefore), nil
}

// fanout counts v's own dependency edges in the walk's direction.
func (e *Engine) fanout(v uint32, kind []byte, back, fwd bool) (int, error) {
	n := 0
	_, rs, _, err := e.in(v)
	if err != nil {
		return 0, err
	}
	for _, r := range rs {
		if k := kind[r]; k == 'D' || (k == 'd' && back) {
			n++
		}
	}
	_, rs, _, err = e.out(v)
	if err != nil {
		return 0, err
	}
	for _, r := range rs {
		if k := kind[r]; k == 'D' || (k == 'd' && fwd) {
			n++
		}
	}
	return n, nil
}

// ResolveOrigin resolves an impact query by the seed cascade of SPEC §8.1
// and picks one node: the best match (highest score), then the shortest
// key, then the lowest node index. matches lists every candidate.
func (e *Engine) ResolveOrigin(q string) (csr.NodeIndex, []SeedMatch, error) {
	_, matches, err := e.FindSeeds([]string{q}, DefaultSeedParams())
	if err != nil {
		return 0, nil, err
	}
	if len(matches) == 0 {
		return 0, nil, nil
	}
	best, bestLen := -1, 0
	for i, m := range matches {
		k, err := e.keys.Key(m.Node)
		if err != nil {
			return 0, nil, indexErr(err)
		}
		if best < 0 || m.Score > matches[best].Score || (m.Score == matches[best].Score &&
			(len(k) < bestLen || (len(k) == bestLen && m.Node < matches[best].Node))) {
			best, bestLen = i, len(k)
		}
	}
	return matches[best].Node, matches, nil
}
