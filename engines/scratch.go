package engines

import (
	"math/bits"
	"slices"
	"unsafe"
)

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
	act        []actEntry  // activation only
	slot       stampedInts // related only: a visited node's index in walk
	walk       []walkNode  // related only, capacity n

	// Reused lists.
	touched    []uint32
	frontier   []uint32
	nextList   []uint32
	fired      []uint32
	bits       []uint64 // sortNodes' bitmap: all zero between calls
	scores     []float64
	cands      []rankCand // related ranking's candidates
	candsTmp   []rankCand // sortRankCands' buffer
	containers []uint32   // related ranking: a leaf's containers (underCap)
	ranked     []Scored   // related: the activation ranking fused with lexical similarity
	sims       []Scored   // related: the lexical similarity fused with it
	fused      []fusedCand
	arrivals   []arrival
	labels     []label
	pulses     []pulse
}

// stampedFloats is a per-node float64 array whose entries are valid only
// under the generation stamped beside them (stamp and value share a cache
// line, so a lookup costs one miss).
type stampedFloats struct{ e []floatEntry }

type floatEntry struct {
	stamp uint32
	v     float64
}

// stampedInts is the int32 counterpart of stampedFloats.
type stampedInts struct{ e []intEntry }

type intEntry struct {
	stamp uint32
	v     int32
}

func (a *stampedFloats) need(n int) {
	if a.e == nil {
		a.e = make([]floatEntry, n)
		writePages(a.e)
	}
}

// get returns the value of i under generation gen, or 0 and false.
func (a *stampedFloats) get(i, gen uint32) (float64, bool) {
	if a.e[i].stamp != gen {
		return 0, false
	}
	return a.e[i].v, true
}

func (a *stampedFloats) set(i, gen uint32, x float64) { a.e[i] = floatEntry{gen, x} }

func (a *stampedFloats) clearStamps() {
	for i := range a.e {
		a.e[i].stamp = 0
	}
}

func (a *stampedInts) need(n int) {
	if a.e == nil {
		a.e = make([]intEntry, n)
		writePages(a.e)
	}
}

// writePages writes the zero value into one entry of every 4 KiB of e, a
// per-node array just allocated. A large allocation comes straight from
// the operating system, zero and not yet mapped, and a query reads an
// entry's stamp before it writes the entry: the read maps the shared zero
// page and the write after it faults again to copy it, two page faults a
// page where writing first takes one. On the Go standard library (119K
// nodes) that is 1,400 faults fewer for the related walk's three arrays,
// a few milliseconds of a one-shot `context`.
func writePages[E any](e []E) {
	var zero E
	step := max(1, 4096/int(unsafe.Sizeof(zero)))
	for i := 0; i < len(e); i += step {
		e[i] = zero
	}
}

func (a *stampedInts) get(i, gen uint32) (int32, bool) {
	if a.e[i].stamp != gen {
		return 0, false
	}
	return a.e[i].v, true
}

func (a *stampedInts) set(i, gen uint32, x int32) { a.e[i] = intEntry{gen, x} }

func (a *stampedInts) clearStamps() {
	for i := range a.e {
		a.e[i].stamp = 0
	}
}

// sortNodes sorts list, a list of distinct node indices, in place. A long
// list is sorted through a bitmap of the nodes (set its bits, read them
// back in order: linear in the list and the node range it spans, against
// n log n comparisons); a short one, or one with a repeated node, by
// comparison. The result is the same either way.
func (s *scratch) sortNodes(list []uint32) {
	const minBitmap = 256
	if len(list) < minBitmap {
		slices.Sort(list)
		return
	}
	if want := (s.n + 63) / 64; len(s.bits) < want {
		s.bits = make([]uint64, want)
	}
	lo, hi := list[0], list[0]
	for i, v := range list {
		w, b := v>>6, uint64(1)<<(v&63)
		if s.bits[w]&b != 0 { // a repeated node: undo, sort by comparison
			for _, u := range list[:i] {
				s.bits[u>>6] = 0
			}
			slices.Sort(list)
			return
		}
		s.bits[w] |= b
		lo, hi = min(lo, v), max(hi, v)
	}
	i := 0
	for w := lo >> 6; w <= hi>>6; w++ {
		x := s.bits[w]
		s.bits[w] = 0
		for x != 0 {
			list[i] = w<<6 | uint32(bits.TrailingZeros64(x))
			i++
			x &= x - 1
		}
	}
}

// nextGen returns a fresh generation. When the counter wraps, every stamp is
// cleared so no stale entry can match.
func (s *scratch) nextGen() uint32 {
	s.gen++
	if s.gen == 0 {
		s.f1.clearStamps()
		s.f2.clearStamps()
		s.f3.clearStamps()
		s.i1.clearStamps()
		s.slot.clearStamps()
		for i := range s.act {
			s.act[i].actGen, s.act[i].auxGen, s.act[i].fireGen = 0, 0, 0
		}
		s.gen = 1
	}
	return s.gen
}

// getScratch returns the engine's kept scratch when it is free, else one
// from the pool. The pool drops what it holds at every garbage
// collection, and a scratch's per-node arrays are megabytes on a large
// graph (8 bytes a node and 40 a visited node for the related walk): keeping one
// across collections spares a long-lived process (the MCP server)
// allocating and zeroing them again after each.
func (e *Engine) getScratch() *scratch {
	if s := e.kept.Swap(nil); s != nil {
		return s
	}
	return e.pool.Get().(*scratch)
}

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
	if cap(s.cands) > keep || cap(s.candsTmp) > keep {
		s.cands, s.candsTmp = nil, nil
	}
	if cap(s.ranked) > keep || cap(s.sims) > keep || cap(s.fused) > keep {
		s.ranked, s.sims, s.fused = nil, nil, nil
	}
	if e.kept.CompareAndSwap(nil, s) {
		return
	}
	e.pool.Put(s)
}

// actEntry is one node's activation state in one query (see activationRun).
type actEntry struct {
	actGen, auxGen uint32
	act, aux       float64
	fireGen        uint32
	depth          int32
	fire           float64
}
