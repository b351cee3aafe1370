package engines

import (
	"math"
	"slices"
	"strings"

	"github.com/memctl/memctl/csr"
)

// Strategy selects how activation is computed. Both strategies compute the
// same scores (SPEC.md §8.2); they differ only in cost.
type Strategy int

const (
	// StrategyAuto picks StrategyHeap for few seeds on a low-degree graph
	// (seeds < 0.001 × nodes and average out-degree < 8), else wavefront.
	StrategyAuto Strategy = iota
	// StrategyWavefront fires every newly raised node depth by depth.
	StrategyWavefront
	// StrategyHeap processes the strongest pending signal first and stops
	// as soon as no pending signal can fire.
	StrategyHeap
)

func (s Strategy) String() string {
	switch s {
	case StrategyAuto:
		return "auto"
	case StrategyWavefront:
		return "wavefront"
	case StrategyHeap:
		return "heap"
	}
	return "invalid"
}

// ParseStrategy maps "auto", "wavefront" and "heap" to a Strategy.
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "auto", "":
		return StrategyAuto, nil
	case "wavefront":
		return StrategyWavefront, nil
	case "heap":
		return StrategyHeap, nil
	}
	return 0, invalidf("unknown strategy %q (want wavefront, heap or auto)", s)
}

// Activation defaults, from the reference system.
const (
	DefaultDecay            = 0.55
	DefaultThreshold        = 0.04
	DefaultMaxDepth         = 5
	MaxDepthCap             = 20
	DefaultInhibitoryFactor = 0.5
	DefaultSaturationCap    = 1.0
)

// ActivationParams configures one activation query. Use
// DefaultActivationParams and change what you need.
type ActivationParams struct {
	Decay            float64 // per-hop factor, in (0, 1]
	Threshold        float64 // a node fires when its activation >= Threshold (> 0)
	MaxDepth         int     // hops, 0..MaxDepthCap
	InhibitoryFactor float64 // >= 0
	SaturationCap    float64 // seed scores are capped here (> 0)
	Relations        []uint32
	Strategy         Strategy
	TopK             int // <= 0: all activated nodes
	// KeyPrefix, when set, keeps only results whose key starts with it
	// (e.g. "file:" for files only); the spreading itself is unchanged.
	KeyPrefix string
}

// DefaultActivationParams returns the documented defaults with TopK 20.
func DefaultActivationParams() ActivationParams {
	return ActivationParams{
		Decay:            DefaultDecay,
		Threshold:        DefaultThreshold,
		MaxDepth:         DefaultMaxDepth,
		InhibitoryFactor: DefaultInhibitoryFactor,
		SaturationCap:    DefaultSaturationCap,
		TopK:             20,
	}
}

func (p *ActivationParams) validate() error {
	switch {
	case !finite(p.Decay) || p.Decay <= 0 || p.Decay > 1:
		return invalidf("decay %v not in (0, 1]", p.Decay)
	case !finite(p.Threshold) || p.Threshold <= 0:
		return invalidf("threshold %v must be > 0", p.Threshold)
	case p.MaxDepth < 0 || p.MaxDepth > MaxDepthCap:
		return invalidf("max depth %d not in 0..%d", p.MaxDepth, MaxDepthCap)
	case !finite(p.InhibitoryFactor) || p.InhibitoryFactor < 0:
		return invalidf("inhibitory factor %v must be >= 0", p.InhibitoryFactor)
	case !finite(p.SaturationCap) || p.SaturationCap <= 0:
		return invalidf("saturation cap %v must be > 0", p.SaturationCap)
	case p.Strategy < StrategyAuto || p.Strategy > StrategyHeap:
		return invalidf("bad strategy %d", p.Strategy)
	}
	return nil
}

// Seed is a starting node with its initial activation.
type Seed struct {
	Node  csr.NodeIndex
	Score float64
}

// activationRun carries one query's parameters, its scratch and the
// generations it took. Per-node state lives in s.act (one actEntry per node:
// everything an arrival reads or writes shares a cache line); s.fired lists
// the fired nodes that have usable inhibitory edges.
//
// actEntry roles: act = E (valid when actGen matches); fire = F and depth =
// the heap's fewest hops of a label the node fired from (valid when fireGen
// matches: "has fired"); aux = the wavefront's step buffer (gen of the step)
// or the inhibition received (gen of that phase).
type activationRun struct {
	e       *Engine
	s       *scratch
	p       ActivationParams
	mask    []uint8
	bidi    bool // some usable relation is bidirectional
	actGen  uint32
	fireGen uint32
}

// Activate runs spreading activation from seeds and returns the TopK
// activated nodes (seeds included), best first. SPEC.md §8.2 defines the
// scores.
func (e *Engine) Activate(seeds []Seed, p ActivationParams) ([]Scored, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if p.KeyPrefix != "" && e.keys == nil {
		return nil, invalidf("key prefix %q: graph has no keys", p.KeyPrefix)
	}
	mask, err := e.relationMask(p.Relations)
	if err != nil {
		return nil, err
	}
	for _, sd := range seeds {
		if err := e.checkNode(sd.Node); err != nil {
			return nil, err
		}
	}
	s := e.getScratch()
	defer e.putScratch(s)
	if s.act == nil {
		s.act = make([]actEntry, s.n)
		writePages(s.act)
	}
	r := &activationRun{e: e, s: s, p: p, mask: mask}
	for _, m := range mask {
		if m&relBidirectional != 0 {
			r.bidi = true
		}
	}
	r.actGen = s.nextGen()
	r.fireGen = s.nextGen()
	s.touched = s.touched[:0]
	s.fired = s.fired[:0]

	strategy := p.Strategy
	if strategy == StrategyAuto {
		strategy = e.chooseStrategy(len(seeds))
	}
	if strategy == StrategyHeap {
		err = r.heap(seeds)
	} else {
		err = r.wavefront(seeds)
	}
	if err != nil {
		return nil, err
	}
	if err := r.inhibit(); err != nil {
		return nil, err
	}
	cands := make([]Scored, 0, len(s.touched))
	for _, v := range s.touched {
		if a := s.act[v].act; a > 0 {
			if p.KeyPrefix != "" {
				k, err := e.keys.Key(v)
				if err != nil {
					return nil, err
				}
				if !strings.HasPrefix(k, p.KeyPrefix) {
					continue
				}
			}
			cands = append(cands, Scored{Node: v, Score: a})
		}
	}
	return topKBy(cands, p.TopK, e.rankedBefore), nil
}

// chooseStrategy is the hybrid rule of the reference system.
func (e *Engine) chooseStrategy(seeds int) Strategy {
	if e.numNodes == 0 {
		return StrategyWavefront
	}
	seedRatio := float64(seeds) / float64(e.numNodes)
	avgDegree := float64(e.numEdges) / float64(e.numNodes)
	if seedRatio < 0.001 && avgDegree < 8 {
		return StrategyHeap
	}
	return StrategyWavefront
}

// raise sets the activation of v to x if x is larger and reports whether it
// did.
func (r *activationRun) raise(v uint32, x float64) bool {
	a := &r.s.act[v]
	if a.actGen != r.actGen {
		a.actGen, a.act = r.actGen, x
		r.s.touched = append(r.s.touched, v)
		return true
	}
	if x > a.act {
		a.act = x
		return true
	}
	return false
}

// markFired records that u fires with x and reports whether this is its
// first firing. F(u) is the largest value u fires with.
func (r *activationRun) markFired(u uint32, x float64) bool {
	a := &r.s.act[u]
	if a.fireGen != r.fireGen {
		a.fireGen, a.fire, a.depth = r.fireGen, x, math.MaxInt32
		return true
	}
	if x > a.fire {
		a.fire = x
	}
	return false
}

func (r *activationRun) seedValue(sd Seed) (float64, bool) {
	x := sd.Score
	if !(x > 0) || !finite(x) {
		return 0, false
	}
	return min(x, r.p.SaturationCap), true
}

// arrival is a signal y reaching node.
type arrival struct {
	node uint32
	y    float64
}

// fire lists in s.arrivals the signals x × decay × weight that u sends
// along its usable edges of one polarity (inhibitory or excitatory):
// out-edges, and in-edges of bidirectional relations. Zero signals are
// skipped. It also reports whether u has usable edges of the other
// polarity. Neighbour indices and relation ids are checked here, in the
// loop that reads them.
func (r *activationRun) fire(u uint32, x float64, inhibitory bool) (arr []arrival, other bool, err error) {
	want := uint8(0)
	if inhibitory {
		want = relInhibitory
	}
	arr = r.s.arrivals[:0]
	defer func() { r.s.arrivals = arr[:0] }()
	xd := x * r.p.Decay
	for pass := 0; pass < 2; pass++ {
		var ts, rs []uint32
		var ws []float32
		var need uint8 // relation bits an edge of this pass needs
		if pass == 0 {
			ts, rs, ws, err = r.e.g.Out(u)
		} else {
			if !r.bidi {
				break
			}
			ts, rs, ws, err = r.e.g.In(u)
			need = relBidirectional
		}
		if err != nil {
			return nil, false, err
		}
		if len(rs) != len(ts) || len(ws) != len(ts) {
			return nil, false, corruptf("node %d: edge arrays of unequal length", u)
		}
		limit := uint32(r.e.numNodes)
		for i, t := range ts {
			rel := rs[i]
			if t >= limit || int(rel) >= len(r.mask) || r.e.relFlags[rel] == 0 {
				return nil, false, r.e.badEdge(u, pass == 1, i, t, rel)
			}
			m := r.mask[rel]
			if m == 0 || m&need != need {
				continue
			}
			if m&relInhibitory != want {
				other = true
				continue
			}
			if y := xd * edgeWeight(ws[i]); y > 0 {
				arr = append(arr, arrival{t, y})
			}
		}
	}
	return arr, other, nil
}

// wavefront computes E depth by depth. At step k (1..MaxDepth) every node
// whose activation was raised at step k-1 (the seeds, for k = 1) fires if its
// activation is >= threshold; the signals are scatter-maxed into a step
// buffer, merged into the activation when the step ends. Nodes the merge
// raises form the next frontier.
func (r *activationRun) wavefront(seeds []Seed) error {
	s := r.s
	s.frontier = s.frontier[:0]
	for _, sd := range seeds {
		if x, ok := r.seedValue(sd); ok && r.raise(sd.Node, x) {
			s.frontier = append(s.frontier, sd.Node)
		}
	}
	for depth := 1; depth <= r.p.MaxDepth && len(s.frontier) > 0; depth++ {
		step := s.nextGen()
		s.nextList = s.nextList[:0]
		for _, u := range s.frontier {
			x := s.act[u].act
			if x < r.p.Threshold {
				continue
			}
			first := r.markFired(u, x)
			arr, inhib, err := r.fire(u, x, false)
			if err != nil {
				return err
			}
			if first && inhib {
				s.fired = append(s.fired, u)
			}
			for _, a := range arr {
				t := &s.act[a.node]
				if t.auxGen != step {
					t.auxGen, t.aux = step, a.y
					s.nextList = append(s.nextList, a.node)
				} else if a.y > t.aux {
					t.aux = a.y
				}
			}
		}
		s.frontier = s.frontier[:0]
		for _, t := range s.nextList {
			if r.raise(t, s.act[t].aux) {
				s.frontier = append(s.frontier, t)
			}
		}
	}
	return nil
}

// label is a pending firing of the heap strategy: node reached with value x
// after depth hops.
type label struct {
	x     float64
	depth int32
	node  uint32
}

// before orders the heap: larger value first, then fewer hops, then lower
// node index.
func (a label) before(b label) bool {
	if a.x != b.x {
		return a.x > b.x
	}
	if a.depth != b.depth {
		return a.depth < b.depth
	}
	return a.node < b.node
}

// heap computes E by processing pending firings strongest first. A label
// (v, d, x) is pushed only if it can fire (x >= threshold, d < MaxDepth). A
// popped label is skipped when v already fired from a label with no more
// hops: that label's value is at least as large (signals never grow along a
// path), so it dominates. Every arrival, firing or not, raises E. The run
// ends when no label is pending.
func (r *activationRun) heap(seeds []Seed) error {
	s := r.s
	h := s.labels[:0]
	push := func(l label) {
		h = append(h, l)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !h[i].before(h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	pop := func() label {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			m := l
			if rr := l + 1; rr < len(h) && h[rr].before(h[l]) {
				m = rr
			}
			if !h[m].before(h[i]) {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
		return top
	}
	maxDepth := int32(r.p.MaxDepth)
	// dominated reports whether v already fired from a label with at most
	// depth hops.
	dominated := func(v uint32, depth int32) bool {
		a := &s.act[v]
		return a.fireGen == r.fireGen && a.depth <= depth
	}
	for _, sd := range seeds {
		x, ok := r.seedValue(sd)
		if !ok {
			continue
		}
		r.raise(sd.Node, x)
		if x >= r.p.Threshold && maxDepth > 0 {
			push(label{x: x, depth: 0, node: sd.Node})
		}
	}
	for len(h) > 0 {
		cur := pop()
		if dominated(cur.node, cur.depth) {
			continue
		}
		first := r.markFired(cur.node, cur.x)
		s.act[cur.node].depth = cur.depth
		arr, inhib, err := r.fire(cur.node, cur.x, false)
		if err != nil {
			s.labels = h[:0]
			return err
		}
		if first && inhib {
			s.fired = append(s.fired, cur.node)
		}
		d := cur.depth + 1
		for _, a := range arr {
			r.raise(a.node, a.y)
			if a.y >= r.p.Threshold && d < maxDepth && !dominated(a.node, d) {
				push(label{x: a.y, depth: d, node: a.node})
			}
		}
	}
	s.labels = h[:0]
	return nil
}

// inhibit applies the inhibitory phase shared by both strategies: every
// fired node u with usable inhibitory edges (listed in s.fired) sends F(u) × weight × decay × inhibitory factor along its
// inhibitory edges; a node's activation becomes max(0, E − received). Fired
// nodes are visited in index order so the sums are the same bits whichever
// strategy ran.
func (r *activationRun) inhibit() error {
	if r.p.InhibitoryFactor == 0 {
		return nil
	}
	s := r.s
	if len(s.fired) == 0 {
		return nil
	}
	slices.Sort(s.fired)
	recv := s.nextGen()
	var hit []uint32
	for _, u := range s.fired {
		arr, _, err := r.fire(u, s.act[u].fire*r.p.InhibitoryFactor, true)
		if err != nil {
			return err
		}
		for _, a := range arr {
			t := &s.act[a.node]
			if t.actGen != r.actGen {
				continue // never excited: stays at 0
			}
			if t.auxGen != recv {
				t.auxGen, t.aux = recv, 0
				hit = append(hit, a.node)
			}
			t.aux += a.y
		}
	}
	for _, t := range hit {
		a := &s.act[t]
		a.act = max(0, a.act-a.aux)
	}
	return nil
}
