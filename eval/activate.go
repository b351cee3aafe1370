package eval

import (
	"strings"

	"github.com/memctl/memctl/engines"
)

// Activate is memctl's own answer: `memctl activate --files file:F` with
// the defaults (the related profile fused with lexical similarity), every
// file in rank order.
func Activate() Predictor {
	return activate("activate", "memctl activate --files from the file (related profile, defaults)", engines.DefaultRelatedTemporal, true)
}

// ActivateStatic is Activate without the temporal term (--temporal 0): it
// measures what the git recency adds.
func ActivateStatic() Predictor {
	return activate("activate-static", "memctl activate --files --temporal 0 (no recency term)", 0, true)
}

// ActivateGraph is Activate without the lexical fusion (--lexical=false):
// the graph's answer alone, to measure what the vocabulary adds.
func ActivateGraph() Predictor {
	return activate("activate-graph", "memctl activate --files --lexical=false (graph and history only)", engines.DefaultRelatedTemporal, false)
}

// Lexical ranks files by the lexical similarity of their vocabularies to
// the query's (engines.Lexicon: TF-IDF cosine of the files' stored terms):
// the information-retrieval baseline.
func Lexical() Predictor {
	return Predictor{
		Name: "lexical",
		Doc:  "files whose vocabulary is most like the file's (TF-IDF cosine of the stored terms)",
		Open: func(m *Memory) (Ranker, error) {
			lex, err := m.Engine.Lexicon()
			if err != nil {
				return nil, err
			}
			return func(file string) ([]string, error) {
				n, ok := m.FileNode(file)
				if !ok {
					return nil, nil
				}
				var out []string
				for _, s := range lex.Similar([]engines.Seed{{Node: n, Score: 1}}) {
					if f, ok := m.FilePath(s.Node); ok {
						out = append(out, f)
					}
				}
				return out, nil
			}, nil
		},
	}
}

func activate(name, doc string, temporal float64, lexical bool) Predictor {
	return Predictor{
		Name: name,
		Doc:  doc,
		Open: func(m *Memory) (Ranker, error) {
			return func(file string) ([]string, error) {
				n, ok := m.FileNode(file)
				if !ok {
					return nil, nil
				}
				p := engines.DefaultRelatedParams()
				p.TopK, p.Kind, p.Temporal, p.Lexical = 0, "file", temporal, lexical
				rs, err := m.Engine.Related([]engines.Seed{{Node: n, Score: 1}}, p)
				if err != nil {
					return nil, err
				}
				var out []string
				for _, r := range rs {
					if f, ok := m.FilePath(r.Node); ok && !strings.EqualFold(f, file) {
						out = append(out, f)
					}
				}
				return out, nil
			}, nil
		},
	}
}
