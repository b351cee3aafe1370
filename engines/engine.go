package engines

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/roles"
)

// ErrInvalidArgument marks a query the engines refuse (bad parameter values,
// unknown relation names); it is the caller's fault, not the snapshot's.
var ErrInvalidArgument = errors.New("engines: invalid argument")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// graphReader is the part of *csr.Graph the algorithms walk. It exists so the
// algorithm cores read one narrow surface; the public API takes *csr.Graph.
type graphReader interface {
	NumNodes() int
	NumEdges() int
	Out(n csr.NodeIndex) (targets []uint32, rels []uint32, weights []float32, err error)
	In(n csr.NodeIndex) (sources []uint32, rels []uint32, weights []float32, err error)
}

// Relation flag bits, per relation id, as the engines use them.
const (
	relKnown         uint8 = 1 << iota // the id is in the relation table
	relBidirectional                   // also propagates along in-edges
	relInhibitory                      // subtracts instead of scatter-max
)

// Engine answers queries over one snapshot graph. It is immutable after New
// and safe for concurrent use; per-query scratch is pooled.
type Engine struct {
	g        graphReader
	graph    *csr.Graph // nil in algorithm-core tests that use a plain adjacency
	keys     keyIndex   // seed-finding indexes; nil when the graph has none
	numNodes int
	numEdges int
	// relFlags[r] holds the rel* bits of relation id r; ids beyond the table
	// are unknown and an edge carrying one is corruption.
	relFlags []uint8
	// relRole[r] is the stored role of relation id r (SPEC §1); profiles
	// choose what to follow and how much it weighs by it, never by name.
	relRole  []roles.Role
	relNames map[string]uint32
	rank     []float64               // the snapshot's stored PageRank, nil without one: activation's tie-break
	pool     sync.Pool               // *scratch
	kept     atomic.Pointer[scratch] // one scratch kept across collections (getScratch)
	// checked has bit 2n (out) and 2n+1 (in) set once node n's edge list
	// in that direction passed checkEdges: the arrays are immutable, so a
	// list is checked once per engine, not on every read (a related walk
	// and its ranking read the same lists many times).
	checked []atomic.Uint32
	// leaves has bit 2n set once node n's out-edges were read for
	// isLeaf, and bit 2n+1 when n has a structure out-edge (not a leaf).
	leaves []atomic.Uint32

	// info reads node types, payloads and the stored PageRank (nil in
	// algorithm-core tests: no temporal term, no kind filter).
	info     nodeInfo
	temporal temporalOnce
	lexicon  lexiconOnce
	kinds    kindSets
	text     textIndexOnce
}

// nodeInfo is the part of *csr.Graph the related profile reads besides the
// adjacency: node types (kinds), payloads (git history) and PageRank (a
// tie-break).
type nodeInfo interface {
	Type(n csr.NodeIndex) (string, error)
	NodesOfType(typ string) (match, bad []uint64)
	Payload(n csr.NodeIndex) ([]byte, error)
	PageRank() ([]float64, bool, error)
}

// New prepares an engine over g. It reads only the relation table; the
// adjacency arrays are read in place by each query.
func New(g *csr.Graph) (*Engine, error) {
	rels, err := relationTable(g)
	if err != nil {
		return nil, err
	}
	e, err := newEngine(g, rels)
	if err != nil {
		return nil, err
	}
	e.graph = g
	e.keys = g
	if pr, ok, err := g.PageRank(); err != nil {
		return nil, err
	} else if ok && len(pr) == e.numNodes {
		e.rank = pr
	}
	e.info = g
	return e, nil
}

// Graph returns the graph the engine reads.
func (e *Engine) Graph() *csr.Graph { return e.graph }

// maxRelationID bounds the dense relation-flag table; relation ids are
// interned counters, so a larger id means a damaged table.
const maxRelationID = 1 << 24

func newEngine(g graphReader, rels []csr.Relation) (*Engine, error) {
	for _, r := range rels {
		if r.ID >= maxRelationID {
			return nil, corruptf("relation id %d beyond %d", r.ID, maxRelationID)
		}
	}
	e := &Engine{g: g, numNodes: g.NumNodes(), numEdges: g.NumEdges(), relNames: map[string]uint32{}}
	for _, r := range rels {
		for int(r.ID) >= len(e.relFlags) {
			e.relFlags = append(e.relFlags, 0)
			e.relRole = append(e.relRole, roles.Memory)
		}
		e.relRole[r.ID] = r.Role
		f := relKnown
		if r.Bidirectional {
			f |= relBidirectional
		}
		if r.Inhibitory {
			f |= relInhibitory
		}
		e.relFlags[r.ID] = f
		e.relNames[r.Name] = r.ID
	}
	n := e.numNodes
	e.pool.New = func() any { return &scratch{n: n} }
	e.checked = make([]atomic.Uint32, (2*n+31)/32)
	e.leaves = make([]atomic.Uint32, (2*n+31)/32)
	return e, nil
}

// RelationID resolves a relation name of the snapshot's relation table.
func (e *Engine) RelationID(name string) (uint32, error) {
	id, ok := e.relNames[name]
	if !ok {
		return 0, invalidf("unknown relation %q", name)
	}
	return id, nil
}

// relationMask returns, per relation id, the rel* bits of the relations a
// query may use: all known relations when only is empty, else those listed.
func (e *Engine) relationMask(only []uint32) ([]uint8, error) {
	mask := make([]uint8, len(e.relFlags))
	if len(only) == 0 {
		copy(mask, e.relFlags)
		return mask, nil
	}
	for _, r := range only {
		if int(r) >= len(e.relFlags) || e.relFlags[r]&relKnown == 0 {
			return nil, invalidf("unknown relation id %d", r)
		}
		mask[r] = e.relFlags[r]
	}
	return mask, nil
}

// edgeWeight clamps a stored weight to [0, 1]; NaN counts as 0.
func edgeWeight(w float32) float64 {
	if !(w > 0) {
		return 0
	}
	if w >= 1 {
		return 1
	}
	return float64(w)
}

// out and in fetch a node's edges and check them: parallel slices of equal
// length, every neighbour index in range. The reader's own errors pass
// through unchanged.
func (e *Engine) out(n uint32) ([]uint32, []uint32, []float32, error) {
	t, r, w, err := e.g.Out(n)
	if err != nil {
		return nil, nil, nil, err
	}
	return t, r, w, e.checkEdges(n, false, t, r, w)
}

func (e *Engine) in(n uint32) ([]uint32, []uint32, []float32, error) {
	s, r, w, err := e.g.In(n)
	if err != nil {
		return nil, nil, nil, err
	}
	return s, r, w, e.checkEdges(n, true, s, r, w)
}

// isLeaf reports whether node n has no structure out-edge (the per-
// container cap's leaves), reading its out-edges once per engine: ranking
// asks it of every candidate it takes, often of the same nodes.
func (e *Engine) isLeaf(n uint32) (bool, error) {
	bit := 2 * uint64(n)
	word, known, nonLeaf := bit/32, uint32(1)<<(bit%32), uint32(2)<<(bit%32)
	if word < uint64(len(e.leaves)) {
		if w := e.leaves[word].Load(); w&known != 0 {
			return w&nonLeaf == 0, nil
		}
	}
	// Only the relation ids are read, up to the first structure edge, and
	// each is checked as it is read (§8 Damage): ranking asks this of
	// every file it lists, and reading and checking a file's whole
	// out-list (every symbol it defines) would cost more than the rest of
	// the ranking.
	_, rels, _, err := e.g.Out(n)
	if err != nil {
		return false, err
	}
	leaf := true
	for i, rel := range rels {
		if int(rel) >= len(e.relFlags) || e.relFlags[rel]&relKnown == 0 {
			return false, corruptf("node %d: out-edge %d has unknown relation %d", n, i, rel)
		}
		if e.relRole[rel] == roles.Structure {
			leaf = false
			break
		}
	}
	if word < uint64(len(e.leaves)) {
		mask := known
		if !leaf {
			mask |= nonLeaf
		}
		e.leaves[word].Or(mask)
	}
	return leaf, nil
}

// checkEdges checks node n's out- (or in-) edge list: arrays of equal
// length, every peer a node, every relation known. A list that passed is
// not checked again (Engine.checked); one that failed fails every time.
func (e *Engine) checkEdges(n uint32, in bool, nodes, rels []uint32, weights []float32) error {
	dir := "out"
	bit := 2 * uint64(n)
	if in {
		dir, bit = "in", bit+1
	}
	if len(rels) != len(nodes) || len(weights) != len(nodes) {
		return corruptf("node %d: %s-edge arrays of unequal length", n, dir)
	}
	word, mask := bit/32, uint32(1)<<(bit%32)
	if word < uint64(len(e.checked)) && e.checked[word].Load()&mask != 0 {
		return nil
	}
	limit := uint32(e.numNodes)
	for i, t := range nodes {
		if t >= limit {
			return corruptf("node %d: %s-edge %d points to node %d, beyond %d nodes", n, dir, i, t, limit)
		}
		if int(rels[i]) >= len(e.relFlags) || e.relFlags[rels[i]]&relKnown == 0 {
			return corruptf("node %d: %s-edge %d has unknown relation %d", n, dir, i, rels[i])
		}
	}
	if word < uint64(len(e.checked)) {
		e.checked[word].Or(mask)
	}
	return nil
}

// badEdge describes the bad entry i of node n's out- (or in-) edges.
func (e *Engine) badEdge(n uint32, in bool, i int, t, rel uint32) error {
	dir := "out"
	if in {
		dir = "in"
	}
	if t >= uint32(e.numNodes) {
		return corruptf("node %d: %s-edge %d points to node %d, beyond %d nodes", n, dir, i, t, e.numNodes)
	}
	return corruptf("node %d: %s-edge %d has unknown relation %d", n, dir, i, rel)
}

func (e *Engine) checkNode(n uint32) error {
	if int(n) >= e.numNodes {
		return invalidf("node index %d out of range (%d nodes)", n, e.numNodes)
	}
	return nil
}

// Scored is one ranked node.
type Scored struct {
	Node  csr.NodeIndex
	Score float64
}

// better orders results: higher score first, then lower node index.
func better(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Node < b.Node
}

// rankedBefore orders activation results: higher score first; equal scores
// by the snapshot's stored PageRank, higher first (when the snapshot has
// the section); then lower node index.
func (e *Engine) rankedBefore(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if e.rank != nil && e.rank[a.Node] != e.rank[b.Node] {
		return e.rank[a.Node] > e.rank[b.Node]
	}
	return a.Node < b.Node
}

// topK returns the k best of cands (all of them when k <= 0), best first,
// under better.
func topK(cands []Scored, k int) []Scored { return topKBy(cands, k, better) }

// topKBy selects with a bounded min-heap, so the cost is
// O(len(cands) log k).
func topKBy[T any](cands []T, k int, better func(a, b T) bool) []T {
	if k <= 0 || k > len(cands) {
		k = len(cands)
	}
	h := make([]T, 0, k)
	// h is a min-heap under better: h[0] is the worst kept result.
	worse := func(i, j int) bool { return better(h[j], h[i]) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && worse(r, l) {
				m = r
			}
			if !worse(m, i) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for _, c := range cands {
		if len(h) < k {
			h = append(h, c)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !worse(i, p) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if k == 0 || !better(c, h[0]) {
			continue
		}
		h[0] = c
		down(0)
	}
	// Pop worst-first into the tail to get best-first order.
	out := make([]T, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		down(0)
	}
	return out
}

// finite reports whether x is a usable parameter value.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
