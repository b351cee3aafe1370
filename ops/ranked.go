package ops

// The ranked operations (SPEC.md §8): related/activate, resonate,
// pagerank and impact over an *engines.Engine, whatever gave it (the CLI:
// a snapshot file; the MCP server: its engine snapshot of a revision).
// Records carry no revision: the surface that knows it sets Rev.

import (
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/records"
)

// RelatedRequest: related (MCP) and activate (CLI). Nil pointers take the
// engines' defaults.
type RelatedRequest struct {
	Queries      []string
	Top          int
	Profile      string // "related" ("" too) or "classic"
	Depth        *int
	Relations    []string // names, each may be a comma-separated list
	Files        bool     // Kind "file"
	Kind         string   // only nodes of this type ("": all)
	PerContainer *int     // related only
	Temporal     *float64 // related only
	Lexical      *bool    // related only
	Strategy     string   // classic only
	Spell        Spelling // how the surface spells an option in messages
	// Feedback is the overlay the related profile reads (SPEC.md §8.2.2),
	// read from the store at the answer's revision; nil: off.
	Feedback *FeedbackOverlay
}

// Spelling turns an option's name as the JSON records spell it
// ("per_container") into the surface's ("--per-container"); nil keeps it.
type Spelling func(option string) string

func (f Spelling) of(option string) string {
	if f == nil {
		return option
	}
	return f(option)
}

// Related ranks the nodes related to req.Queries by spreading activation.
func Related(eng *engines.Engine, req RelatedRequest) (records.Ranked, error) {
	if req.Top < 0 {
		return records.Ranked{}, invalidf("top must be >= 0")
	}
	kind := req.Kind
	if req.Files {
		if kind != "" && kind != "file" {
			return records.Ranked{}, invalidf("%s and %s %s contradict each other", req.Spell.of("files"), req.Spell.of("kind"), kind)
		}
		kind = "file"
	}
	rels, err := RelationIDs(eng, req.Relations)
	if err != nil {
		return records.Ranked{}, err
	}
	var run func([]engines.Seed) ([]engines.Scored, error)
	switch req.Profile {
	case "", "related":
		if req.Strategy != "" {
			return records.Ranked{}, invalidf("%s applies to %s classic only", req.Spell.of("strategy"), req.Spell.of("profile"))
		}
		p := engines.DefaultRelatedParams()
		p.TopK, p.Relations, p.Kind = req.Top, rels, kind
		if req.Depth != nil {
			p.Depth = *req.Depth
		}
		if req.PerContainer != nil {
			p.PerContainer = *req.PerContainer
		}
		if req.Temporal != nil {
			p.Temporal = *req.Temporal
		}
		if req.Lexical != nil {
			p.Lexical = *req.Lexical
		}
		run = func(seeds []engines.Seed) ([]engines.Scored, error) {
			fp := DefaultFeedbackParams()
			p.FeedbackWeight = fp.Weight
			if p.Feedback, err = req.Feedback.Links(eng.Graph(), seeds, fp); err != nil {
				return nil, err
			}
			return eng.Related(seeds, p)
		}
	case "classic":
		for _, f := range []struct {
			name string
			set  bool
		}{{"per_container", req.PerContainer != nil}, {"temporal", req.Temporal != nil}, {"lexical", req.Lexical != nil}} {
			if f.set {
				return records.Ranked{}, invalidf("%s applies to %s related only", req.Spell.of(f.name), req.Spell.of("profile"))
			}
		}
		p := engines.DefaultActivationParams()
		p.TopK, p.Relations = req.Top, rels
		if req.Depth != nil {
			p.MaxDepth = *req.Depth
		}
		if req.Strategy != "" {
			if p.Strategy, err = engines.ParseStrategy(req.Strategy); err != nil {
				return records.Ranked{}, err
			}
		}
		if kind != "" {
			p.TopK = 0 // filter first, then cut
		}
		run = func(seeds []engines.Seed) ([]engines.Scored, error) {
			rs, err := eng.Activate(seeds, p)
			if err != nil || kind == "" {
				return rs, err
			}
			return ofKind(eng.Graph(), rs, kind, req.Top)
		}
	default:
		return records.Ranked{}, invalidf("unknown profile %q (want related or classic)", req.Profile)
	}
	seeds, matches, err := FindSeeds(eng, req.Queries)
	if err != nil {
		return records.Ranked{}, err
	}
	rs, err := run(seeds)
	if err != nil {
		return records.Ranked{}, err
	}
	res := records.Ranked{}
	if res.Seeds, err = SeedRecords(eng, matches); err != nil {
		return records.Ranked{}, err
	}
	res.Results, err = ScoredNodes(eng, rs)
	return res, err
}

// ofKind keeps the nodes of type kind, at most top (0: all).
func ofKind(g *csr.Graph, rs []engines.Scored, kind string, top int) ([]engines.Scored, error) {
	out := rs[:0]
	for _, r := range rs {
		if top > 0 && len(out) == top {
			break
		}
		typ, err := g.Type(r.Node)
		if err != nil {
			return nil, err
		}
		if typ == kind {
			out = append(out, r)
		}
	}
	return out, nil
}

// ResonateRequest: resonate. Nil pointers take the engines' defaults.
type ResonateRequest struct {
	Queries   []string
	Top       int
	Frequency *float64
	Budget    *int
	Relations []string
	Sweep     bool
}

// Resonate ranks nodes by standing-wave amplitude, or sweeps frequencies.
func Resonate(eng *engines.Engine, req ResonateRequest) (records.Resonance, error) {
	p := engines.DefaultResonanceParams()
	p.TopK = req.Top
	if p.TopK < 0 {
		return records.Resonance{}, invalidf("top must be >= 0")
	}
	if req.Frequency != nil {
		p.Frequency = *req.Frequency
	}
	if req.Budget != nil {
		p.Budget = *req.Budget
	}
	var err error
	if p.Relations, err = RelationIDs(eng, req.Relations); err != nil {
		return records.Resonance{}, err
	}
	seeds, matches, err := FindSeeds(eng, req.Queries)
	if err != nil {
		return records.Resonance{}, err
	}
	var res records.Resonance
	if res.Seeds, err = SeedRecords(eng, matches); err != nil {
		return records.Resonance{}, err
	}
	if !req.Sweep {
		w, err := eng.Resonate(seeds, p)
		if err != nil {
			return records.Resonance{}, err
		}
		res.Results, err = ScoredNodes(eng, w.Nodes)
		return res, err
	}
	sp := engines.DefaultSweepParams()
	sp.Base = p
	sw, err := eng.Sweep(seeds, sp)
	if err != nil {
		return records.Resonance{}, err
	}
	res.Resonant = []records.Harmonic{}
	for _, h := range sw.Resonant {
		nodes, err := ScoredNodes(eng, h.Antinodes)
		if err != nil {
			return records.Resonance{}, err
		}
		res.Resonant = append(res.Resonant, records.Harmonic{Frequency: records.Score(h.Frequency), Energy: records.Score(h.Energy), Antinodes: nodes})
	}
	return res, nil
}

// PageRankRequest: pagerank.
type PageRankRequest struct {
	Top      int
	Weighted bool
	// Ranks, when set, are the ranks to list (a surface's cache of
	// them); otherwise the stored section or a fresh computation.
	Ranks []float64
}

// PageRank lists the Top nodes by rank.
func PageRank(eng *engines.Engine, req PageRankRequest) (records.Ranked, error) {
	if req.Top < 0 {
		return records.Ranked{}, invalidf("top must be >= 0")
	}
	ranks := req.Ranks
	if ranks == nil {
		var err error
		if ranks, err = engines.StoredOrComputedPageRank(eng, req.Weighted); err != nil {
			return records.Ranked{}, err
		}
	}
	rs, err := ScoredNodes(eng, engines.TopRanks(ranks, req.Top))
	return records.Ranked{Results: rs}, err
}

// ImpactRequest: impact. Nil pointers take the engines' defaults.
type ImpactRequest struct {
	Query     string
	Depth     *int
	Direction string // "": in
	Relations []string
	Top       int
}

// Impact lists who is affected if the node Query resolves to changes.
func Impact(eng *engines.Engine, req ImpactRequest) (records.Impact, error) {
	p := engines.DefaultImpactParams()
	if req.Depth != nil {
		p.Depth = *req.Depth
	}
	p.TopK = req.Top
	if p.TopK < 0 {
		return records.Impact{}, invalidf("top must be >= 0")
	}
	var err error
	if req.Direction != "" {
		if p.Direction, err = engines.ParseDirection(req.Direction); err != nil {
			return records.Impact{}, err
		}
	}
	if p.Relations, err = RelationIDs(eng, req.Relations); err != nil {
		return records.Impact{}, err
	}
	if req.Query == "" {
		return records.Impact{}, invalidf("the query is empty")
	}
	origin, matches, err := eng.ResolveOrigin(req.Query)
	if err != nil {
		return records.Impact{}, err
	}
	if len(matches) == 0 {
		return records.Impact{}, &NoMatchError{Queries: []string{req.Query}}
	}
	g := eng.Graph()
	originKey, err := g.Key(origin)
	if err != nil {
		return records.Impact{}, err
	}
	as, err := eng.Impact(origin, p)
	if err != nil {
		return records.Impact{}, err
	}
	res := records.Impact{Origin: originKey, Affected: make([]records.Affected, len(as))}
	for i, x := range as {
		key, err := g.Key(x.Node)
		if err != nil {
			return records.Impact{}, err
		}
		res.Affected[i] = records.Affected{Key: key, Distance: x.Distance, Score: records.Score(x.Score)}
	}
	return res, nil
}

// RelationIDs resolves relation names (each may be a comma-separated list).
func RelationIDs(eng *engines.Engine, names []string) ([]uint32, error) {
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

// FindSeeds resolves queries with the default seed parameters; no match
// at all is a *NoMatchError.
func FindSeeds(eng *engines.Engine, queries []string) ([]engines.Seed, []engines.SeedMatch, error) {
	if len(queries) == 0 {
		return nil, nil, invalidf("queries must name at least one string")
	}
	seeds, matches, err := eng.FindSeeds(queries, engines.DefaultSeedParams())
	if err != nil {
		return nil, nil, err
	}
	if len(seeds) == 0 {
		return nil, nil, &NoMatchError{Queries: queries}
	}
	return seeds, matches, nil
}

// SeedRecords are the records of seed matches.
func SeedRecords(eng *engines.Engine, ms []engines.SeedMatch) ([]records.SeedMatch, error) {
	out := make([]records.SeedMatch, len(ms))
	for i, m := range ms {
		key, err := eng.Graph().Key(m.Node)
		if err != nil {
			return nil, err
		}
		out[i] = records.SeedMatch{Query: m.Query, Key: key, Match: m.Kind.String(), Score: records.Score(m.Score)}
	}
	return out, nil
}

// ScoredNodes are the records of ranked nodes.
func ScoredNodes(eng *engines.Engine, rs []engines.Scored) ([]records.ScoredNode, error) {
	out := make([]records.ScoredNode, len(rs))
	for i, r := range rs {
		key, err := eng.Graph().Key(csr.NodeIndex(r.Node))
		if err != nil {
			return nil, err
		}
		out[i] = records.ScoredNode{Key: key, Score: records.Score(r.Score)}
	}
	return out, nil
}
