package eval

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/precise"
	"github.com/memctl/memctl/ingest/scip"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// DefaultMinDependents is the fewest direct usage dependents a symbol needs
// to be scored by ImpactPrecision.
const DefaultMinDependents = 5

// ImpactOptions configures an impact evaluation.
type ImpactOptions struct {
	Walk          ingest.WalkOptions
	MinDependents int                   // 0: DefaultMinDependents
	Progress      func(ingest.Progress) // may be nil; phase "scoring" is eval's own
	// Index is a SCIP index of the tree to take the truth from ("": the
	// graph scored, self-referential).
	Index string
	// Bootstrap is the number of resamples of the intervals (0:
	// DefaultBootstrap).
	Bootstrap int
	// Precise builds the graph with `ingest code --precise` (nil: plain).
	Precise *precise.Options
}

// ImpactResult is the outcome of an impact evaluation.
type ImpactResult struct {
	Dir           string
	Nodes         int // snapshot nodes
	Edges         int // snapshot edges
	Symbols       int // symbols scored
	MinDependents int // direct usage dependents a symbol needs to be scored
	// Mean is the mean over scored symbols of the share of impact's top k
	// (k = the symbol's number of direct usage dependents) that are direct
	// usage dependents; Min the worst symbol's share; Perfect how many
	// scored 1.
	Mean, Min float64
	Perfect   int
	// ActivateMean is the same share for a baseline in the same run:
	// default activation seeded with the symbol (the symbol itself left
	// out of its top k): what "related" gives when "affected" is asked.
	ActivateMean float64
	Worst        string // key of the worst symbol (first in key order on ties)
	Seconds      float64
	// Precision and Activate are Mean and ActivateMean with their
	// bootstrap 95 % intervals over the symbols scored.
	Precision, Activate Interval
	// Truth is where the dependents come from: "graph" (the graph scored:
	// self-referential) or "scip" (the index Tool ToolVersion wrote).
	Truth, Tool, ToolVersion string
	// With a SCIP truth: Unmatched counts the symbols scored that the
	// graph has no node for (scored 0), Dependents the dependents over all
	// symbols scored, and InGraph is the mean share of a symbol's
	// dependents that are its direct usage dependents in the graph (the
	// graph's recall, whatever the ranking).
	Unmatched, Dependents int
	InGraph               Interval
	// Fallbacks are the Go packages read from syntax although
	// type-checking was asked for (ingest go's syntax-only lines, §9.6):
	// their calls through methods may be missing from the graph scored.
	Fallbacks []ingest.Fallback
}

// ErrNothingToScore: the tree has no symbol with enough dependents.
var ErrNothingToScore = errors.New("no symbol has enough direct usage dependents to score")

// Impact ingests the tree dir (`ingest code`) into a temporary store,
// exports it and scores impact on it: against the SCIP index
// opts.Index (ImpactAgainstSCIP), else against the graph itself
// (ImpactPrecision).
func Impact(dir string, opts ImpactOptions) (ImpactResult, error) {
	start := time.Now()
	var ix *scip.Index
	if opts.Index != "" {
		var err error
		if ix, err = scip.Load(opts.Index); err != nil {
			return ImpactResult{}, err
		}
	}
	g, fallbacks, err := BuildCode(dir, codetree.Options{Walk: opts.Walk, Progress: opts.Progress, Precise: opts.Precise})
	if err != nil {
		return ImpactResult{}, err
	}
	var res ImpactResult
	if ix != nil {
		res, err = ImpactAgainstSCIP(g, ix, opts.MinDependents, opts.Bootstrap, opts.Progress)
	} else {
		res, err = ImpactPrecision(g, opts.MinDependents, opts.Bootstrap, opts.Progress)
	}
	res.Dir, res.Fallbacks = dir, fallbacks
	res.Seconds = time.Since(start).Seconds()
	return res, err
}

// BuildGo ingests the Go tree dir (ingest go, type-checked where it loads)
// into a temporary store and returns the graph of its snapshot (held in
// memory; the store is removed).
func BuildGo(dir string, walk ingest.WalkOptions, progress func(ingest.Progress)) (*csr.Graph, error) {
	return buildGraph(func(s *lmdbstore.Store) error {
		res, err := ingest.ExtractGo(dir, ingest.GoOptions{WalkOptions: walk, Progress: progress})
		if err != nil {
			return fmt.Errorf("ingest go %s: %w", dir, err)
		}
		_, err = ingest.WriteGo(s, res.Graph, lmdbstore.WriteMeta{RunID: "eval"}, progress)
		return err
	})
}

// buildGraph fills a temporary store with fill and returns the graph of
// its snapshot (held in memory; the store is removed).
func buildGraph(fill func(*lmdbstore.Store) error) (*csr.Graph, error) {
	tmp, err := os.MkdirTemp("", "memctl-eval-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	s, err := lmdbstore.Init(filepath.Join(tmp, "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := fill(s); err != nil {
		return nil, err
	}
	b, err := storesnap.ExportBytes(s, lmdbstore.At{}, snapshot.WriterOptions{})
	if err != nil {
		return nil, err
	}
	return csr.FromBytes(b)
}

// UsageRelations is the set of g's relation ids with the usage role.
func UsageRelations(g *csr.Graph) (map[uint32]bool, error) {
	rels, err := g.Relations()
	if err != nil {
		return nil, err
	}
	usage := map[uint32]bool{}
	for _, r := range rels {
		usage[r.ID] = r.Role == roles.Usage
	}
	return usage, nil
}

// DirectDependents returns the distinct sources of n's in-edges whose
// relation is in usage (self-loops excluded). It reads the graph, not the
// impact engine.
func DirectDependents(g *csr.Graph, usage map[uint32]bool, n csr.NodeIndex) (map[csr.NodeIndex]bool, error) {
	srcs, rs, _, err := g.In(n)
	if err != nil {
		return nil, err
	}
	deps := map[csr.NodeIndex]bool{}
	for i, src := range srcs {
		if usage[rs[i]] && src != n {
			deps[src] = true
		}
	}
	return deps, nil
}

// ImpactPrecision scores impact on g: for every symbol (key `sym:`) with at
// least minDeps direct usage dependents, the share of impact's top k
// (default parameters, k = its number of direct dependents) that are direct
// dependents.
func ImpactPrecision(g *csr.Graph, minDeps, bootstrap int, progress func(ingest.Progress)) (ImpactResult, error) {
	if minDeps <= 0 {
		minDeps = DefaultMinDependents
	}
	res := ImpactResult{Nodes: g.NumNodes(), Edges: g.NumEdges(), MinDependents: minDeps, Min: math.Inf(1), Truth: "graph"}
	usage, err := UsageRelations(g)
	if err != nil {
		return res, err
	}
	e, err := engines.New(g)
	if err != nil {
		return res, err
	}
	order, err := g.KeyOrder()
	if err != nil {
		return res, err
	}
	lo, hi, err := g.PrefixRange("sym:")
	if err != nil {
		return res, err
	}
	var shares, actShares []float64
	for i := lo; i < hi; i++ {
		if progress != nil && (i-lo)%256 == 0 {
			progress(ingest.Progress{Phase: "scoring", Done: i - lo, Total: hi - lo})
		}
		n := csr.NodeIndex(order[i])
		deps, err := DirectDependents(g, usage, n)
		if err != nil {
			return res, err
		}
		if len(deps) < minDeps {
			continue
		}
		p := engines.DefaultImpactParams()
		p.TopK = len(deps)
		as, err := e.Impact(n, p)
		if err != nil {
			return res, err
		}
		hit := 0
		for _, a := range as {
			if deps[a.Node] {
				hit++
			}
		}
		share := float64(hit) / float64(len(deps))
		ap := engines.DefaultActivationParams()
		ap.TopK = len(deps) + 1
		acts, err := e.Activate([]engines.Seed{{Node: n, Score: 1}}, ap)
		if err != nil {
			return res, err
		}
		actHit, kept := 0, 0
		for _, a := range acts {
			if a.Node == n || kept == len(deps) {
				continue
			}
			kept++
			if deps[a.Node] {
				actHit++
			}
		}
		shares, actShares = append(shares, share), append(actShares, float64(actHit)/float64(len(deps)))
		if err := res.scored(share, func() (string, error) { return g.Key(n) }); err != nil {
			return res, err
		}
	}
	if progress != nil {
		progress(ingest.Progress{Phase: "scoring", Done: hi - lo, Total: hi - lo})
	}
	return res, res.finish(shares, actShares, bootstrap)
}

// scored counts one scored symbol's share towards Perfect and Min; worst
// names the symbol, asked only when it is the lowest so far.
func (r *ImpactResult) scored(share float64, worst func() (string, error)) error {
	if share == 1 {
		r.Perfect++
	}
	if share < r.Min {
		key, err := worst()
		if err != nil {
			return err
		}
		r.Min, r.Worst = share, key
	}
	return nil
}

// finish sets Symbols, the means and their bootstrap intervals (bootstrap
// resamples, 0: DefaultBootstrap) from the scored symbols' shares of
// impact and of the activation baseline, or says nothing was scored.
func (r *ImpactResult) finish(shares, actShares []float64, bootstrap int) error {
	r.Symbols = len(shares)
	if r.Symbols == 0 {
		r.Min = 0
		return ErrNothingToScore
	}
	r.Precision, r.Activate = BootstrapMean(shares, bootstrap), BootstrapMean(actShares, bootstrap)
	r.Mean, r.ActivateMean = r.Precision.Mean, r.Activate.Mean
	return nil
}

// Text is the summary of r: one line and the note on the truth.
func (r ImpactResult) Text() string {
	worst := ""
	if r.Min < 1 {
		worst = fmt.Sprintf(", worst %s", r.Worst)
	}
	if r.Truth == "scip" {
		return fmt.Sprintf("eval impact %s: %d symbols with ≥ %d dependents in the index (%d without a node): top-k precision %s (min %.3f, %d perfect%s; baseline activate %s); dependents in the graph %s; %d nodes, %d edges; %.2fs\n"+
			"truth: %s %s's index: a symbol's dependents are the definitions that reference it",
			r.Dir, r.Symbols, r.MinDependents, r.Unmatched, r.Precision, r.Min, r.Perfect, worst, r.Activate, r.InGraph, r.Nodes, r.Edges, r.Seconds,
			r.Tool, r.ToolVersion)
	}
	return fmt.Sprintf("eval impact %s: %d symbols with ≥ %d usage dependents: top-k precision %s (min %.3f, %d perfect%s; baseline activate %s); %d nodes, %d edges; %.2fs\n"+
		"note: truth is read from the graph scored (self-referential): it measures the ranking, not the graph; `memctl eval impact DIR --scip INDEX` takes it from a compiler-grade index, `memctl eval graph DIR --scip INDEX` measures the graph against one",
		r.Dir, r.Symbols, r.MinDependents, r.Precision, r.Min, r.Perfect, worst, r.Activate, r.Nodes, r.Edges, r.Seconds)
}
