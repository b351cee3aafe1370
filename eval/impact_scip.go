package eval

// eval impact --scip (SPEC.md §11): the truth — each symbol's direct
// dependents — comes from a SCIP index of the tree, never from the graph
// scored. A dependent is a definition holding a reference to the symbol
// (scip.Index's caller rule, §9.11); module-level code is left out, since
// the indexers mark import statements as plain references of the file.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/scip"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/memctl/memctl/lmdbstore"
)

// BuildCode ingests the tree dir as `ingest code` does (every language;
// Go type-checked where it loads; o says how, its Langs, WithGo and Meta
// are set here) into a temporary store and returns the graph of its
// snapshot (held in memory; the store is removed) and the Go packages read
// from syntax although type-checking was asked for.
func BuildCode(dir string, o codetree.Options) (*csr.Graph, []ingest.Fallback, error) {
	o.Langs, o.WithGo, o.Meta = treesitter.TreeSitterLanguages, true, lmdbstore.WriteMeta{RunID: "eval"}
	var fallbacks []ingest.Fallback
	g, err := buildGraph(func(s *lmdbstore.Store) error {
		sum, _, err := codetree.Ingest(s, dir, o)
		if err != nil {
			return fmt.Errorf("ingest code %s: %w", dir, err)
		}
		fallbacks = sum.Fallbacks
		return nil
	})
	return g, fallbacks, err
}

// candidates are the graph's symbols as scip.Matcher reads them.
func candidates(g *csr.Graph) ([]scip.Candidate, error) {
	lo, hi, err := g.PrefixRange("sym:")
	if err != nil {
		return nil, err
	}
	order, err := g.KeyOrder()
	if err != nil {
		return nil, err
	}
	var out []scip.Candidate
	for i := lo; i < hi; i++ {
		n := csr.NodeIndex(order[i])
		key, err := g.Key(n)
		if err != nil {
			return nil, err
		}
		b, err := g.Payload(n)
		if err != nil {
			return nil, err
		}
		var p ingest.SymbolPayload
		if json.Unmarshal(b, &p) != nil || p.Path == "" {
			continue
		}
		out = append(out, scip.Candidate{Key: key, Name: p.Name, Path: p.Path, Start: p.LineStart, End: p.LineEnd})
	}
	return out, nil
}

// ScipDependents are the index's direct dependents of every symbol it
// defines: the distinct definitions (symbols that get a node) holding a
// reference to it, itself excluded.
func ScipDependents(ix *scip.Index) map[string]map[string]bool {
	out := make(map[string]map[string]bool)
	for _, r := range ix.Refs {
		if r.Caller == "" || r.Caller == r.Symbol {
			continue
		}
		if out[r.Symbol] == nil {
			out[r.Symbol] = make(map[string]bool)
		}
		out[r.Symbol][r.Caller] = true
	}
	return out
}

// ImpactAgainstSCIP scores impact on g with the truth from ix: for every
// function, method and type of the index with at least minDeps
// dependents (k of them), the
// share of impact's first k symbol answers (default parameters; `sym:`
// nodes only, as the truth holds definitions only) that are dependents.
// A symbol the graph has no node for scores 0 (impact cannot be asked);
// a dependent it has no node for cannot be found.
func ImpactAgainstSCIP(g *csr.Graph, ix *scip.Index, minDeps, bootstrap int, progress func(ingest.Progress)) (ImpactResult, error) {
	if minDeps <= 0 {
		minDeps = DefaultMinDependents
	}
	res := ImpactResult{Nodes: g.NumNodes(), Edges: g.NumEdges(), MinDependents: minDeps, Min: math.Inf(1),
		Truth: "scip", Tool: ix.Tool, ToolVersion: ix.ToolVersion}
	cands, err := candidates(g)
	if err != nil {
		return res, err
	}
	match := scip.Match(ix, cands)
	usage, err := UsageRelations(g)
	if err != nil {
		return res, err
	}
	e, err := engines.New(g)
	if err != nil {
		return res, err
	}
	node := func(sym string) (csr.NodeIndex, bool, error) {
		key, ok := match[sym]
		if !ok {
			return 0, false, nil
		}
		return g.LookupKey(key)
	}
	isSym := func(n csr.NodeIndex) (bool, error) {
		k, err := g.Key(n)
		return strings.HasPrefix(k, "sym:"), err
	}
	deps := ScipDependents(ix)
	syms := scip.SortedSymbols(ix)
	var shares, acts, inGraph []float64
	for i, sym := range syms {
		if progress != nil && i%256 == 0 {
			progress(ingest.Progress{Phase: "scoring", Done: i, Total: len(syms)})
		}
		callers := deps[sym]
		if len(callers) < minDeps || !(scip.IsFuncSymbol(ix, sym) || scip.IsTypeSymbol(ix, sym)) {
			continue // fields, variables, constants: not every ingest gives them a node
		}
		k := len(callers)
		res.Dependents += k
		want := make(map[csr.NodeIndex]bool, k)
		for c := range callers {
			n, ok, err := node(c)
			if err != nil {
				return res, err
			}
			if ok {
				want[n] = true
			}
		}
		n, ok, err := node(sym)
		if err != nil {
			return res, err
		}
		share, act, direct := 0.0, 0.0, 0.0
		if !ok {
			res.Unmatched++
		} else {
			// share of the first k symbol answers (n itself left out) in want
			topK := func(answers []csr.NodeIndex) (float64, error) {
				hit, kept := 0, 0
				for _, a := range answers {
					if kept == k {
						break
					}
					if s, err := isSym(a); err != nil {
						return 0, err
					} else if !s || a == n {
						continue
					}
					kept++
					if want[a] {
						hit++
					}
				}
				return float64(hit) / float64(k), nil
			}
			as, err := e.Impact(n, engines.DefaultImpactParams())
			if err != nil {
				return res, err
			}
			if share, err = topK(nodesOf(as, func(a engines.Affected) csr.NodeIndex { return a.Node })); err != nil {
				return res, err
			}
			ap := engines.DefaultActivationParams()
			ap.TopK = 0
			acted, err := e.Activate([]engines.Seed{{Node: n, Score: 1}}, ap)
			if err != nil {
				return res, err
			}
			if act, err = topK(nodesOf(acted, func(a engines.Scored) csr.NodeIndex { return a.Node })); err != nil {
				return res, err
			}
			dd, err := DirectDependents(g, usage, n)
			if err != nil {
				return res, err
			}
			found := 0
			for d := range dd {
				if want[d] {
					found++
				}
			}
			direct = float64(found) / float64(k)
		}
		shares, acts, inGraph = append(shares, share), append(acts, act), append(inGraph, direct)
		if err := res.scored(share, func() (string, error) { return cmp.Or(match[sym], sym), nil }); err != nil {
			return res, err
		}
	}
	if progress != nil {
		progress(ingest.Progress{Phase: "scoring", Done: len(syms), Total: len(syms)})
	}
	if err := res.finish(shares, acts, bootstrap); err != nil {
		return res, err
	}
	res.InGraph = BootstrapMean(inGraph, bootstrap)
	return res, nil
}

// nodesOf lists the nodes of ranked answers, in rank order.
func nodesOf[T any](answers []T, node func(T) csr.NodeIndex) []csr.NodeIndex {
	out := make([]csr.NodeIndex, len(answers))
	for i, a := range answers {
		out[i] = node(a)
	}
	return out
}
