package engines

// The feedback overlay of the related profile (SPEC.md §8.2.2): what an
// agent found useful or useless for a target, as learned direct links from
// a seed to an item. The engines read it as given; ops reads it from the
// store (kv scope memctl, namespace feedback) and resolves it to node
// indices of the snapshot.

import "math"

// FeedbackLink is a learned association from a seed to Node, of strength
// W in [−1, 1]: positive where the item was found useful for the seed,
// negative where it was found useless.
type FeedbackLink struct {
	Node uint32
	W    float64
}

// Feedback holds the learned links of seeds, by seed node index. Links of
// a node that is not a seed of the query are ignored.
type Feedback map[uint32][]FeedbackLink

// DefaultFeedbackWeight is the link weight φ of a positive feedback link
// (its link strength is φ × W, beside the role weight × edge weight of
// the graph's edges). Chosen by measurement with `eval cochange
// --feedback`, SPEC.md §8.2.2.
const DefaultFeedbackWeight = 0.25

func (f Feedback) validate(numNodes int, phi float64) error {
	if !finite(phi) || phi < 0 {
		return invalidf("feedback weight %v must be >= 0", phi)
	}
	for seed, links := range f {
		if int(seed) >= numNodes {
			return invalidf("feedback seed %d out of range (%d nodes)", seed, numNodes)
		}
		for _, l := range links {
			if int(l.Node) >= numNodes {
				return invalidf("feedback item %d out of range (%d nodes)", l.Node, numNodes)
			}
			if !finite(l.W) || l.W < -1 || l.W > 1 {
				return invalidf("feedback strength %v not in [-1, 1]", l.W)
			}
		}
	}
	return nil
}

// feedbackRun is the part of the overlay one query uses: the positive
// links of its seeds (walked as edges) and the penalty of the items found
// useless for them.
type feedbackRun struct {
	links   map[uint32][]FeedbackLink // seed → its links with W > 0
	penalty map[uint32]float64        // item → Π (1 + W) over the seeds' links with W < 0
	phi     float64
}

// newFeedbackRun keeps the links of the seeds (each seed once).
func newFeedbackRun(f Feedback, seeds []Seed, phi float64) *feedbackRun {
	if len(f) == 0 {
		return nil
	}
	fr := &feedbackRun{links: map[uint32][]FeedbackLink{}, penalty: map[uint32]float64{}, phi: phi}
	for _, sd := range seeds {
		if !(sd.Score > 0) || !finite(sd.Score) {
			continue
		}
		if _, done := fr.links[sd.Node]; done {
			continue
		}
		var pos []FeedbackLink
		for _, l := range f[sd.Node] {
			switch {
			case l.Node == sd.Node:
			case l.W > 0 && phi > 0:
				pos = append(pos, l)
			case l.W < 0:
				m, ok := fr.penalty[l.Node]
				if !ok {
					m = 1
				}
				fr.penalty[l.Node] = m * (1 + l.W)
			}
		}
		fr.links[sd.Node] = pos
	}
	return fr
}

// strength is the link strength of a positive link.
func (fr *feedbackRun) strength(l FeedbackLink) float64 { return fr.phi * l.W }

// factor is the penalty of node v: 1 unless a seed found v useless.
func (fr *feedbackRun) factor(v uint32) float64 {
	if fr == nil {
		return 1
	}
	if m, ok := fr.penalty[v]; ok {
		return math.Max(0, m)
	}
	return 1
}

// linksOf returns the positive links u spreads along (u a seed).
func (fr *feedbackRun) linksOf(u uint32) []FeedbackLink {
	if fr == nil {
		return nil
	}
	return fr.links[u]
}
