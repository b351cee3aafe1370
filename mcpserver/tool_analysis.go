package mcpserver

// The analysis tools: the engines of SPEC.md §8 over the engine snapshot
// of the revision asked for (snapshots.go). Parameters and defaults are the
// CLI's (§8.6); results are the CLI's --json records.

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
)

// ScoredNode is one ranked node.
type ScoredNode struct {
	Key   string `json:"key"`
	Score Score  `json:"score"`
}

// SeedMatchRecord is what one query string matched.
type SeedMatchRecord struct {
	Query string `json:"query"`
	Key   string `json:"key"`
	Match string `json:"match" jsonschema:"exact, prefix, substring or fuzzy"`
	Score Score  `json:"score"`
}

// Ranked is the answer of related, resonate and pagerank.
type Ranked struct {
	Rev     uint64            `json:"rev" jsonschema:"the revision of the graph the engine read"`
	Seeds   []SeedMatchRecord `json:"seeds,omitempty" jsonschema:"what the queries matched (related, resonate)"`
	Results []ScoredNode      `json:"results" jsonschema:"best first"`
}

// RelatedArgs: related (spreading activation).
type RelatedArgs struct {
	Queries  []string `json:"queries" jsonschema:"keys or parts of keys to start from: each resolves by exact key, else key prefix, else substring, else fuzzy match"`
	Top      *int     `json:"top,omitempty" jsonschema:"at most this many results (default 20; 0: all)"`
	Profile  string   `json:"profile,omitempty" jsonschema:"related (default: ranked relatedness, SPEC 8.2.1) or classic (strongest path, 8.2)"`
	Depth    *int     `json:"depth,omitempty" jsonschema:"propagate at most this many hops (default 3 related, 5 classic)"`
	Rel      []string `json:"rel,omitempty" jsonschema:"follow only these relations"`
	Files    bool     `json:"files,omitempty" jsonschema:"list files only (related: fused with their lexical similarity, SPEC 8.2.1)"`
	Strategy string   `json:"strategy,omitempty" jsonschema:"classic only: wavefront, heap or auto (default; same scores, different cost)"`
	ViewArgs
}

func (s *Server) related(_ context.Context, a *RelatedArgs) (Ranked, error) {
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return Ranked{}, err
	}
	top := intOr(a.Top, 20)
	if top < 0 {
		return Ranked{}, invalidArg("top must be >= 0")
	}
	rels, err := relationIDs(snap.eng, a.Rel)
	if err != nil {
		return Ranked{}, err
	}
	var run func([]engines.Seed) ([]engines.Scored, error)
	switch a.Profile {
	case "", "related":
		if a.Strategy != "" {
			return Ranked{}, invalidArg("strategy applies to profile classic only")
		}
		p := engines.DefaultRelatedParams()
		p.TopK, p.Depth, p.Relations = top, intOr(a.Depth, engines.DefaultRelatedDepth), rels
		if a.Files {
			p.Kind = "file"
		}
		run = func(seeds []engines.Seed) ([]engines.Scored, error) { return snap.eng.Related(seeds, p) }
	case "classic":
		p := engines.DefaultActivationParams()
		p.TopK, p.MaxDepth, p.Relations = top, intOr(a.Depth, engines.DefaultMaxDepth), rels
		if a.Strategy != "" {
			if p.Strategy, err = engines.ParseStrategy(a.Strategy); err != nil {
				return Ranked{}, err
			}
		}
		if a.Files {
			p.TopK = 0
		}
		run = func(seeds []engines.Seed) ([]engines.Scored, error) {
			rs, err := snap.eng.Activate(seeds, p)
			if err != nil || !a.Files {
				return rs, err
			}
			out := rs[:0]
			for _, r := range rs {
				if top > 0 && len(out) == top {
					break
				}
				if typ, err := snap.eng.Graph().Type(r.Node); err != nil {
					return nil, err
				} else if typ == "file" {
					out = append(out, r)
				}
			}
			return out, nil
		}
	default:
		return Ranked{}, invalidArg("unknown profile %q (want related or classic)", a.Profile)
	}
	seeds, matches, err := findSeeds(snap, a.Queries, engines.DefaultSeedParams())
	if err != nil {
		return Ranked{}, err
	}
	rs, err := run(seeds)
	if err != nil {
		return Ranked{}, err
	}
	return ranked(snap, matches, rs)
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
}

// HarmonicRecord is one resonant frequency of a sweep.
type HarmonicRecord struct {
	Frequency Score        `json:"frequency"`
	Energy    Score        `json:"energy"`
	Antinodes []ScoredNode `json:"antinodes"`
}

// Resonance is the answer of resonate.
type Resonance struct {
	Rev      uint64            `json:"rev"`
	Seeds    []SeedMatchRecord `json:"seeds"`
	Results  []ScoredNode      `json:"results,omitempty" jsonschema:"without sweep: nodes by amplitude"`
	Resonant []HarmonicRecord  `json:"resonant,omitempty" jsonschema:"with sweep: the resonant frequencies in frequency order"`
}

func (s *Server) resonate(_ context.Context, a *ResonateArgs) (Resonance, error) {
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return Resonance{}, err
	}
	p := engines.DefaultResonanceParams()
	p.TopK = intOr(a.Top, 20)
	if p.TopK < 0 {
		return Resonance{}, invalidArg("top must be >= 0")
	}
	if a.Frequency != nil {
		p.Frequency = *a.Frequency
	}
	p.Budget = intOr(a.Budget, engines.DefaultPulseBudget)
	if p.Relations, err = relationIDs(snap.eng, a.Rel); err != nil {
		return Resonance{}, err
	}
	seeds, matches, err := findSeeds(snap, a.Queries, engines.DefaultSeedParams())
	if err != nil {
		return Resonance{}, err
	}
	res := Resonance{Rev: uint64(snap.rev)}
	if res.Seeds, err = seedRecords(snap, matches); err != nil {
		return Resonance{}, err
	}
	if !a.Sweep {
		w, err := snap.eng.Resonate(seeds, p)
		if err != nil {
			return Resonance{}, err
		}
		res.Results, err = scoredNodes(snap, w.Nodes)
		return res, err
	}
	sp := engines.DefaultSweepParams()
	sp.Base = p
	sw, err := snap.eng.Sweep(seeds, sp)
	if err != nil {
		return Resonance{}, err
	}
	res.Resonant = []HarmonicRecord{}
	for _, h := range sw.Resonant {
		nodes, err := scoredNodes(snap, h.Antinodes)
		if err != nil {
			return Resonance{}, err
		}
		res.Resonant = append(res.Resonant, HarmonicRecord{Frequency: Score(h.Frequency), Energy: Score(h.Energy), Antinodes: nodes})
	}
	return res, nil
}

// PageRankArgs: pagerank.
type PageRankArgs struct {
	Top      *int `json:"top,omitempty" jsonschema:"at most this many results (default 20; 0: all)"`
	Weighted bool `json:"weighted,omitempty" jsonschema:"split rank over out-edges by edge weight"`
	ViewArgs
}

func (s *Server) pagerank(_ context.Context, a *PageRankArgs) (Ranked, error) {
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
	return ranked(snap, nil, engines.TopRanks(ranks, top))
}

// ImpactArgs: impact (blast radius).
type ImpactArgs struct {
	Key       string   `json:"key" jsonschema:"the node: a canonical key, or a query resolved like related's (key prefix, substring, fuzzy); the best match is used"`
	Depth     *int     `json:"depth,omitempty" jsonschema:"walk at most this many hops, 1..20 (default 3)"`
	Direction string   `json:"direction,omitempty" jsonschema:"in (who depends on key: default), out (what key depends on) or both"`
	Rel       []string `json:"rel,omitempty" jsonschema:"follow only these relations"`
	Top       *int     `json:"top,omitempty" jsonschema:"at most this many results (default 100; 0: all)"`
	ViewArgs
}

// AffectedNode is one node of a blast radius.
type AffectedNode struct {
	Key      string `json:"key"`
	Distance int    `json:"distance" jsonschema:"fewest hops from the origin"`
	Score    Score  `json:"score"`
}

// Impact is the answer of impact.
type Impact struct {
	Rev      uint64         `json:"rev"`
	Origin   string         `json:"origin" jsonschema:"the key the query resolved to"`
	Affected []AffectedNode `json:"affected" jsonschema:"by score, then distance"`
}

func (s *Server) impact(_ context.Context, a *ImpactArgs) (Impact, error) {
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return Impact{}, err
	}
	p := engines.DefaultImpactParams()
	p.Depth = intOr(a.Depth, engines.DefaultImpactDepth)
	p.TopK = intOr(a.Top, 100)
	if p.TopK < 0 {
		return Impact{}, invalidArg("top must be >= 0")
	}
	if a.Direction != "" {
		if p.Direction, err = engines.ParseDirection(a.Direction); err != nil {
			return Impact{}, err
		}
	}
	if p.Relations, err = relationIDs(snap.eng, a.Rel); err != nil {
		return Impact{}, err
	}
	if a.Key == "" {
		return Impact{}, invalidArg("key is empty")
	}
	origin, matches, err := snap.eng.ResolveOrigin(a.Key)
	if err != nil {
		return Impact{}, err
	}
	if len(matches) == 0 {
		return Impact{}, fmt.Errorf("%w: no node matches %q at revision %d", lmdbstore.ErrNotFound, a.Key, snap.rev)
	}
	originKey, err := snap.graph.Key(origin)
	if err != nil {
		return Impact{}, err
	}
	as, err := snap.eng.Impact(origin, p)
	if err != nil {
		return Impact{}, err
	}
	res := Impact{Rev: uint64(snap.rev), Origin: originKey, Affected: make([]AffectedNode, len(as))}
	for i, x := range as {
		key, err := snap.graph.Key(x.Node)
		if err != nil {
			return Impact{}, err
		}
		res.Affected[i] = AffectedNode{Key: key, Distance: x.Distance, Score: Score(x.Score)}
	}
	return res, nil
}

// SearchArgs: search (seed finding over keys).
type SearchArgs struct {
	Queries       []string `json:"queries" jsonschema:"strings to look up among node keys"`
	PerQuery      *int     `json:"per_query,omitempty" jsonschema:"at most this many keys per query (default 8)"`
	MinSimilarity *float64 `json:"min_similarity,omitempty" jsonschema:"fuzzy matches need trigram similarity >= this, in (0, 1] (default 0.3)"`
	ViewArgs
}

// SearchResult is the answer of search.
type SearchResult struct {
	Rev     uint64            `json:"rev"`
	Matches []SeedMatchRecord `json:"matches" jsonschema:"per query, in query order: exact, else prefix, else substring, else fuzzy matches"`
}

func (s *Server) search(_ context.Context, a *SearchArgs) (SearchResult, error) {
	snap, err := s.snapshot(a.ViewArgs)
	if err != nil {
		return SearchResult{}, err
	}
	p := engines.DefaultSeedParams()
	p.PerQuery = intOr(a.PerQuery, p.PerQuery)
	if a.MinSimilarity != nil {
		p.MinSimilarity = *a.MinSimilarity
	}
	if len(a.Queries) == 0 {
		return SearchResult{}, invalidArg("queries must name at least one string")
	}
	_, matches, err := snap.eng.FindSeeds(a.Queries, p)
	if err != nil {
		return SearchResult{}, err
	}
	recs, err := seedRecords(snap, matches)
	if err != nil {
		return SearchResult{}, err
	}
	return SearchResult{Rev: uint64(snap.rev), Matches: recs}, nil
}

// --- helpers -----------------------------------------------------------------

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// relationIDs resolves relation names (each may be a comma-separated list).
func relationIDs(eng *engines.Engine, names []string) ([]uint32, error) {
	var ids []uint32
	for _, v := range names {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			id, err := eng.RelationID(name)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// findSeeds resolves queries; no match at all is an error naming them.
func findSeeds(snap *engineSnap, queries []string, p engines.SeedParams) ([]engines.Seed, []engines.SeedMatch, error) {
	if len(queries) == 0 {
		return nil, nil, invalidArg("queries must name at least one string")
	}
	seeds, matches, err := snap.eng.FindSeeds(queries, p)
	if err != nil {
		return nil, nil, err
	}
	if len(seeds) == 0 {
		q := make([]string, len(queries))
		for i, x := range queries {
			q[i] = fmt.Sprintf("%q", x)
		}
		return nil, nil, fmt.Errorf("no node matches %s at revision %d", strings.Join(q, " "), snap.rev)
	}
	return seeds, matches, nil
}

func seedRecords(snap *engineSnap, ms []engines.SeedMatch) ([]SeedMatchRecord, error) {
	out := make([]SeedMatchRecord, len(ms))
	for i, m := range ms {
		key, err := snap.graph.Key(m.Node)
		if err != nil {
			return nil, err
		}
		out[i] = SeedMatchRecord{Query: m.Query, Key: key, Match: m.Kind.String(), Score: Score(m.Score)}
	}
	return out, nil
}

func scoredNodes(snap *engineSnap, rs []engines.Scored) ([]ScoredNode, error) {
	out := make([]ScoredNode, len(rs))
	for i, r := range rs {
		key, err := snap.graph.Key(csr.NodeIndex(r.Node))
		if err != nil {
			return nil, err
		}
		out[i] = ScoredNode{Key: key, Score: Score(r.Score)}
	}
	return out, nil
}

func ranked(snap *engineSnap, matches []engines.SeedMatch, rs []engines.Scored) (Ranked, error) {
	res := Ranked{Rev: uint64(snap.rev)}
	var err error
	if matches != nil {
		if res.Seeds, err = seedRecords(snap, matches); err != nil {
			return Ranked{}, err
		}
	}
	res.Results, err = scoredNodes(snap, rs)
	return res, err
}
