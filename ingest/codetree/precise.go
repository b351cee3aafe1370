package codetree

// Precise mode (SPEC.md §9.12): the SCIP indexers of package precise
// decide the resolved edges of the languages they index. A language's
// stored tree hash only counts as unchanged when it was read the way this
// run would read it: by the same indexer, or from syntax by both.

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/precise"
	"github.com/memctl/memctl/lmdbstore"
)

// storedPrecise reads the indexer each language's last ingest was
// resolved by ("" or absent: syntax).
func storedPrecise(r *lmdbstore.ReadTxn) (map[string]string, error) { return storedField(r, "precise") }

// storedField reads a string field of every language's ingest:<lang>
// node (languages whose node lacks it, or has it empty, are absent).
func storedField(r *lmdbstore.ReadTxn, field string) (map[string]string, error) {
	out := make(map[string]string, len(ingest.Languages))
	for _, lang := range ingest.Languages {
		n, err := r.GetNode(ingest.IngestKey(lang), lmdbstore.At{})
		if errors.Is(err, lmdbstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var p map[string]json.RawMessage
		var v string
		if json.Unmarshal(n.Payload, &p) == nil && json.Unmarshal(p[field], &v) == nil && v != "" {
			out[lang] = v
		}
	}
	return out, nil
}

// preciseState is what precise mode decided before extraction.
type preciseState struct {
	stored map[string]string         // lang → indexer of the last ingest
	plan   map[string]precise.Choice // nil without --precise
}

func newPreciseState(o Options, stored map[string]string) preciseState {
	ps := preciseState{stored: stored}
	if o.Precise != nil {
		langs := append([]string{ingest.LangGo}, o.Langs...)
		ps.plan = o.Precise.Plan(langs)
	}
	return ps
}

// skipHash is the stored tree hash of lang if its last ingest was read
// as this one would be, else "" (read it again).
func (ps preciseState) skipHash(hashes map[string]string, lang string) string {
	if ps.stored[lang] != ps.plan[lang].Tool() {
		return ""
	}
	return hashes[lang]
}

// apply runs the indexers of the extracted languages and rewrites g; the
// summary's languages get the counts of the rewritten graph.
func (ps preciseState) apply(dir string, g *ingest.Graph, written []string, out *Summary, progress func(ingest.Progress)) *ingest.Graph {
	if ps.plan == nil {
		return g
	}
	res := precise.Run(dir, g, written, ps.plan, progress)
	out.Precise = res.Langs
	for i := range out.Languages {
		l := &out.Languages[i]
		if st := res.Stats[l.Lang]; st != nil && st.Covered > 0 {
			l.Symbols, l.Edges, l.Unresolved = st.Symbols, st.Edges, st.Unresolved
		}
		if !l.Unchanged {
			continue
		}
		// Not read this time: say how it was read before.
		pl := precise.Lang{Lang: l.Lang, Indexer: ps.stored[l.Lang], Files: l.Files, Unchanged: true}
		if pl.Indexer == "" {
			c := ps.plan[l.Lang]
			if c.Indexer != nil {
				pl.Indexer = c.Indexer.Name
			}
			if c.Err != nil {
				pl.Fallback = c.Err.Error()
			}
		}
		out.Precise = append(out.Precise, pl)
	}
	slices.SortStableFunc(out.Precise, func(a, b precise.Lang) int {
		return slices.Index(ingest.Languages, a.Lang) - slices.Index(ingest.Languages, b.Lang)
	})
	return res.Graph
}
