package engines

import (
	"slices"
	"strings"

	"github.com/memctl/memctl/csr"
)

// MatchKind is how a query string matched a node, in priority order.
type MatchKind int

const (
	MatchExact MatchKind = iota
	MatchPrefix
	MatchSubstring
	MatchFuzzy
)

func (k MatchKind) String() string {
	switch k {
	case MatchExact:
		return "exact"
	case MatchPrefix:
		return "prefix"
	case MatchSubstring:
		return "substring"
	case MatchFuzzy:
		return "fuzzy"
	}
	return "invalid"
}

// Seed scores by match kind; a fuzzy match scores FuzzyScore × similarity.
const (
	ExactScore     = 1.0
	PrefixScore    = 0.9
	SubstringScore = 0.8
	FuzzyScore     = 0.7
)

// Seed-finding defaults.
const (
	DefaultSeedsPerQuery = 8
	DefaultMinSimilarity = 0.3
)

// SeedParams configures seed finding.
type SeedParams struct {
	PerQuery      int     // most nodes one query string resolves to (>= 1)
	MinSimilarity float64 // fuzzy matches need trigram Jaccard similarity >= this, in (0, 1]
}

// DefaultSeedParams returns the documented defaults.
func DefaultSeedParams() SeedParams {
	return SeedParams{PerQuery: DefaultSeedsPerQuery, MinSimilarity: DefaultMinSimilarity}
}

// SeedMatch is one node a query string resolved to.
type SeedMatch struct {
	Query string
	Node  csr.NodeIndex
	Kind  MatchKind
	Score float64
}

// keyIndex is the part of *csr.Graph seed finding reads: exact lookup, the
// node indices in key order, and the trigram postings.
type keyIndex interface {
	NumNodes() int
	Key(n csr.NodeIndex) (string, error)
	LookupKey(key string) (csr.NodeIndex, bool, error)
	KeyOrder() []uint32
	Postings(tri uint32) ([]uint32, error)
}

// FindSeeds resolves each query string to nodes by the first level of the
// cascade exact > prefix > substring > fuzzy that matches anything, and
// returns the union as activation seeds (a node matched by several queries
// keeps its best score), in node order. matches lists every match per
// query, in query order, for display.
func (e *Engine) FindSeeds(queries []string, p SeedParams) (seeds []Seed, matches []SeedMatch, err error) {
	if p.PerQuery < 1 {
		return nil, nil, invalidf("seeds per query %d must be >= 1", p.PerQuery)
	}
	if !finite(p.MinSimilarity) || p.MinSimilarity <= 0 || p.MinSimilarity > 1 {
		return nil, nil, invalidf("min similarity %v not in (0, 1]", p.MinSimilarity)
	}
	if e.keys == nil {
		return nil, nil, invalidf("graph has no key index")
	}
	best := map[csr.NodeIndex]float64{}
	for _, q := range queries {
		if q == "" {
			return nil, nil, invalidf("empty query")
		}
		m, err := e.resolve(q, p)
		if err != nil {
			return nil, nil, err
		}
		for _, sm := range m {
			if old, ok := best[sm.Node]; !ok || sm.Score > old {
				best[sm.Node] = sm.Score
			}
		}
		matches = append(matches, m...)
	}
	for n, sc := range best {
		seeds = append(seeds, Seed{Node: n, Score: sc})
	}
	slices.SortFunc(seeds, func(a, b Seed) int { return int64Cmp(int64(a.Node), int64(b.Node)) })
	return seeds, matches, nil
}

func int64Cmp(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// resolve runs the cascade for one query string.
func (e *Engine) resolve(q string, p SeedParams) ([]SeedMatch, error) {
	if n, ok, err := e.keys.LookupKey(q); err != nil {
		return nil, err
	} else if ok {
		return []SeedMatch{{Query: q, Node: n, Kind: MatchExact, Score: ExactScore}}, nil
	}
	m, err := e.prefixMatches(q, p.PerQuery)
	if err != nil || len(m) > 0 {
		return m, err
	}
	if len(q) < 3 {
		return nil, nil // the trigram index cannot answer shorter strings
	}
	m, err = e.substringMatches(q, p.PerQuery)
	if err != nil || len(m) > 0 {
		return m, err
	}
	return e.fuzzyMatches(q, p)
}

// prefixMatches binary-searches the key order for the first key >= q and
// takes up to limit keys that start with q, in key order.
func (e *Engine) prefixMatches(q string, limit int) ([]SeedMatch, error) {
	order := e.keys.KeyOrder()
	var firstErr error
	keyAt := func(i int) string {
		n := order[i]
		if int(n) >= e.numNodes {
			if firstErr == nil {
				firstErr = corruptf("key order entry %d is node %d, beyond %d nodes", i, n, e.numNodes)
			}
			return ""
		}
		k, err := e.keys.Key(n)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return k
	}
	lo, hi := 0, len(order)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if keyAt(mid) < q {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	var out []SeedMatch
	for i := lo; i < len(order) && len(out) < limit; i++ {
		if !strings.HasPrefix(keyAt(i), q) {
			break
		}
		out = append(out, SeedMatch{Query: q, Node: order[i], Kind: MatchPrefix, Score: PrefixScore})
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// queryTrigrams returns the distinct trigrams of q, lower-cased the way the
// index stores them, sorted.
func queryTrigrams(q string) []uint32 {
	var t []uint32
	for i := 0; i+3 <= len(q); i++ {
		t = append(t, trigramOf(q[i], q[i+1], q[i+2]))
	}
	slices.Sort(t)
	return slices.Compact(t)
}

// trigramOf packs three bytes, ASCII letters lower-cased (SPEC.md §7,
// trigram index).
func trigramOf(a, b, c byte) uint32 {
	return uint32(lowerASCII(a))<<16 | uint32(lowerASCII(b))<<8 | uint32(lowerASCII(c))
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func lowerASCIIString(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

func (e *Engine) postings(tri uint32) ([]uint32, error) {
	ps, err := e.keys.Postings(tri)
	if err != nil {
		return nil, err
	}
	for _, n := range ps {
		if int(n) >= e.numNodes {
			return nil, corruptf("trigram %06x posting names node %d, beyond %d nodes", tri, n, e.numNodes)
		}
	}
	return ps, nil
}

// substringMatches intersects the posting lists of q's trigrams (starting
// from the shortest), confirms each candidate's lower-cased key contains the
// lower-cased q, and keeps the limit shortest keys (ties by node index).
func (e *Engine) substringMatches(q string, limit int) ([]SeedMatch, error) {
	tris := queryTrigrams(q)
	lists := make([][]uint32, len(tris))
	for i, t := range tris {
		ps, err := e.postings(t)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, nil
		}
		lists[i] = ps
	}
	slices.SortFunc(lists, func(a, b []uint32) int { return int64Cmp(int64(len(a)), int64(len(b))) })
	lq := lowerASCIIString(q)
	type cand struct {
		n      uint32
		keyLen int
	}
	var cands []cand
next:
	for _, n := range lists[0] {
		for _, l := range lists[1:] {
			if _, ok := slices.BinarySearch(l, n); !ok {
				continue next
			}
		}
		k, err := e.keys.Key(n)
		if err != nil {
			return nil, err
		}
		if strings.Contains(lowerASCIIString(k), lq) {
			cands = append(cands, cand{n, len(k)})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.keyLen != b.keyLen {
			return a.keyLen - b.keyLen
		}
		return int64Cmp(int64(a.n), int64(b.n))
	})
	out := make([]SeedMatch, 0, min(limit, len(cands)))
	for _, c := range cands[:min(limit, len(cands))] {
		out = append(out, SeedMatch{Query: q, Node: c.n, Kind: MatchSubstring, Score: SubstringScore})
	}
	return out, nil
}

// fuzzyMatches counts, per node, how many of q's trigrams its key shares
// (one pass over each posting list), and scores candidates by the Jaccard
// similarity of the two trigram sets.
func (e *Engine) fuzzyMatches(q string, p SeedParams) ([]SeedMatch, error) {
	tris := queryTrigrams(q)
	s := e.getScratch()
	defer e.putScratch(s)
	s.i1.need(s.n)
	gen := s.nextGen() // i1 = shared trigram count
	s.touched = s.touched[:0]
	for _, t := range tris {
		ps, err := e.postings(t)
		if err != nil {
			return nil, err
		}
		for _, n := range ps {
			c, ok := s.i1.get(n, gen)
			if !ok {
				s.touched = append(s.touched, n)
			}
			s.i1.set(n, gen, c+1)
		}
	}
	// A node sharing fewer than minShared trigrams cannot reach the
	// similarity bound, whatever its key: skip it without reading the key.
	minShared := int32(p.MinSimilarity * float64(len(tris)))
	var cands []Scored
	for _, n := range s.touched {
		shared := s.i1.v[n]
		if shared < minShared {
			continue
		}
		k, err := e.keys.Key(n)
		if err != nil {
			return nil, err
		}
		kt := len(queryTrigrams(k))
		sim := float64(shared) / float64(len(tris)+kt-int(shared))
		if sim >= p.MinSimilarity {
			cands = append(cands, Scored{Node: n, Score: sim})
		}
	}
	var out []SeedMatch
	for _, c := range topK(cands, p.PerQuery) {
		out = append(out, SeedMatch{Query: q, Node: c.Node, Kind: MatchFuzzy, Score: FuzzyScore * c.Score})
	}
	return out, nil
}
