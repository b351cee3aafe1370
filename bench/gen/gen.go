// Package gen generates seeded, deterministic code-graph-like workloads for
// the peer benchmarks: packages, files and symbols with power-law out- and
// in-degrees, relations drawn from the PRD's ten, and JSON payloads whose
// sizes follow a log-normal distribution.
//
// Invariants:
//   - The same Config gives the same graph, byte for byte (nodes, keys,
//     payloads, edges and their order), on every machine.
//   - No (src, rel, dst) triple occurs twice in Edges, and none of Extra
//     occurs in Edges: every system sees the same set of distinct edges.
//   - Node indices are dense (0..len(Nodes)-1) and follow ingestion order
//     (package, then its files, then the symbols each file defines).
package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Rel is a relation of the PRD, numbered 1..10 in the PRD's order. Peers
// store this number; memctl stores the interned id of Rel.Name().
type Rel uint8

const (
	Defines Rel = iota + 1
	References
	Calls
	Imports
	Tests
	Implements
	Constrains
	DecidedFor
	DerivedFrom
	Supersedes
	numRels = int(Supersedes)
)

var relNames = [...]string{"", "defines", "references", "calls", "imports", "tests",
	"implements", "constrains", "decided_for", "derived_from", "supersedes"}

// Name is the relation's name as memctl registers it.
func (r Rel) Name() string {
	if int(r) < len(relNames) {
		return relNames[r]
	}
	return fmt.Sprintf("rel%d", r)
}

// NumRels is the number of relations the generator may emit (1..NumRels).
const NumRels = numRels

// NodeType is the kind of a code entity.
type NodeType uint8

const (
	Package NodeType = iota
	File
	Func
	Method
	Type
	Test
	Decision
	Constraint
)

var typeNames = [...]string{"package", "file", "func", "method", "type", "test", "decision", "constraint"}

func (t NodeType) String() string { return typeNames[t] }

// Node is one entity. Its payload is generated on demand (Graph.Payload) so
// that a 1M-node graph does not hold every payload in memory.
type Node struct {
	Key  string
	Type NodeType
	Pkg  uint32 // index of the package the entity belongs to (into Graph.pkgs)
}

// Edge is one edge between dense node indices. Every edge has the
// relation's default weight (1.0) and no payload.
type Edge struct {
	Src, Dst uint32
	Rel      Rel
}

// Config selects a graph.
type Config struct {
	Nodes        int
	EdgesPerNode float64 // about 8
	Seed         uint64
	// Extra is the number of additional edges (relation derived_from) kept
	// apart for the single-edge durable write workload.
	ExtraEdges int
}

// Graph is a generated workload.
type Graph struct {
	Config
	Nodes []Node
	// Edges in load order: sources in a shuffled order, each source's edges
	// together (as an ingester emits a file and its symbols).
	Edges []Edge
	// Extra edges for the durable single-write workload.
	Extra []Edge
	// payloads caches every node's payload once WarmPayloads ran.
	payloads [][]byte
}

// WarmPayloads computes every node's payload once, so that later Payload
// calls (inside timed loads) only copy.
func (g *Graph) WarmPayloads() {
	if g.payloads != nil {
		return
	}
	ps := make([][]byte, len(g.Nodes))
	for i := range ps {
		ps[i] = g.Payload(uint32(i), nil)
	}
	g.payloads = ps
}

// Generate builds the graph for c. It is deterministic in c.
func Generate(c Config) (*Graph, error) {
	if c.Nodes < 100 {
		return nil, fmt.Errorf("gen: need at least 100 nodes, got %d", c.Nodes)
	}
	if c.EdgesPerNode <= 0 {
		c.EdgesPerNode = 8
	}
	g := &Graph{Config: c}
	r := rand.New(rand.NewPCG(c.Seed, 0x6d656d63746c))
	b := builder{g: g, r: r}
	b.nodes()
	b.edges()
	b.extra()
	return g, nil
}

type builder struct {
	g *Graph
	r *rand.Rand
	// per package: its files and its symbols by kind
	pkgNode  []uint32
	pkgFiles [][]uint32
	pkgCall  [][]uint32 // funcs and methods (call targets)
	pkgTypes [][]uint32
	files    []uint32
	callers  []uint32 // funcs, methods, tests
	tests    []uint32
	types    []uint32
	memory   []uint32 // decisions and constraints
	symbols  []uint32 // every func, method, type, test
	callPool []uint32 // global call targets, shuffled: Zipf rank -> node
	typePool []uint32
	pkgPool  []uint32
}

// Proportions of node types, roughly those of a Go monorepo's symbol index.
const (
	fracPackage = 0.01
	fracFile    = 0.08
	fracMemory  = 0.02 // decisions + constraints
)

func (b *builder) add(key string, t NodeType, pkg uint32) uint32 {
	i := uint32(len(b.g.Nodes))
	b.g.Nodes = append(b.g.Nodes, Node{Key: key, Type: t, Pkg: pkg})
	return i
}

func (b *builder) nodes() {
	total := b.g.Config.Nodes
	nPkg := max(1, int(float64(total)*fracPackage))
	nFile := max(1, int(float64(total)*fracFile))
	nMem := max(2, int(float64(total)*fracMemory))
	nSym := total - nPkg - nFile - nMem
	b.g.Nodes = make([]Node, 0, total)

	// File counts per package and symbol counts per file are power-law:
	// a few huge packages and files, many small ones.
	filesPer := b.split(nFile, nPkg, 1.6)
	symsPer := b.split(nSym, nFile, 1.8)
	b.pkgNode = make([]uint32, nPkg)
	b.pkgFiles = make([][]uint32, nPkg)
	b.pkgCall = make([][]uint32, nPkg)
	b.pkgTypes = make([][]uint32, nPkg)
	fileNo := 0
	for p := 0; p < nPkg; p++ {
		svc := p % 37
		pkgPath := fmt.Sprintf("github.com/acme/svc%d/internal/pkg%d", svc, p)
		b.pkgNode[p] = b.add("pkg:"+pkgPath, Package, uint32(p))
		for f := 0; f < filesPer[p]; f++ {
			base := fileWords[b.r.IntN(len(fileWords))]
			fi := b.add(fmt.Sprintf("file:svc%d/internal/pkg%d/%s_%d.go", svc, p, base, fileNo), File, uint32(p))
			b.pkgFiles[p] = append(b.pkgFiles[p], fi)
			b.files = append(b.files, fi)
			for s := 0; s < symsPer[fileNo]; s++ {
				word := symWords[b.r.IntN(len(symWords))]
				var si uint32
				switch x := b.r.Float64(); {
				case x < 0.50:
					si = b.add(fmt.Sprintf("sym:%s.%s%d", pkgPath, word, len(b.g.Nodes)), Func, uint32(p))
					b.pkgCall[p] = append(b.pkgCall[p], si)
					b.callers = append(b.callers, si)
				case x < 0.75:
					recv := typeWords[b.r.IntN(len(typeWords))]
					si = b.add(fmt.Sprintf("sym:%s.(*%s).%s%d", pkgPath, recv, word, len(b.g.Nodes)), Method, uint32(p))
					b.pkgCall[p] = append(b.pkgCall[p], si)
					b.callers = append(b.callers, si)
				case x < 0.91:
					tw := typeWords[b.r.IntN(len(typeWords))]
					si = b.add(fmt.Sprintf("sym:%s.%s%d", pkgPath, tw, len(b.g.Nodes)), Type, uint32(p))
					b.pkgTypes[p] = append(b.pkgTypes[p], si)
					b.types = append(b.types, si)
				default:
					si = b.add(fmt.Sprintf("test:%s.Test%s%d", pkgPath, word, len(b.g.Nodes)), Test, uint32(p))
					b.tests = append(b.tests, si)
					b.callers = append(b.callers, si)
				}
				b.symbols = append(b.symbols, si)
			}
			fileNo++
		}
	}
	for m := 0; m < nMem; m++ {
		p := uint32(b.r.IntN(nPkg))
		topic := topicWords[b.r.IntN(len(topicWords))]
		if m%3 == 0 {
			b.memory = append(b.memory, b.add(fmt.Sprintf("constraint:%s-%d", topic, m), Constraint, p))
		} else {
			b.memory = append(b.memory, b.add(fmt.Sprintf("decision:%s-%d", topic, m), Decision, p))
		}
	}
	for _, list := range b.pkgCall {
		b.callPool = append(b.callPool, list...)
	}
	b.shuffle(b.callPool)
	b.typePool = slices.Clone(b.types)
	b.shuffle(b.typePool)
	b.pkgPool = slices.Clone(b.pkgNode)
	b.shuffle(b.pkgPool)
}

// split divides total into parts counts, each at least 1 when total allows,
// with Pareto-distributed sizes of shape alpha.
func (b *builder) split(total, parts int, alpha float64) []int {
	w := make([]float64, parts)
	var sum float64
	for i := range w {
		w[i] = pareto(b.r, alpha)
		sum += w[i]
	}
	out := make([]int, parts)
	left := total
	for i := range out {
		n := int(float64(total) * w[i] / sum)
		out[i] = min(n, left)
		left -= out[i]
	}
	for i := 0; left > 0; i = (i + 1) % parts {
		out[i]++
		left--
	}
	return out
}

// pareto draws from a Pareto distribution with minimum 1 and shape alpha.
func pareto(r *rand.Rand, alpha float64) float64 {
	return math.Pow(1-r.Float64(), -1/alpha)
}

// degree draws a power-law out-degree with the given mean (shape 2.1),
// capped at limit.
func degree(r *rand.Rand, mean float64, limit int) int {
	const alpha = 2.1
	xm := mean * (alpha - 1) / alpha
	d := int(xm*pareto(r, alpha) + r.Float64()) // randomized rounding keeps the mean
	return min(d, limit)
}

func (b *builder) shuffle(s []uint32) {
	b.r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}

// edgeSet collects one source's edges without duplicates.
type edgeSet struct {
	seen  map[uint64]struct{}
	edges []Edge
}

func (s *edgeSet) add(e Edge) {
	k := uint64(e.Rel)<<32 | uint64(e.Dst)
	if _, ok := s.seen[k]; ok {
		return
	}
	s.seen[k] = struct{}{}
	s.edges = append(s.edges, e)
}

func (b *builder) edges() {
	g := b.g
	target := int(float64(g.Config.Nodes) * g.EdgesPerNode)
	// Fixed-budget relations first; calls absorb the rest of the budget.
	fixed := len(b.symbols) + // defines
		len(b.files)*6 + // imports
		len(b.callers)*3/2 + // references (from callers and types)
		len(b.types)*3/2 +
		len(b.tests)*2 + // tests
		len(b.types)*4/5 + // implements
		len(b.memory)*10 // constrains / decided_for / supersedes
	// 1.07 makes up for duplicate draws, which are dropped.
	callMean := math.Max(1, 1.07*float64(target-fixed)/float64(max(1, len(b.callers))))

	// Zipf over shuffled pools: a few global hubs (errors.New, log.Printf).
	zipf := func(n int) *rand.Zipf { return rand.NewZipf(b.r, 1.1, 1, uint64(n-1)) }
	callZ := zipf(len(b.callPool))
	typeZ := zipf(max(2, len(b.typePool)))
	pkgZ := zipf(len(b.pkgPool))

	// Which file defines each symbol: symbols follow their file in index order.
	definer := make([]uint32, len(g.Nodes))
	for i := range definer {
		definer[i] = math.MaxUint32
	}
	for _, f := range b.files {
		for s := f + 1; int(s) < len(g.Nodes); s++ {
			t := g.Nodes[s].Type
			if t == File || t == Package || t == Decision || t == Constraint {
				break
			}
			definer[s] = f
		}
	}
	// Outgoing edges of every node, generated per source in index order so
	// the random stream does not depend on the load order.
	perSrc := make([][]Edge, len(g.Nodes))
	set := edgeSet{seen: make(map[uint64]struct{})}
	pick := func(local []uint32, pool []uint32, z *rand.Zipf) uint32 {
		if len(local) > 0 && b.r.Float64() < 0.6 {
			return local[b.r.IntN(len(local))]
		}
		return pool[z.Uint64()]
	}
	for i := range g.Nodes {
		src := uint32(i)
		n := g.Nodes[i]
		clear(set.seen)
		set.edges = set.edges[:0]
		switch n.Type {
		case File:
			for s := src + 1; int(s) < len(g.Nodes) && definer[s] == src; s++ {
				set.add(Edge{src, s, Defines})
			}
			for k := degree(b.r, 6, len(b.pkgPool)); k > 0; k-- {
				set.add(Edge{src, b.pkgPool[pkgZ.Uint64()], Imports})
			}
		case Func, Method, Test:
			for k := degree(b.r, callMean, len(b.callPool)); k > 0; k-- {
				set.add(Edge{src, pick(b.pkgCall[n.Pkg], b.callPool, callZ), Calls})
			}
			if len(b.typePool) > 0 {
				for k := degree(b.r, 1.5, len(b.typePool)); k > 0; k-- {
					set.add(Edge{src, pick(b.pkgTypes[n.Pkg], b.typePool, typeZ), References})
				}
			}
			if n.Type == Test {
				for k := degree(b.r, 2, len(b.callPool)); k > 0; k-- {
					set.add(Edge{src, pick(b.pkgCall[n.Pkg], b.callPool, callZ), Tests})
				}
			}
		case Type:
			if len(b.typePool) > 0 {
				for k := degree(b.r, 1.5, len(b.typePool)); k > 0; k-- {
					set.add(Edge{src, pick(b.pkgTypes[n.Pkg], b.typePool, typeZ), References})
				}
				if b.r.Float64() < 0.4 {
					for k := degree(b.r, 2, len(b.typePool)); k > 0; k-- {
						set.add(Edge{src, pick(b.pkgTypes[n.Pkg], b.typePool, typeZ), Implements})
					}
				}
			}
		case Decision, Constraint:
			rel := DecidedFor
			if n.Type == Constraint {
				rel = Constrains
			}
			for k := degree(b.r, 9, len(g.Nodes)); k > 0; k-- {
				set.add(Edge{src, uint32(b.r.IntN(len(g.Nodes))), rel})
			}
			// A decision supersedes an older one (a smaller index): never
			// itself, never a cycle, as the store requires (SPEC §4).
			if b.r.Float64() < 0.3 {
				if old := b.memory[b.r.IntN(len(b.memory))]; old < src {
					set.add(Edge{src, old, Supersedes})
				}
			}
		case Package:
			// packages are import targets only
		}
		perSrc[i] = slices.Clone(set.edges)
	}
	// Load order: shuffled packages; each package node, its files and their
	// symbols' edges together; memory nodes last.
	order := slices.Clone(b.pkgNode)
	b.shuffle(order)
	g.Edges = make([]Edge, 0, target+target/8)
	emit := func(i uint32) { g.Edges = append(g.Edges, perSrc[i]...) }
	for _, p := range order {
		end := uint32(len(g.Nodes))
		if int(g.Nodes[p].Pkg)+1 < len(b.pkgNode) {
			end = b.pkgNode[g.Nodes[p].Pkg+1]
		}
		for i := p; i < end && g.Nodes[i].Type != Decision && g.Nodes[i].Type != Constraint; i++ {
			emit(i)
		}
	}
	for _, m := range b.memory {
		emit(m)
	}
}

// extra draws the edges of the durable single-write workload: an agent
// recording where a memory came from (derived_from), which the bulk graph
// never uses, so none of them exists yet.
func (b *builder) extra() {
	g := b.g
	seen := make(map[[2]uint32]bool, g.ExtraEdges)
	for len(g.Extra) < g.ExtraEdges {
		e := Edge{uint32(b.r.IntN(len(g.Nodes))), uint32(b.r.IntN(len(g.Nodes))), DerivedFrom}
		k := [2]uint32{e.Src, e.Dst}
		if seen[k] {
			continue
		}
		seen[k] = true
		g.Extra = append(g.Extra, e)
	}
}

// Payload returns node i's JSON payload, appended to buf. Sizes are
// log-normal (median about 160 bytes for symbols, 600 for files and
// packages, long tail to 16 KiB); text is drawn from a small vocabulary, so
// it compresses about as well as real doc comments.
func (g *Graph) Payload(i uint32, buf []byte) []byte {
	if g.payloads != nil {
		return append(buf, g.payloads[i]...)
	}
	n := g.Nodes[i]
	r := rand.New(rand.NewPCG(g.Seed^0x7061796c6f6164, uint64(i)))
	median := 160.0
	if n.Type == File || n.Type == Package {
		median = 600
	}
	size := int(median * math.Exp(r.NormFloat64()*0.9))
	size = max(48, min(size, 16<<10))
	buf = fmt.Appendf(buf, `{"kind":%q,"line":%d,"doc":"`, n.Type.String(), r.IntN(5000)+1)
	start := len(buf)
	for len(buf)-start < size-40 {
		buf = append(buf, docWords[r.IntN(len(docWords))]...)
		buf = append(buf, ' ')
	}
	buf = append(buf, `"}`...)
	return buf
}

// Degrees returns every node's out- and in-degree over Edges.
func (g *Graph) Degrees() (out, in []uint32) {
	out = make([]uint32, len(g.Nodes))
	in = make([]uint32, len(g.Nodes))
	for _, e := range g.Edges {
		out[e.Src]++
		in[e.Dst]++
	}
	return out, in
}

var fileWords = []string{"handler", "server", "client", "store", "cache", "config", "util", "types",
	"errors", "codec", "router", "auth", "metrics", "worker", "queue", "schema", "parser", "db"}

var symWords = []string{"Handle", "New", "Get", "Put", "Delete", "List", "Parse", "Encode", "Decode",
	"Open", "Close", "Run", "Start", "Stop", "Validate", "Apply", "Merge", "Flush", "Load", "Save"}

var typeWords = []string{"Server", "Client", "Store", "Cache", "Config", "Request", "Response",
	"Options", "Entry", "Record", "Index", "Writer", "Reader", "State", "Event"}

var topicWords = []string{"error-handling", "logging", "naming", "retries", "timeouts", "testing",
	"api-versioning", "migrations", "concurrency", "caching"}

var docWords = []string{"returns", "the", "a", "value", "for", "key", "when", "error", "is", "nil",
	"request", "context", "cancelled", "reads", "writes", "store", "from", "into", "buffer", "and",
	"closes", "connection", "handler", "must", "not", "be", "called", "after", "Close", "lock",
	"held", "by", "caller", "retries", "with", "backoff", "until", "deadline", "of", "map", "index",
	"entries", "sorted", "order", "ascending", "node", "edge", "graph", "revision", "snapshot"}
