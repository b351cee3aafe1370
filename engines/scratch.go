package engines

// scratch is the reusable per-query working memory. Its per-node arrays are
// allocated on first use and never cleared wholesale: an entry is valid only
// when its stamp equals the generation the query took for that array, so
// starting a query is O(1) and a query touches only what it visits.
type scratch struct {
	n   int    // nodes in the graph
	gen uint32 // last generation handed out; 0 is never valid

	// Per-node arrays. Each engine documents the role it gives them.
	f1, f2, f3 stampedFloats
	i1         stampedInts

	// Reused lists.
	touched  []uint32
	frontier []uint32
	nextList []uint32
	stepVal  []float64
	fired    []uint32
	arrivals []arrival
	labels   []label
	pulses   []pulse
}

type stampedFloats struct {
	v     []float64
	stamp []uint32
}

type stampedInts struct {
	v     []int32
	stamp []uint32
}

func (a *stampedFloats) need(n int) {
	if a.v == nil {
		a.v = make([]float64, n)
		a.stamp = make([]uint32, n)
	}
}

// get returns the value of i under generation gen, or 0 and false.
func (a *stampedFloats) get(i, gen uint32) (float64, bool) {
	if a.stamp[i] != gen {
		return 0, false
	}
	return a.v[i], true
}

func (a *stampedFloats) set(i, gen uint32, x float64) {
	a.stamp[i] = gen
	a.v[i] = x
}

func (a *stampedInts) need(n int) {
	if a.v == nil {
		a.v = make([]int32, n)
		a.stamp = make([]uint32, n)
	}
}

func (a *stampedInts) get(i, gen uint32) (int32, bool) {
	if a.stamp[i] != gen {
		return 0, false
	}
	return a.v[i], true
}

func (a *stampedInts) set(i, gen uint32, x int32) {
	a.stamp[i] = gen
	a.v[i] = x
}

// nextGen returns a fresh generation. When the counter wraps, every stamp is
// cleared so no stale entry can match.
func (s *scratch) nextGen() uint32 {
	s.gen++
	if s.gen == 0 {
		clear(s.f1.stamp)
		clear(s.f2.stamp)
		clear(s.f3.stamp)
		clear(s.i1.stamp)
		s.gen = 1
	}
	return s.gen
}

func (e *Engine) getScratch() *scratch { return e.pool.Get().(*scratch) }

func (e *Engine) putScratch(s *scratch) {
	// Drop list capacity grown far beyond typical queries so one huge query
	// does not pin memory in a pooled scratch forever.
	const keep = 1 << 20
	if cap(s.labels) > keep {
		s.labels = nil
	}
	if cap(s.pulses) > keep {
		s.pulses = nil
	}
	if cap(s.touched) > keep {
		s.touched = nil
	}
	e.pool.Put(s)
}
