package harness

import (
	"fmt"
	"slices"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
)

// plan is how a graph is written: which batch (harness revision) holds
// which nodes and edges, then the single durable writes.
type plan struct {
	g       *gen.Graph
	batches []peers.Batch // batch i is revision i+1
	writes  []gen.Edge    // revision len(batches)+1+j
	// revisions the read workloads look back to
	pitRev, diffRev int
}

func newPlan(g *gen.Graph, batchOps, writes int) *plan {
	p := &plan{g: g}
	var b peers.Batch
	flush := func() {
		if len(b.Nodes)+len(b.Edges) > 0 {
			p.batches = append(p.batches, b)
			b = peers.Batch{}
		}
	}
	for i := range g.Nodes {
		b.Nodes = append(b.Nodes, uint32(i))
		if len(b.Nodes) == batchOps {
			flush()
		}
	}
	flush()
	nodeBatches := len(p.batches)
	for off := 0; off < len(g.Edges); off += batchOps {
		b.Edges = g.Edges[off:min(off+batchOps, len(g.Edges))]
		flush()
	}
	p.writes = g.Extra[:min(writes, len(g.Extra))]
	// Point-in-time: half of the edges loaded. Diff: the last tenth of the
	// load plus every durable write.
	p.pitRev = nodeBatches + (len(p.batches)-nodeBatches)/2
	p.diffRev = len(p.batches) * 9 / 10
	return p
}

// truthEdge is an edge with the harness revision that wrote it.
type truthEdge struct {
	rel  gen.Rel
	peer uint32
	rev  int
}

// truth is the expected answer of every read, computed from the plan.
type truth struct {
	out, in [][]truthEdge
	nodeRev []int
	lastRev int
	pitRev  int
	diffRev int
	diffOps int
	outDeg  []uint32
	inDeg   []uint32
}

func newTruth(p *plan) *truth {
	n := len(p.g.Nodes)
	t := &truth{out: make([][]truthEdge, n), in: make([][]truthEdge, n), nodeRev: make([]int, n),
		pitRev: p.pitRev, diffRev: p.diffRev}
	add := func(e gen.Edge, rev int) {
		t.out[e.Src] = append(t.out[e.Src], truthEdge{e.Rel, e.Dst, rev})
		t.in[e.Dst] = append(t.in[e.Dst], truthEdge{e.Rel, e.Src, rev})
		if rev > t.diffRev {
			t.diffOps++
		}
	}
	for i, b := range p.batches {
		for _, node := range b.Nodes {
			t.nodeRev[node] = i + 1
			if i+1 > t.diffRev {
				t.diffOps++
			}
		}
		for _, e := range b.Edges {
			add(e, i+1)
		}
	}
	for j, e := range p.writes {
		add(e, len(p.batches)+1+j)
	}
	t.lastRev = len(p.batches) + len(p.writes)
	t.outDeg = make([]uint32, n)
	t.inDeg = make([]uint32, n)
	for i := range t.out {
		t.outDeg[i] = uint32(len(t.out[i]))
		t.inDeg[i] = uint32(len(t.in[i]))
	}
	return t
}

// threeHop is the reference three-hop count.
func (t *truth) threeHop(start uint32) int { return len(t.threeHopSet(start)) }

type pair struct {
	rel  gen.Rel
	peer uint32
}

func expected(list []truthEdge, maxRev int) []pair {
	var out []pair
	for _, e := range list {
		if e.rev <= maxRev {
			out = append(out, pair{e.rel, e.peer})
		}
	}
	return sortPairs(out)
}

func sortPairs(p []pair) []pair {
	slices.SortFunc(p, func(a, b pair) int {
		if a.rel != b.rel {
			return int(a.rel) - int(b.rel)
		}
		return int(a.peer) - int(b.peer)
	})
	return p
}

// names maps what systems return (relation names, canonical keys) back to
// generator terms.
type names struct {
	rel map[string]gen.Rel
	key map[string]uint32
}

func newNames(g *gen.Graph) *names {
	n := &names{rel: map[string]gen.Rel{}, key: make(map[string]uint32, len(g.Nodes))}
	for r := gen.Rel(1); int(r) <= gen.NumRels+1; r++ {
		n.rel[r.Name()] = r
	}
	for i, node := range g.Nodes {
		n.key[node.Key] = uint32(i)
	}
	return n
}

// collect runs one read and returns its answer in generator terms.
func (nm *names) collect(read func(peers.EdgeFunc) error) ([]pair, error) {
	var out []pair
	var bad error
	err := read(func(rel, peer string) {
		r, okR := nm.rel[rel]
		i, okK := nm.key[peer]
		if (!okR || !okK) && bad == nil {
			bad = fmt.Errorf("unknown relation %q or key %q", rel, peer)
		}
		out = append(out, pair{r, i})
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	return sortPairs(out), nil
}

// threeHopSet is the reference set of nodes within three out-hops.
func (t *truth) threeHopSet(start uint32) map[uint32]bool {
	seen := map[uint32]bool{start: true}
	cur := []uint32{start}
	for d := 0; d < 3; d++ {
		var next []uint32
		for _, v := range cur {
			for _, e := range t.out[v] {
				if !seen[e.peer] {
					seen[e.peer] = true
					next = append(next, e.peer)
				}
			}
		}
		cur = next
	}
	return seen
}

// WrongAnswerError: a system returned something other than the truth.
type WrongAnswerError struct {
	Workload string
	Node     uint32
	Msg      string
}

func (e *WrongAnswerError) Error() string {
	return fmt.Sprintf("wrong answer: %s of node %d: %s", e.Workload, e.Node, e.Msg)
}

func diffPairs(workload string, node uint32, got, want []pair) error {
	if slices.Equal(got, want) {
		return nil
	}
	return &WrongAnswerError{workload, node, fmt.Sprintf("got %d edges, want %d (first got %v, first want %v)",
		len(got), len(want), head(got), head(want))}
}

func head(p []pair) []pair { return p[:min(3, len(p))] }
