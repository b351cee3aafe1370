package engines

import (
	"cmp"
	"math"
	"slices"

	"github.com/memctl/memctl/roles"
)

// RoleWeight is how much a profile weighs the edges of one role, walked
// along their direction (Out: from source to destination) and against it
// (In).
type RoleWeight struct{ Out, In float64 }

// The related profile's defaults. They were chosen by measurement with
// `memctl eval cochange` on one repository (etcd-io/bbolt, an older window
// of its history than the one BENCHMARKS.md reports), see SPEC.md §8.2.1.
const (
	DefaultRelatedDepth     = 3
	DefaultRelatedDecay     = 1.0
	DefaultRelatedThreshold = 1e-4
	DefaultRelatedTemporal  = 2.0
	DefaultPerContainer     = 3
)

// DefaultRoleWeights are the related profile's role weights: structure
// both ways 1, usage both ways 0.5, history 0.3 (its relation is
// bidirectional: Out and In are equal); memory (also every relation added
// without a role) both ways 0.5 (not measured: the evaluation
// repositories have none).
var DefaultRoleWeights = [roles.Count]RoleWeight{
	roles.Structure: {Out: 1, In: 1},
	roles.Usage:     {Out: 0.5, In: 0.5},
	roles.History:   {Out: 0.3, In: 0.3},
	roles.Memory:    {Out: 0.5, In: 0.5},
}

// RelatedParams configures the related profile of activation (SPEC.md
// §8.2.1). Use DefaultRelatedParams and change what you need.
type RelatedParams struct {
	Roles         [roles.Count]RoleWeight // by roles.Role
	Depth         int                     // hops, 1..MaxDepthCap
	Decay         float64                 // per-hop factor, in (0, 1]
	Threshold     float64                 // a node spreads its step mass only when it is >= Threshold (> 0)
	Temporal      float64                 // weight τ of the recency term (>= 0; 0: off)
	SaturationCap float64                 // seed scores are capped here (> 0)
	Relations     []uint32                // relation filter (empty: all)
	// Kind keeps only nodes of this type ("file": files only); "" keeps
	// every kind.
	Kind string
	// PerContainer caps the leaves (nodes with no structure out-edge, such
	// as symbols) listed per container (the sources of their structure
	// in-edges, such as files); 0 lists them all.
	PerContainer int
	TopK         int // <= 0: all
	// Lexical, with Kind "file", fuses the activation ranking of files
	// with their lexical similarity to the seeds (Engine.Lexicon) by
	// reciprocal rank fusion with k = LexicalK; off, or when no seed has
	// a vocabulary, the ranking is activation's alone.
	Lexical  bool
	LexicalK float64 // > 0
	// Feedback is the learned overlay (SPEC.md §8.2.2): the seeds'
	// positive links are walked as edges of link strength FeedbackWeight
	// × W, the items their negative links name are scored × (1 + W).
	// Nil: off.
	Feedback       Feedback
	FeedbackWeight float64 // φ, >= 0
}

// DefaultRelatedParams returns the measured defaults with TopK 20.
func DefaultRelatedParams() RelatedParams {
	return RelatedParams{
		Roles:         DefaultRoleWeights,
		Depth:         DefaultRelatedDepth,
		Decay:         DefaultRelatedDecay,
		Threshold:     DefaultRelatedThreshold,
		Temporal:      DefaultRelatedTemporal,
		SaturationCap: DefaultSaturationCap,
		PerContainer:  DefaultPerContainer,
		TopK:          20,
		Lexical:       true,
		LexicalK:      DefaultLexicalK,

		FeedbackWeight: DefaultFeedbackWeight,
	}
}

func (p *RelatedParams) validate() error {
	for r, w := range p.Roles {
		if !finite(w.Out) || !finite(w.In) || w.Out < 0 || w.In < 0 {
			return invalidf("role %s weights %v/%v must be >= 0", roles.Role(r), w.Out, w.In)
		}
	}
	switch {
	case p.Depth < 1 || p.Depth > MaxDepthCap:
		return invalidf("depth %d not in 1..%d", p.Depth, MaxDepthCap)
	case !finite(p.Decay) || p.Decay <= 0 || p.Decay > 1:
		return invalidf("decay %v not in (0, 1]", p.Decay)
	case !finite(p.Threshold) || p.Threshold <= 0:
		return invalidf("threshold %v must be > 0", p.Threshold)
	case !finite(p.Temporal) || p.Temporal < 0:
		return invalidf("temporal weight %v must be >= 0", p.Temporal)
	case !finite(p.SaturationCap) || p.SaturationCap <= 0:
		return invalidf("saturation cap %v must be > 0", p.SaturationCap)
	case p.PerContainer < 0:
		return invalidf("per-container cap %d must be >= 0", p.PerContainer)
	case p.Lexical && (!finite(p.LexicalK) || p.LexicalK <= 0):
		return invalidf("lexical fusion k %v must be > 0", p.LexicalK)
	}
	return nil
}

// relatedRun is one query of the related profile. Scratch roles: slot =
// a visited node's index in walk (under slotGen), walk = the visited
// nodes' state; touched = nodes with A set; frontier / nextList = nodes
// holding mass in the current / next step.
type relatedRun struct {
	e    *Engine
	s    *scratch
	p    RelatedParams
	mask []uint8
	// weight[dir][rel]: the role weight of relation rel walked out (0) or
	// in (1); 0 when the relation is filtered out, inhibitory or has no
	// role.
	weight  [2][]float64
	slotGen uint32
	cur     int          // walkNode.m[cur] is the current step's mass, m[1-cur] the next's
	fb      *feedbackRun // nil: no feedback overlay
	// lexical is the seeds' lexical similarity (Lexicon.Similar, into the
	// scratch's sims), computed beside the walk when a files-only view
	// fuses it: wait returns once it is there.
	lexical struct {
		sims []Scored
		err  error
		wait func()
	}
}

// Related runs the related profile of activation from seeds: a walk that
// splits each node's mass among its edges in proportion to role weight ×
// edge weight, sums what arrives, and ranks with the recency term
// (SPEC.md §8.2.1). Results are ranked by score, then recency, then
// PageRank, then node index.
func (e *Engine) Related(seeds []Seed, p RelatedParams) ([]Scored, error) {
	views, err := e.RelatedViews(seeds, p, p.Kind)
	if err != nil {
		return nil, err
	}
	return views[0], nil
}

// RelatedViews walks once from seeds as Related does and ranks the result
// once per kind: views[i] is what Related answers with p.Kind = kinds[i]
// (the lexical fusion included), without walking again.
func (e *Engine) RelatedViews(seeds []Seed, p RelatedParams, kinds ...string) ([][]Scored, error) {
	if err := p.validate(); err != nil {
		return nil, err
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
	if err := p.Feedback.validate(e.numNodes, p.FeedbackWeight); err != nil {
		return nil, err
	}
	// The history gives the recency term and the first tie-break.
	hist, err := e.History()
	if err != nil {
		return nil, err
	}
	s := e.getScratch()
	defer e.putScratch(s)
	s.slot.need(s.n)
	if s.walk == nil {
		// Capacity for every node, so it never grows by copying; only
		// the pages the visited nodes fill are ever touched.
		s.walk = make([]walkNode, 0, s.n)
	}
	r := &relatedRun{e: e, s: s, p: p, mask: mask, fb: newFeedbackRun(p.Feedback, seeds, p.FeedbackWeight)}
	for d := 0; d < 2; d++ {
		r.weight[d] = make([]float64, len(mask))
	}
	for rel, m := range mask {
		if m == 0 || m&relInhibitory != 0 {
			continue
		}
		w := p.Roles[e.relRole[rel]]
		r.weight[0][rel], r.weight[1][rel] = w.Out, w.In
		if m&relBidirectional != 0 {
			// A bidirectional relation is the same link both ways.
			r.weight[1][rel] = w.Out
		}
	}
	if p.Lexical && slices.Contains(kinds, "file") {
		// The lexical similarity the files-only view fuses depends on the
		// seeds alone: it is computed on another goroutine while the walk
		// spreads (it writes only into the buffer it is given, and is
		// waited for before the scratch goes back).
		lx := &r.lexical
		done := make(chan struct{})
		buf := s.sims
		go func() {
			defer close(done)
			var lex *Lexicon
			if lex, lx.err = e.Lexicon(); lx.err == nil {
				lx.sims = lex.similarTo(seeds, buf)
			}
		}()
		lx.wait = func() { <-done }
		defer lx.wait()
	}
	if err := r.spread(seeds); err != nil {
		return nil, err
	}
	views := make([][]Scored, len(kinds))
	for i, kind := range kinds {
		r.p.Kind = kind
		if views[i], err = r.view(hist); err != nil {
			return nil, err
		}
	}
	return views, nil
}

// view ranks the walk's result for r.p.Kind, fused with lexical
// similarity (r.lexical) when the kind is "file" and p.Lexical is set.
func (r *relatedRun) view(hist *History) ([]Scored, error) {
	if r.p.Lexical && r.p.Kind == "file" {
		r.lexical.wait()
		if r.lexical.err != nil {
			return nil, r.lexical.err
		}
		// Both lists are the scratch's: only the fused one is returned.
		if sims := r.lexical.sims; len(sims) > 0 {
			r.s.sims = sims
			act, err := r.rank(hist, 0, r.s.ranked) // the whole activation list: TopK applies after the fusion
			if err != nil {
				return nil, err
			}
			r.s.ranked = act
			return r.fuse(act, sims)
		}
	}
	return r.rank(hist, r.p.TopK, nil)
}

// fusedCand is a node of the lexical fusion (fuse).
type fusedCand struct {
	node    uint32
	score   float64
	actRank int // 0: not activated
	lexRank int // 0: no similarity
}

// fuse merges act (the activation ranking, filtered to Kind) with sims
// (lexical similarity, best first) by reciprocal rank fusion: a node at
// 1-based rank a in act and l in sims (of the nodes of Kind, seeds left
// out) scores 1/(k+a) + 1/(k+l), a term absent when the node is not in
// that list. Ties keep activation order, then lexical order, then node
// index; TopK applies last.
func (r *relatedRun) fuse(act, sims []Scored) ([]Scored, error) {
	k := r.p.LexicalK
	type fused = fusedCand
	// at: a node's index in all, in the scratch's i1 under one generation.
	at := &r.s.i1
	at.need(r.s.n)
	gen := r.s.nextGen()
	all := slices.Grow(r.s.fused[:0], len(act)+len(sims))
	defer func() { r.s.fused = all[:0] }()
	for i, s := range act {
		at.set(s.Node, gen, int32(len(all)))
		all = append(all, fused{node: s.Node, score: 1 / (k + float64(i+1)), actRank: i + 1})
	}
	rank := 0
	var ks *kindSet
	if r.p.Kind != "" {
		ks = r.e.nodesOfKind(r.p.Kind)
	}
	for _, s := range sims {
		if ks != nil {
			is, err := r.e.isKind(ks, r.p.Kind, s.Node)
			if err != nil {
				return nil, err
			}
			if !is {
				continue
			}
		}
		rank++
		i32, ok := at.get(s.Node, gen)
		i := int(i32)
		if !ok {
			i = len(all)
			at.set(s.Node, gen, int32(i))
			all = append(all, fused{node: s.Node})
		}
		all[i].score += r.fb.factor(s.Node) / (k + float64(rank))
		all[i].lexRank = rank
	}
	if r.p.TopK > 0 && len(all) > 2*r.p.TopK {
		// Only the nodes scored at least the TopK-th best score can be
		// kept (score orders first): sort those alone.
		scores := slices.Grow(r.s.scores[:0], len(all))
		for _, f := range all {
			scores = append(scores, f.score)
		}
		r.s.scores = scores
		t := kthLargest(scores, r.p.TopK)
		i := 0
		for j := range all {
			if all[j].score >= t {
				all[i], all[j] = all[j], all[i]
				i++
			}
		}
		all = all[:i]
	}
	slices.SortFunc(all, func(a, b fused) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		if c := cmp.Compare(rankOrder(a.actRank), rankOrder(b.actRank)); c != 0 {
			return c
		}
		if c := cmp.Compare(rankOrder(a.lexRank), rankOrder(b.lexRank)); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
	if r.p.TopK > 0 && len(all) > r.p.TopK {
		all = all[:r.p.TopK]
	}
	out := make([]Scored, len(all))
	for i, f := range all {
		out[i] = Scored{Node: f.node, Score: f.score}
	}
	return out, nil
}

// spread computes A = Σ_{k=0..D} x_k where x_0 is the seed vector and
// x_k(t) = Σ_u x_{k−1}(u) × decay × c(u,t) / S(u) over the edges of every u
// with x_{k−1}(u) >= threshold; c is role weight × clamped edge weight, S(u)
// the sum of c over u's usable edges.
func (r *relatedRun) spread(seeds []Seed) error {
	s := r.s
	r.slotGen = s.nextGen()
	s.walk = s.walk[:0]
	seedGen := s.nextGen()
	s.touched = s.touched[:0]
	s.frontier = s.frontier[:0]
	for _, sd := range seeds {
		x := sd.Score
		if !(x > 0) || !finite(x) {
			continue
		}
		x = min(x, r.p.SaturationCap)
		i := r.slotOf(sd.Node) // before indexing: it may append
		w := &s.walk[i]
		if w.mGen[r.cur] == seedGen {
			w.m[r.cur] = max(w.m[r.cur], x)
			continue
		}
		w.m[r.cur], w.mGen[r.cur] = x, seedGen
		s.frontier = append(s.frontier, sd.Node)
	}
	for _, v := range s.frontier {
		r.add(v, r.cur)
	}
	for depth := 1; depth <= r.p.Depth && len(s.frontier) > 0; depth++ {
		next := s.nextGen()
		s.nextList = s.nextList[:0]
		s.sortNodes(s.frontier) // sums arrive in node order: the same bits every run
		for _, u := range s.frontier {
			x := s.walk[r.slot(u)].m[r.cur]
			if x < r.p.Threshold {
				continue
			}
			if err := r.send(u, x, next); err != nil {
				return err
			}
		}
		for _, v := range s.nextList {
			r.add(v, 1-r.cur)
		}
		// The next step's mass becomes the current one.
		r.cur = 1 - r.cur
		s.frontier, s.nextList = s.nextList, s.frontier
	}
	return nil
}

// walkNode is a visited node's state in a related walk: its accumulated
// activation A (set once the node is in touched) and its mass in two
// steps (m[i] valid when mGen[i] is the step's generation). Visited
// nodes are numbered in the order they are reached (scratch.slot), so a
// walk that reaches a sixth of a large graph touches that many states,
// not three arrays as long as the graph (page faults are most of what a
// one-shot process pays for a walk).
type walkNode struct {
	acc    float64
	m      [2]float64
	mGen   [2]uint32
	accSet bool
}

// slotOf is v's index in the walk, numbering it when it is first reached.
func (r *relatedRun) slotOf(v uint32) int32 {
	s := r.s
	if i, ok := s.slot.get(v, r.slotGen); ok {
		return i
	}
	i := int32(len(s.walk))
	s.walk = append(s.walk, walkNode{})
	s.slot.set(v, r.slotGen, i)
	return i
}

// slot is the index of v, a node the walk has reached.
func (r *relatedRun) slot(v uint32) int32 { return r.s.slot.e[v].v }

// add accumulates v's mass of step m (walkNode.m[m]) into A(v).
func (r *relatedRun) add(v uint32, m int) {
	s := r.s
	w := &s.walk[r.slot(v)]
	if w.accSet {
		w.acc += w.m[m]
		return
	}
	w.acc, w.accSet = w.m[m], true
	s.touched = append(s.touched, v)
}

// send splits x × decay among u's usable edges (out-edges weighted by
// their role's Out weight, in-edges by In), into the next step's mass
// (walkNode.m[1-cur] under gen next).
func (r *relatedRun) send(u uint32, x float64, next uint32) error {
	outs, outRels, outW, err := r.e.out(u)
	if err != nil {
		return err
	}
	ins, inRels, inW, err := r.e.in(u)
	if err != nil {
		return err
	}
	total := 0.0
	for i, t := range outs {
		if t != u {
			total += r.weight[0][outRels[i]] * edgeWeight(outW[i])
		}
	}
	for i, t := range ins {
		if t != u {
			total += r.weight[1][inRels[i]] * edgeWeight(inW[i])
		}
	}
	links := r.fb.linksOf(u)
	for _, l := range links {
		total += r.fb.strength(l)
	}
	if !(total > 0) {
		return nil
	}
	base := x * r.p.Decay / total
	s := r.s
	nx := 1 - r.cur
	put := func(t uint32, c float64) {
		if c <= 0 || t == u {
			return
		}
		y := base * c
		i := r.slotOf(t)
		w := &s.walk[i]
		if w.mGen[nx] == next {
			w.m[nx] += y
			return
		}
		w.m[nx], w.mGen[nx] = y, next
		s.nextList = append(s.nextList, t)
	}
	for i, t := range outs {
		put(t, r.weight[0][outRels[i]]*edgeWeight(outW[i]))
	}
	for i, t := range ins {
		put(t, r.weight[1][inRels[i]]*edgeWeight(inW[i]))
	}
	for _, l := range links {
		put(l.Node, r.fb.strength(l))
	}
	return nil
}

// rankCand is a candidate of rank: its score and tie-breaks.
type rankCand struct {
	Scored
	recent int32 // recency rank; MaxInt32 when none
	pr     float64
}

// rank keeps the activated nodes of the kind asked, scores them (A × (1 +
// τ × recency)), orders them (score, then recency rank, then PageRank,
// then node index), and applies the per-container cap and the top-K cut
// (topK <= 0: all), appending to dst[:0].
func (r *relatedRun) rank(hist *History, topK int, dst []Scored) ([]Scored, error) {
	s := r.s
	var pr []float64
	if r.e.info != nil {
		var err error
		if pr, _, err = r.e.info.PageRank(); err != nil {
			return nil, err
		}
	}
	var ks *kindSet
	if r.p.Kind != "" {
		ks = r.e.nodesOfKind(r.p.Kind)
	}
	// The scratch's, kept for the next ranking, grown once to its bound:
	// appending tens of thousands of candidates grows a slice by a
	// quarter at a time, copying it into fresh memory about five times
	// its final size (page faults that cost a one-shot process more than
	// the ranking itself).
	cands := slices.Grow(s.cands[:0], len(s.touched))
	defer func() { s.cands = cands[:0] }()
	for _, v := range s.touched {
		if ks != nil && ks.surelyNot(v) {
			continue // before reading A: most activated nodes are of other kinds
		}
		a := s.walk[r.slot(v)].acc * r.fb.factor(v)
		if !(a > 0) {
			continue
		}
		if ks != nil {
			is, err := r.e.isKind(ks, r.p.Kind, v)
			if err != nil {
				return nil, err
			}
			if !is {
				continue
			}
		}
		cands = append(cands, rankCand{Scored: Scored{Node: v, Score: a * (1 + r.p.Temporal*hist.Recency(v))}})
	}
	// fill sets the tie-breaks of cs (read only for the candidates that
	// are ordered: with a top-k, those above its threshold first).
	fill := func(cs []rankCand) {
		for i := range cs {
			c, v := &cs[i], cs[i].Node
			c.recent = 1<<31 - 1
			if hist != nil && int(v) < len(hist.rank) && hist.rank[v] >= 0 {
				c.recent = hist.rank[v]
			}
			if int(v) < len(pr) {
				c.pr = pr[v]
			}
		}
	}
	cmp := func(a, b rankCand) int {
		switch {
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		case a.recent != b.recent:
			if a.recent < b.recent {
				return -1
			}
			return 1
		case a.pr != b.pr:
			if a.pr > b.pr {
				return -1
			}
			return 1
		case a.Node != b.Node:
			if a.Node < b.Node {
				return -1
			}
			return 1
		}
		return 0
	}
	// Candidates in rank order, lazily: with a TopK, a binary heap yields
	// them one by one (O(n + taken·log n) instead of sorting every
	// activated node; the filters below may skip some, so how many are
	// taken is not known up front). The order is the same total order
	// either way.
	next := func() func() (rankCand, bool) {
		if topK <= 0 {
			fill(cands)
			s.candsTmp = sortRankCands(cands, s.candsTmp, cmp)
			i := 0
			return func() (rankCand, bool) {
				if i == len(cands) {
					return rankCand{}, false
				}
				i++
				return cands[i-1], true
			}
		}
		// The first part holds every candidate scored at least the
		// score of the want-th best (score orders first, so they all come
		// before the rest); the rest is heaped only if taking runs past.
		h, rest := cands, []rankCand(nil)
		if want := 2*topK + 64; len(cands) > 4*want {
			scores := slices.Grow(r.s.scores[:0], len(cands))
			for _, c := range cands {
				scores = append(scores, c.Score)
			}
			r.s.scores = scores
			t := kthLargest(scores, want)
			i := 0
			for j := range cands {
				if cands[j].Score >= t {
					cands[i], cands[j] = cands[j], cands[i]
					i++
				}
			}
			h, rest = cands[:i], cands[i:]
		}
		fill(h)
		less := func(i, j int) bool { return cmp(h[i], h[j]) < 0 }
		down := func(i, n int) {
			for {
				l := 2*i + 1
				if l >= n {
					return
				}
				m := l
				if r := l + 1; r < n && less(r, l) {
					m = r
				}
				if !less(m, i) {
					return
				}
				h[i], h[m] = h[m], h[i]
				i = m
			}
		}
		heapify := func() {
			for i := len(h)/2 - 1; i >= 0; i-- {
				down(i, len(h))
			}
		}
		heapify()
		n := len(h)
		return func() (rankCand, bool) {
			if n == 0 && len(rest) > 0 {
				h, rest = rest, nil
				fill(h)
				heapify()
				n = len(h)
			}
			if n == 0 {
				return rankCand{}, false
			}
			top := h[0]
			n--
			h[0] = h[n]
			down(0, n)
			return top, true
		}
	}()
	out := slices.Grow(dst[:0], min(len(cands), max(topK, 0)))
	s.i1.need(s.n)
	kept := s.nextGen() // leaves listed per container, in i1 (underCap)
	for c, ok := next(); ok; c, ok = next() {
		if topK > 0 && len(out) == topK {
			break
		}
		if r.p.PerContainer > 0 {
			ok, err := r.underCap(c.Node, kept)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, c.Scored)
	}
	return out, nil
}

// underCap reports whether leaf v may be listed: v is not a leaf (it has a
// structure out-edge), or has no container, or one of its containers has
// listed fewer than PerContainer leaves. It counts v against every
// container when it is listed. The leaves listed per container are
// counted in the scratch's i1 under generation gen.
func (r *relatedRun) underCap(v uint32, gen uint32) (bool, error) {
	leaf, err := r.e.isLeaf(v)
	if err != nil || !leaf {
		return !leaf, err
	}
	ins, inRels, _, err := r.e.in(v)
	if err != nil {
		return false, err
	}
	containers := r.s.containers[:0]
	defer func() { r.s.containers = containers[:0] }()
	for i, u := range ins {
		if r.e.relRole[inRels[i]] == roles.Structure && !slices.Contains(containers, u) {
			containers = append(containers, u)
		}
	}
	if len(containers) == 0 {
		return true, nil
	}
	kept := &r.s.i1
	room := false
	for _, u := range containers {
		if n, _ := kept.get(u, gen); int(n) < r.p.PerContainer {
			room = true
		}
	}
	if room {
		for _, u := range containers {
			n, _ := kept.get(u, gen)
			kept.set(u, gen, n+1)
		}
	}
	return room, nil
}

// rankOrder orders 1-based ranks of a fused ranking, 0 (not ranked in that
// list) after every rank.
func rankOrder(r int) int {
	if r == 0 {
		return math.MaxInt
	}
	return r
}
