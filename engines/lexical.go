package engines

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/memctl/memctl/snapshot"
)

// DefaultLexicalK is the k of the reciprocal rank fusion that merges the
// related profile's activation ranking of files with their lexical
// similarity (SPEC.md §8.2.1): a file at rank r of a list gets 1/(k + r).
// 60 is the value the method was published with (Cormack, Clarke and
// Büttcher, SIGIR 2009), not one fitted here.
const DefaultLexicalK = 60

// Lexicon is the TF-IDF index of the vocabularies the graph's nodes carry
// (the "terms" field of ingest's file payloads, SPEC.md §9.3): a node's
// vector weighs term t by (1 + ln tf) × ln(N / df) over the N nodes with
// terms, scaled to unit length; two nodes' similarity is the cosine of
// their vectors. Nodes without terms are not in it.
//
// It is one set of arrays (snapshot.Lexicon: vectors and postings as CSR)
// whether the snapshot carries it (the lexicon sections an export from the
// store writes, SPEC.md §7.10.1: mapped, nothing rebuilt) or it is built
// here from the payloads (a snapshot without them); both give the same
// bits, so the same ranking.
type Lexicon struct {
	a      *snapshot.Lexicon
	mapped bool
	// nodes is the number of nodes with a non-empty vector, counted on
	// the first Len (a pass over the vector offsets a query does not need).
	nodes struct {
		once sync.Once
		n    int
	}
	// sims holds Similar's accumulators (*simScratch), reused across calls.
	sims sync.Pool
}

// simScratch is Similar's dense accumulator: acc[v] for every node index,
// zero outside touched (the nodes set by the current call).
type simScratch struct {
	acc     []float64
	touched []uint32
	sorted  []Scored // sortByScore's buffer
}

type lexiconOnce struct {
	once sync.Once
	l    *Lexicon
	err  error
}

// Lexicon returns the snapshot's lexicon sections when it has them, and
// otherwise reads the vocabularies of every node once per engine (it scans
// the payloads that have a "terms" field). An engine without node
// information has an empty lexicon.
func (e *Engine) Lexicon() (*Lexicon, error) {
	e.lexicon.once.Do(func() {
		if e.graph != nil {
			if a, ok := e.graph.File().Lexicon(); ok {
				e.lexicon.l, e.lexicon.err = e.mappedLexicon(a)
				return
			}
		}
		var a *snapshot.Lexicon
		if a, e.lexicon.err = e.BuildLexicon(); e.lexicon.err == nil {
			e.lexicon.l = newLexicon(a, false)
		}
	})
	return e.lexicon.l, e.lexicon.err
}

// mappedLexicon checks what Similar follows in the mapped arrays — offsets
// that never decrease and stay in bounds, term ids below the term count,
// node indices below the node count — once, in O(nodes + terms + entries)
// (about a millisecond on the Go standard library), so Similar reads them
// without checks. Damage is ErrCorrupt.
func (e *Engine) mappedLexicon(a *snapshot.Lexicon) (*Lexicon, error) {
	if len(a.VecOffsets) != e.numNodes+1 {
		return nil, corruptf("lexicon has vectors for %d nodes, the graph %d", len(a.VecOffsets)-1, e.numNodes)
	}
	v := uint64(len(a.VecTerms))
	if uint64(len(a.VecWeights)) != v || uint64(len(a.PostNodes)) != v || uint64(len(a.PostWeights)) != v {
		return nil, corruptf("lexicon arrays of unequal length")
	}
	for _, offs := range [][]uint64{a.VecOffsets, a.PostOffsets} {
		if len(offs) == 0 || offs[0] != 0 || offs[len(offs)-1] != v {
			return nil, corruptf("lexicon offsets do not span its %d entries", v)
		}
		for i := 1; i < len(offs); i++ {
			if offs[i] < offs[i-1] {
				return nil, corruptf("lexicon offset %d decreases", i)
			}
		}
	}
	terms := uint32(a.NumTerms())
	for i, t := range a.VecTerms {
		if t >= terms {
			return nil, corruptf("lexicon entry %d has term %d, beyond %d terms", i, t, terms)
		}
	}
	for i, n := range a.PostNodes {
		if n >= uint32(e.numNodes) {
			return nil, corruptf("lexicon posting %d lists node %d, beyond %d nodes", i, n, e.numNodes)
		}
	}
	return newLexicon(a, true), nil
}

func newLexicon(a *snapshot.Lexicon, mapped bool) *Lexicon {
	return &Lexicon{a: a, mapped: mapped}
}

// Mapped reports whether the lexicon is the snapshot's (not rebuilt).
func (l *Lexicon) Mapped() bool { return l != nil && l.mapped }

// BuildLexicon computes the lexicon arrays from the payloads: term ids are
// the ranks of the distinct terms in byte order, each vector is summed and
// stored in term order, postings in node order, so the same graph always
// gives the same bits (the export writes them, SPEC.md §7.10.1).
func (e *Engine) BuildLexicon() (*snapshot.Lexicon, error) {
	docs := map[uint32][]termCount{}
	var nodes []uint32
	df := map[string]int{}
	err := e.eachPayloadWith("terms", func(v uint32, p []byte) error {
		vec, ok := payloadTerms(p)
		if !ok {
			return nil // not the ingest shape: no vocabulary, not damage
		}
		for _, x := range vec {
			df[x.t]++
		}
		if len(vec) > 0 {
			slices.SortFunc(vec, func(a, b termCount) int { return cmp.Compare(a.t, b.t) })
			docs[v] = vec
			nodes = append(nodes, v) // eachPayloadWith goes in node order
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	termList := make([]string, 0, len(df))
	for t := range df {
		termList = append(termList, t)
	}
	slices.Sort(termList)
	termID := make(map[string]uint32, len(termList))
	for i, t := range termList {
		termID[t] = uint32(i)
	}
	n := len(docs)
	a := &snapshot.Lexicon{VecOffsets: make([]uint64, e.numNodes+1)}
	postCount := make([]uint64, len(termList)+1)
	next := 0
	for v := 0; v < e.numNodes; v++ {
		a.VecOffsets[v] = uint64(len(a.VecTerms))
		if next >= len(nodes) || nodes[next] != uint32(v) {
			continue
		}
		next++
		start := len(a.VecTerms)
		norm := 0.0
		for _, x := range docs[uint32(v)] {
			w := (1 + math.Log(float64(x.c))) * math.Log(float64(n)/float64(df[x.t]))
			if w > 0 {
				a.VecTerms = append(a.VecTerms, termID[x.t])
				a.VecWeights = append(a.VecWeights, w)
				norm += w * w
			}
		}
		if norm == 0 {
			a.VecTerms, a.VecWeights = a.VecTerms[:start], a.VecWeights[:start]
			continue
		}
		norm = math.Sqrt(norm)
		for i := start; i < len(a.VecTerms); i++ {
			a.VecWeights[i] /= norm
			postCount[a.VecTerms[i]+1]++
		}
	}
	a.VecOffsets[e.numNodes] = uint64(len(a.VecTerms))
	// Postings: the vectors transposed, in node order.
	for t := 1; t < len(postCount); t++ {
		postCount[t] += postCount[t-1]
	}
	a.PostOffsets = slices.Clone(postCount)
	a.PostNodes = make([]uint32, len(a.VecTerms))
	a.PostWeights = make([]float64, len(a.VecTerms))
	for v := 0; v < e.numNodes; v++ {
		for i := a.VecOffsets[v]; i < a.VecOffsets[v+1]; i++ {
			t := a.VecTerms[i]
			a.PostNodes[postCount[t]] = uint32(v)
			a.PostWeights[postCount[t]] = a.VecWeights[i]
			postCount[t]++
		}
	}
	return a, nil
}

// Len is the number of nodes with a vocabulary.
func (l *Lexicon) Len() int {
	if l == nil {
		return 0
	}
	l.nodes.once.Do(func() {
		offs := l.a.VecOffsets
		for i := 0; i+1 < len(offs); i++ {
			if offs[i+1] != offs[i] {
				l.nodes.n++
			}
		}
	})
	return l.nodes.n
}

// Similar ranks the nodes with a vocabulary by the similarity of their
// vector to the seeds' (Σ seed score × seed vector): best first, ties by
// node index; only nodes with a similarity > 0, the seeds left out.
func (l *Lexicon) Similar(seeds []Seed) []Scored {
	return l.similarTo(seeds, nil)
}

// similarTo is Similar appending to dst[:0] (a caller's reused buffer).
func (l *Lexicon) similarTo(seeds []Seed, dst []Scored) []Scored {
	if len(l.a.VecTerms) == 0 { // no node has a vector (Len() == 0, without counting them)
		return nil
	}
	// A dense accumulator (a node's sum is built in the same order of
	// additions as with a map, so the same bits), reused across calls.
	sc, _ := l.sims.Get().(*simScratch)
	if sc == nil {
		sc = &simScratch{}
	}
	defer l.sims.Put(sc)
	if n := len(l.a.VecOffsets) - 1; len(sc.acc) < n {
		sc.acc = make([]float64, n)
		writePages(sc.acc) // read before written: fault each page once
	}
	acc, touched := sc.acc, sc.touched[:0]
	for _, sd := range seeds {
		if !(sd.Score > 0) || !finite(sd.Score) {
			continue
		}
		terms, ws, _ := l.a.Vector(sd.Node) // checked when the lexicon was made
		for i, t := range terms {
			ns, pws, _ := l.a.Postings(t)
			for j, v := range ns {
				if acc[v] == 0 {
					touched = append(touched, v)
				}
				acc[v] += sd.Score * ws[i] * pws[j]
			}
		}
	}
	out := slices.Grow(dst[:0], len(touched))
	for _, v := range touched {
		s := acc[v]
		acc[v] = 0
		if s > 0 && !slices.ContainsFunc(seeds, func(sd Seed) bool { return sd.Node == v }) {
			out = append(out, Scored{Node: v, Score: s})
		}
	}
	sc.touched = touched
	sc.sorted = sortByScore(out, sc.sorted) // scores are > 0: no NaN
	return out
}
