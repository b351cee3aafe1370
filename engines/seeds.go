package engines

import (
	"errors"
	"slices"
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
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
// node indices in key order with prefix ranges over it, and the trigram
// postings.
type keyIndex interface {
	Key(n csr.NodeIndex) (string, error)
	LookupKey(key string) (csr.NodeIndex, bool, error)
	KeyOrder() ([]uint32, error)
	PrefixRange(prefix string) (lo, hi int, err error)
	TrigramPostings(tri [3]byte) ([]uint32, error)
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
		return nil, indexErr(err)
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

// indexErr converts an out-of-range error from a lookup that took its node
// indices from the file (the key order) into a corruption error: only
// damaged index data can produce one there.
func indexErr(err error) error {
	if errors.Is(err, snapshot.ErrOutOfRange) {
		return corruptf("key order index: %v", err)
	}
	return err
}

// prefixMatches takes up to limit keys starting with q, in key order.
func (e *Engine) prefixMatches(q string, limit int) ([]SeedMatch, error) {
	order, err := e.keys.KeyOrder()
	if err != nil {
		return nil, err
	}
	lo, hi, err := e.keys.PrefixRange(q)
	if err != nil {
		return nil, indexErr(err)
	}
	if lo < 0 || hi > len(order) || lo > hi {
		return nil, corruptf("prefix range [%d, %d) outside key order of %d", lo, hi, len(order))
	}
	var out []SeedMatch
	for _, n := range order[lo:min(hi, lo+limit)] {
		if int(n) >= e.numNodes {
			return nil, corruptf("key order names node %d, beyond %d nodes", n, e.numNodes)
		}
		out = append(out, SeedMatch{Query: q, Node: n, Kind: MatchPrefix, Score: PrefixScore})
	}
	return out, nil
}

// queryTrigrams returns the distinct byte trigrams of q with ASCII letters
// lower-cased (as the index stores them), sorted.
func queryTrigrams(q string) [][3]byte { return appendTrigrams(nil, q) }

func bytesCmp(a, b [3]byte) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
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

func (e *Engine) postings(tri [3]byte) ([]uint32, error) {
	ps, err := e.keys.TrigramPostings(tri)
	if err != nil {
		return nil, err
	}
	for _, n := range ps {
		if int(n) >= e.numNodes {
			return nil, corruptf("postings of trigram %q name node %d, beyond %d nodes", tri[:], n, e.numNodes)
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

// fuzzyMatches finds the keys most similar to q by trigram Jaccard
// similarity. Candidates come from the posting lists of q's rarer trigrams
// (a trigram is common when more than max(64, nodes/16) keys have it; if all
// of q's trigrams are common, all are used), counted per node; candidates
// are then examined in decreasing count, each scored exactly from its key,
// until no remaining count can reach the similarity bound or beat the
// current PerQuery-th best.
func (e *Engine) fuzzyMatches(q string, p SeedParams) ([]SeedMatch, error) {
	tris := queryTrigrams(q)
	commonLen := max(64, e.numNodes/16)
	var rare [][]uint32
	var all [][]uint32
	for _, t := range tris {
		ps, err := e.postings(t)
		if err != nil {
			return nil, err
		}
		all = append(all, ps)
		if len(ps) <= commonLen {
			rare = append(rare, ps)
		}
	}
	if len(rare) == 0 {
		rare = all
	}
	nCommon := len(tris) - len(rare)

	s := e.getScratch()
	defer e.putScratch(s)
	s.i1.need(s.n)
	gen := s.nextGen() // i1 = number of rare trigrams shared
	s.touched = s.touched[:0]
	for _, ps := range rare {
		for _, n := range ps {
			c, ok := s.i1.get(n, gen)
			if !ok {
				s.touched = append(s.touched, n)
			}
			s.i1.set(n, gen, c+1)
		}
	}
	buckets := make([][]uint32, len(rare)+1)
	for _, n := range s.touched {
		c := s.i1.e[n].v
		buckets[c] = append(buckets[c], n)
	}
	var cands []Scored
	var keyTris [][3]byte
	for c := len(rare); c >= 1; c-- {
		bound := float64(c+nCommon) / float64(len(tris))
		if bound < p.MinSimilarity {
			break
		}
		if len(cands) >= p.PerQuery && bound < topK(cands, p.PerQuery)[p.PerQuery-1].Score {
			break
		}
		slices.Sort(buckets[c])
		for _, n := range buckets[c] {
			k, err := e.keys.Key(n)
			if err != nil {
				return nil, err
			}
			keyTris = appendTrigrams(keyTris[:0], k)
			shared := sharedCount(tris, keyTris)
			sim := float64(shared) / float64(len(tris)+len(keyTris)-shared)
			if sim >= p.MinSimilarity {
				cands = append(cands, Scored{Node: n, Score: sim})
			}
		}
	}
	var out []SeedMatch
	for _, c := range topK(cands, p.PerQuery) {
		out = append(out, SeedMatch{Query: q, Node: c.Node, Kind: MatchFuzzy, Score: FuzzyScore * c.Score})
	}
	return out, nil
}

// appendTrigrams appends the distinct case-folded trigrams of k, sorted.
func appendTrigrams(dst [][3]byte, k string) [][3]byte {
	for i := 0; i+3 <= len(k); i++ {
		dst = append(dst, [3]byte{lowerASCII(k[i]), lowerASCII(k[i+1]), lowerASCII(k[i+2])})
	}
	slices.SortFunc(dst, bytesCmp)
	return slices.Compact(dst)
}

// sharedCount is the size of the intersection of two sorted trigram sets.
func sharedCount(a, b [][3]byte) int {
	n := 0
	for len(a) > 0 && len(b) > 0 {
		switch c := bytesCmp(a[0], b[0]); {
		case c == 0:
			n++
			a, b = a[1:], b[1:]
		case c < 0:
			a = a[1:]
		default:
			b = b[1:]
		}
	}
	return n
}
