package eval

import (
	"math"
	"slices"
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/roles"
)

// Aider's repository map ranks files by PageRank over a graph of files, an
// edge from each file that mentions an identifier to each file that defines
// it, weighted by the square root of the number of mentions, personalised
// on the files in the chat. These are the parameters of that baseline.
const (
	pprDamping    = 0.85
	pprIterations = 100
	pprTolerance  = 1e-10
)

// pprUsage are the relations that count as "mentions" between symbols (and,
// for tests, between files) in the Aider-style file graph.
var pprUsage = []string{roles.RelCalls, roles.RelReferences, roles.RelImplements, roles.RelTests}

// PersonalizedPageRank is the Aider-style baseline: PageRank over the file
// reference graph (file A → file B when symbols of A call, reference,
// implement or test symbols B defines, or A tests B; weight √count),
// restarting at the query file; ties by path.
func PersonalizedPageRank() Predictor {
	return Predictor{
		Name: "pagerank",
		Doc:  "Aider-style PageRank over the file reference graph, personalised on the file",
		Open: func(m *Memory) (Ranker, error) {
			fg, err := buildFileGraph(m)
			if err != nil {
				return nil, err
			}
			return fg.rank, nil
		},
	}
}

// fileGraph is a weighted directed graph over the memory's files.
type fileGraph struct {
	paths []string
	index map[string]int
	out   [][]fileEdge // by source file
	wsum  []float64    // total out-weight
}

type fileEdge struct {
	to int
	w  float64
}

func buildFileGraph(m *Memory) (*fileGraph, error) {
	g := m.Graph
	fg := &fileGraph{paths: m.Files(), index: map[string]int{}}
	for i, p := range fg.paths {
		fg.index[p] = i
	}
	defines, hasDefines, err := g.RelationByName(roles.RelDefines)
	if err != nil {
		return nil, err
	}
	usage := map[uint32]bool{}
	for _, name := range pprUsage {
		r, ok, err := g.RelationByName(name)
		if err != nil {
			return nil, err
		}
		if ok {
			usage[r.ID] = true
		}
	}
	// owners[n]: the files that define node n (for file nodes: the file).
	owners := func(n csr.NodeIndex) ([]int, error) {
		if p, ok := m.FilePath(n); ok {
			if i, ok := fg.index[p]; ok {
				return []int{i}, nil
			}
			return nil, nil
		}
		if !hasDefines {
			return nil, nil
		}
		ss, rs, _, err := g.InChecked(n)
		if err != nil {
			return nil, err
		}
		var out []int
		for i, s := range ss {
			if rs[i] != defines.ID {
				continue
			}
			if p, ok := m.FilePath(s); ok {
				if j, ok := fg.index[p]; ok {
					out = append(out, j)
				}
			}
		}
		return out, nil
	}
	counts := map[[2]int]int{}
	for n := 0; n < g.NumNodes(); n++ {
		ts, rs, _, err := g.OutChecked(csr.NodeIndex(n))
		if err != nil {
			return nil, err
		}
		var from []int
		fromRead := false
		for i, t := range ts {
			if !usage[rs[i]] {
				continue
			}
			if !fromRead {
				if from, err = owners(csr.NodeIndex(n)); err != nil {
					return nil, err
				}
				fromRead = true
			}
			if len(from) == 0 {
				break
			}
			to, err := owners(t)
			if err != nil {
				return nil, err
			}
			for _, a := range from {
				for _, b := range to {
					if a != b {
						counts[[2]int{a, b}]++
					}
				}
			}
		}
	}
	fg.out = make([][]fileEdge, len(fg.paths))
	fg.wsum = make([]float64, len(fg.paths))
	keys := make([][2]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	for _, k := range keys {
		w := math.Sqrt(float64(counts[k]))
		fg.out[k[0]] = append(fg.out[k[0]], fileEdge{k[1], w})
		fg.wsum[k[0]] += w
	}
	return fg, nil
}

// rank runs PageRank personalised on file (dangling mass returns to it, as
// networkx does with a personalisation vector) and lists every other file
// with a positive rank, best first, ties by path.
func (fg *fileGraph) rank(file string) ([]string, error) {
	q, ok := fg.index[file]
	if !ok {
		return nil, nil
	}
	n := len(fg.paths)
	r := make([]float64, n)
	next := make([]float64, n)
	r[q] = 1
	for it := 0; it < pprIterations; it++ {
		clear(next)
		dangling := 0.0
		for u := 0; u < n; u++ {
			if r[u] == 0 {
				continue
			}
			if fg.wsum[u] == 0 {
				dangling += r[u]
				continue
			}
			share := pprDamping * r[u] / fg.wsum[u]
			for _, e := range fg.out[u] {
				next[e.to] += share * e.w
			}
		}
		next[q] += (1 - pprDamping) + pprDamping*dangling
		delta := 0.0
		for i := range r {
			delta += math.Abs(next[i] - r[i])
		}
		r, next = next, r
		if delta < pprTolerance {
			break
		}
	}
	var out []string
	for i, x := range r {
		if i != q && x > 0 {
			out = append(out, fg.paths[i])
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		ra, rb := r[fg.index[a]], r[fg.index[b]]
		if ra != rb {
			if ra > rb {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return out, nil
}
