package engines

import "math"

// PageRank defaults.
const (
	DefaultPageRankDamping    = 0.85
	DefaultPageRankTolerance  = 1e-6
	DefaultPageRankIterations = 50
)

// PageRankParams configures PageRank.
type PageRankParams struct {
	Damping       float64 // in [0, 1)
	Tolerance     float64 // stop when the L1 change of an iteration is below this (>= 0)
	MaxIterations int     // >= 1
	// Weighted splits a node's rank over its out-edges in proportion to
	// their (clamped) weights instead of evenly.
	Weighted bool
}

// DefaultPageRankParams returns the documented defaults (unweighted).
func DefaultPageRankParams() PageRankParams {
	return PageRankParams{
		Damping:       DefaultPageRankDamping,
		Tolerance:     DefaultPageRankTolerance,
		MaxIterations: DefaultPageRankIterations,
	}
}

func (p *PageRankParams) validate() error {
	switch {
	case !finite(p.Damping) || p.Damping < 0 || p.Damping >= 1:
		return invalidf("damping %v not in [0, 1)", p.Damping)
	case !finite(p.Tolerance) || p.Tolerance < 0:
		return invalidf("tolerance %v must be >= 0", p.Tolerance)
	case p.MaxIterations < 1:
		return invalidf("max iterations %d must be >= 1", p.MaxIterations)
	}
	return nil
}

// PageRankStats says how the iteration ended.
type PageRankStats struct {
	Iterations int
	Delta      float64 // L1 change of the last iteration
}

// PageRank computes the rank of every node by power iteration in float64
// (SPEC.md §8.4). ranks[i] is node i's rank; the ranks sum to 1. Unlike the
// query engines it allocates O(nodes) per call: it is a whole-graph
// computation, meant to run at export or on demand.
func (e *Engine) PageRank(p PageRankParams) ([]float64, PageRankStats, error) {
	if err := p.validate(); err != nil {
		return nil, PageRankStats{}, err
	}
	n := e.numNodes
	if n == 0 {
		return []float64{}, PageRankStats{}, nil
	}
	// outWeight[u] is what u's rank is divided by: its out-degree, or the
	// sum of its clamped out-weights. 0 means dangling.
	outWeight := make([]float64, n)
	for u := range n {
		ts, _, ws, err := e.out(uint32(u))
		if err != nil {
			return nil, PageRankStats{}, err
		}
		if !p.Weighted {
			outWeight[u] = float64(len(ts))
			continue
		}
		sum := 0.0
		for _, w := range ws {
			sum += edgeWeight(w)
		}
		outWeight[u] = sum
	}
	// Every in-list is looked up and checked once, not once per iteration
	// (slices of the graph's arrays: no copy); the sums below add the same
	// terms in the same order, so the ranks are the same bits.
	ins := make([][]uint32, n)
	var inWeights [][]float32
	if p.Weighted {
		inWeights = make([][]float32, n)
	}
	for v := range n {
		ss, _, ws, err := e.in(uint32(v))
		if err != nil {
			return nil, PageRankStats{}, err
		}
		ins[v] = ss
		if p.Weighted {
			inWeights[v] = ws
		}
	}
	rank := make([]float64, n)
	share := make([]float64, n) // rank[u] / outWeight[u]
	next := make([]float64, n)
	for i := range rank {
		rank[i] = 1 / float64(n)
	}
	var st PageRankStats
	for st.Iterations < p.MaxIterations {
		dangling := 0.0
		for u, w := range outWeight {
			if w > 0 {
				share[u] = rank[u] / w
			} else {
				share[u] = 0
				dangling += rank[u]
			}
		}
		base := (1-p.Damping)/float64(n) + p.Damping*dangling/float64(n)
		for v, ss := range ins {
			sum := 0.0
			if p.Weighted {
				ws := inWeights[v]
				for i, u := range ss {
					sum += share[u] * edgeWeight(ws[i])
				}
			} else {
				for _, u := range ss {
					sum += share[u]
				}
			}
			next[v] = base + p.Damping*sum
		}
		delta := 0.0
		for i := range rank {
			delta += math.Abs(next[i] - rank[i])
		}
		rank, next = next, rank
		st.Iterations++
		st.Delta = delta
		if delta < p.Tolerance {
			break
		}
	}
	// Each iteration preserves total mass up to rounding; renormalise so the
	// ranks sum to 1 to within a few ulps however many nodes there are.
	total := 0.0
	for _, r := range rank {
		total += r
	}
	for i := range rank {
		rank[i] /= total
	}
	return rank, st, nil
}

// TopRanks returns the k highest ranks (all when k <= 0), best first, ties
// by node index.
func TopRanks(ranks []float64, k int) []Scored {
	cands := make([]Scored, len(ranks))
	for i, r := range ranks {
		cands[i] = Scored{Node: uint32(i), Score: r}
	}
	return topK(cands, k)
}
