package mcpserver

// The analysis tools: the engines of SPEC.md §8 over the engine snapshot
// of the revision asked for (snapshots.go). Parameters and defaults are the
// CLI's (§8.6); results are the CLI's --json records.

import (
	"context"
	"errors"
	"fmt"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
)

type (
	// ScoredNode is one ranked node.
	ScoredNode = records.ScoredNode
	// SeedMatchRecord is what one query string matched.
	SeedMatchRecord = records.SeedMatch
	// Ranked is the answer of related and pagerank.
	Ranked = records.Ranked
	// HarmonicRecord is one resonant frequency of a sweep.
	HarmonicRecord = records.Harmonic
	// Resonance is the answer of resonate.
	Resonance = records.Resonance
	// AffectedNode is one node of a blast radius.
	AffectedNode = records.Affected
	// Impact is the answer of impact.
	Impact = records.Impact
)

// RelatedArgs: related (spreading activation), the CLI's activate.
type RelatedArgs struct {
	Queries      []string `json:"queries" jsonschema:"keys or parts of keys to start from: each resolves by exact key, else key prefix, else substring, else fuzzy match"`
	Top          *int     `json:"top,omitempty" jsonschema:"at most this many results (default 20; 0: all)"`
	Profile      string   `json:"profile,omitempty" jsonschema:"related (default: ranked relatedness, SPEC 8.2.1) or classic (strongest path, 8.2)"`
	Depth        *int     `json:"depth,omitempty" jsonschema:"propagate at most this many hops (default 3 related, 5 classic)"`
	Rel          []string `json:"rel,omitempty" jsonschema:"follow only these relations"`
	Files        bool     `json:"files,omitempty" jsonschema:"list files only (same as kind file; related: fused with their lexical similarity, SPEC 8.2.1)"`
	Kind         string   `json:"kind,omitempty" jsonschema:"list only nodes of this type (file, symbol, package, ...)"`
	PerContainer *int     `json:"per_container,omitempty" jsonschema:"related only: list at most this many leaves (symbols) per container (file); 0: no cap (default 3)"`
	Temporal     *float64 `json:"temporal,omitempty" jsonschema:"related only: weight of the recency term (default 2; 0: off)"`
	Lexical      *bool    `json:"lexical,omitempty" jsonschema:"related only, with files: fuse the ranking with the files' lexical similarity (default true)"`
	Strategy     string   `json:"strategy,omitempty" jsonschema:"classic only: wavefront, heap or auto (default; same scores, different cost)"`
	Feedback     bool     `json:"feedback,omitempty" jsonschema:"related only: read the feedback overlay (the feedback tool; SPEC 8.2.2)"`
	ViewArgs
	FreshArgs
}

func (s *Server) related(_ context.Context, a *RelatedArgs) (Ranked, error) {
	asOf := s.freshen(a.FreshArgs, a.ViewArgs)
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return Ranked{}, err
	}
	fb, err := s.feedbackOverlay(a.Feedback, snap.rev)
	if err != nil {
		return Ranked{}, err
	}
	res, err := ops.Related(snap.eng, ops.RelatedRequest{
		Queries: a.Queries, Top: intOr(a.Top, 20), Profile: a.Profile, Depth: a.Depth, Relations: a.Rel,
		Files: a.Files, Kind: a.Kind, PerContainer: a.PerContainer, Temporal: a.Temporal, Lexical: a.Lexical,
		Strategy: a.Strategy, Feedback: fb,
	})
	res.Rev, res.AsOf = uint64(snap.rev), asOf
	if err == nil {
		res.Coverage, err = coverage(snap, records.KeysOfRanked(res.Seeds, res.Results))
	}
	return res, atRev(err, snap.rev)
}

// atRev says which revision's graph a query matched nothing in.
func atRev(err error, rev lmdbstore.Revision) error {
	var nm *ops.NoMatchError
	if errors.As(err, &nm) {
		return fmt.Errorf("%w at revision %d", err, rev)
	}
	return err
}

// ResonateArgs: resonate (standing-wave resonance).
type ResonateArgs struct {
	Queries   []string `json:"queries" jsonschema:"keys or parts of keys to start from (resolved as in related)"`
	Top       *int     `json:"top,omitempty" jsonschema:"at most this many results (default 20; 0: all)"`
	Frequency *float64 `json:"frequency,omitempty" jsonschema:"pulse frequency, > 0 (default 1; phase step 2π·F/4 per hop)"`
	Budget    *int     `json:"budget,omitempty" jsonschema:"send at most this many pulses (default 50000)"`
	Rel       []string `json:"rel,omitempty" jsonschema:"follow only these relations"`
	Sweep     bool     `json:"sweep,omitempty" jsonschema:"sweep frequencies 0.1..2.0 in 20 steps and return the resonant ones"`
	ViewArgs
	FreshArgs
}

func (s *Server) resonate(_ context.Context, a *ResonateArgs) (Resonance, error) {
	asOf := s.freshen(a.FreshArgs, a.ViewArgs)
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return Resonance{}, err
	}
	res, err := ops.Resonate(snap.eng, ops.ResonateRequest{
		Queries: a.Queries, Top: intOr(a.Top, 20), Frequency: a.Frequency, Budget: a.Budget, Relations: a.Rel, Sweep: a.Sweep,
	})
	res.Rev, res.AsOf = uint64(snap.rev), asOf
	return res, atRev(err, snap.rev)
}

// PageRankArgs: pagerank.
type PageRankArgs struct {
	Top      *int `json:"top,omitempty" jsonschema:"at most this many results (default 20; 0: all)"`
	Weighted bool `json:"weighted,omitempty" jsonschema:"split rank over out-edges by edge weight"`
	ViewArgs
	FreshArgs
}

func (s *Server) pagerank(_ context.Context, a *PageRankArgs) (Ranked, error) {
	asOf := s.freshen(a.FreshArgs, a.ViewArgs)
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return Ranked{}, err
	}
	top := intOr(a.Top, 20)
	if top < 0 {
		return Ranked{}, invalidArg("top must be >= 0")
	}
	ranks, err := snap.pageRank(a.Weighted)
	if err != nil {
		return Ranked{}, err
	}
	res, err := ops.PageRank(snap.eng, ops.PageRankRequest{Top: top, Weighted: a.Weighted, Ranks: ranks})
	res.Rev, res.AsOf = uint64(snap.rev), asOf
	return res, err
}

// ImpactArgs: impact (blast radius).
type ImpactArgs struct {
	Key       string   `json:"key" jsonschema:"the node: a canonical key, or a query resolved like related's (key prefix, substring, fuzzy); the best match is used"`
	Depth     *int     `json:"depth,omitempty" jsonschema:"walk at most this many hops, 1..20 (default 3)"`
	Direction string   `json:"direction,omitempty" jsonschema:"in (who depends on key: default), out (what key depends on) or both"`
	Rel       []string `json:"rel,omitempty" jsonschema:"follow only these relations"`
	Top       *int     `json:"top,omitempty" jsonschema:"at most this many results (default 100; 0: all)"`
	ViewArgs
	FreshArgs
}

func (s *Server) impact(_ context.Context, a *ImpactArgs) (Impact, error) {
	asOf := s.freshen(a.FreshArgs, a.ViewArgs)
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return Impact{}, err
	}
	if a.Key == "" {
		return Impact{}, invalidArg("key is empty")
	}
	res, err := ops.Impact(snap.eng, ops.ImpactRequest{
		Query: a.Key, Depth: a.Depth, Direction: a.Direction, Relations: a.Rel, Top: intOr(a.Top, 100),
	})
	var nm *ops.NoMatchError
	if errors.As(err, &nm) {
		return Impact{}, fmt.Errorf("%w: %v at revision %d", lmdbstore.ErrNotFound, err, snap.rev)
	}
	res.Rev, res.AsOf = uint64(snap.rev), asOf
	if err == nil {
		res.Coverage, err = coverage(snap, records.KeysOfImpact(res))
	}
	return res, err
}

// SearchArgs: search — by what memory says (query: full text fused with
// key matching, as `memctl search`) and by key (queries: seed finding).
type SearchArgs struct {
	Query         string   `json:"query,omitempty" jsonschema:"find memory items by what they say: words matched against keys, types, payload text, observations and kv entries (BM25, fused with key matching); superseded and expired items are left out"`
	Types         []string `json:"types,omitempty" jsonschema:"with query: only items of these types (kv: kv entries)"`
	Top           *int     `json:"top,omitempty" jsonschema:"with query: at most this many items (default 10)"`
	Queries       []string `json:"queries,omitempty" jsonschema:"strings to look up among node keys (exact, prefix, substring, fuzzy)"`
	PerQuery      *int     `json:"per_query,omitempty" jsonschema:"at most this many keys per query (default 8)"`
	MinSimilarity *float64 `json:"min_similarity,omitempty" jsonschema:"fuzzy matches need trigram similarity >= this, in (0, 1] (default 0.3)"`
	ViewArgs
	FreshArgs
}

// SearchResult is the answer of search.
type SearchResult struct {
	Rev     uint64              `json:"rev"`
	AsOf    *records.AsOf       `json:"as_of,omitempty"`
	Hits    []records.SearchHit `json:"hits,omitempty" jsonschema:"with query: the items found, best first"`
	Matches []SeedMatchRecord   `json:"matches" jsonschema:"per query, in query order: exact, else prefix, else substring, else fuzzy matches"`
}

func (s *Server) search(_ context.Context, a *SearchArgs) (SearchResult, error) {
	asOf := s.freshen(a.FreshArgs, a.ViewArgs)
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return SearchResult{}, err
	}
	p := engines.DefaultSeedParams()
	p.PerQuery = intOr(a.PerQuery, p.PerQuery)
	if a.MinSimilarity != nil {
		p.MinSimilarity = *a.MinSimilarity
	}
	if a.Query == "" && len(a.Queries) == 0 {
		return SearchResult{}, invalidArg("give query (what memory says) or queries (keys)")
	}
	var hits []records.SearchHit
	if a.Query != "" {
		top := intOr(a.Top, 0)
		if top < 0 {
			return SearchResult{}, invalidArg("top must be >= 0")
		}
		if hits, err = ops.Search(snap.eng, ops.SearchRequest{Query: a.Query, Top: top, Types: a.Types}); err != nil {
			return SearchResult{}, err
		}
		if len(a.Queries) == 0 {
			return SearchResult{Rev: uint64(snap.rev), AsOf: asOf, Hits: hits, Matches: []SeedMatchRecord{}}, nil
		}
	}
	_, matches, err := snap.eng.FindSeeds(a.Queries, p)
	if err != nil {
		return SearchResult{}, err
	}
	recs, err := ops.SeedRecords(snap.eng, matches)
	if err != nil {
		return SearchResult{}, err
	}
	return SearchResult{Rev: uint64(snap.rev), AsOf: asOf, Hits: hits, Matches: recs}, nil
}

// --- helpers -----------------------------------------------------------------

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// coverage is what the graph of an answer's region could not see (SPEC.md
// §8.7); nil when the answer involves no file.
func coverage(snap *engineSnap, keys []string) (*records.Coverage, error) {
	c, err := ops.Coverage(ops.EnginePayloads(snap.eng), keys)
	if err != nil || c.Files == 0 {
		return nil, err
	}
	return &c, nil
}
