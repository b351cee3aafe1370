package ops

// Search by what memory says (SPEC.md §8.7): the engines' BM25 text index
// fused with key matching, for `memctl search` and the MCP search tool.

import (
	"strings"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/records"
)

// SearchRequest: one free-text query. Top 0 is the engines' default, < 0
// all; Types limit the item types ("kv": kv entries).
type SearchRequest struct {
	Query string
	Top   int
	Types []string
	All   bool
}

// Search ranks the memory items matching req.Query.
func Search(eng *engines.Engine, req SearchRequest) ([]records.SearchHit, error) {
	q := strings.TrimSpace(req.Query)
	if q == "" {
		return nil, invalidf("query is empty")
	}
	var types []string
	for _, v := range req.Types {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				types = append(types, t)
			}
		}
	}
	hits, err := eng.Search(q, engines.SearchOptions{TopK: req.Top, All: req.All, Types: types})
	if err != nil {
		return nil, err
	}
	out := make([]records.SearchHit, 0, len(hits))
	for _, h := range hits {
		r := records.SearchHit{Key: h.Key, Type: h.Type, Score: records.Score(h.Score), TextRank: h.TextRank,
			KeyRank: h.KeyRank, Superseded: h.Superseded, Expired: h.Expired}
		if h.KeyRank > 0 {
			r.Match = h.Match.String()
		}
		out = append(out, r)
	}
	return out, nil
}
