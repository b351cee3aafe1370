package eval

import (
	"strings"

	"github.com/memctl/memctl/engines"
)

// Activate is memctl's own answer: `memctl activate --files file:F` with
// the defaults (the related profile), every activated file in rank order.
func Activate() Predictor {
	return activate("activate", "memctl activate --files from the file (related profile, defaults)", engines.DefaultRelatedTemporal)
}

// ActivateStatic is Activate without the temporal term (--temporal 0): it
// measures what the git recency adds.
func ActivateStatic() Predictor {
	return activate("activate-static", "memctl activate --files --temporal 0 (no recency term)", 0)
}

func activate(name, doc string, temporal float64) Predictor {
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
				p.TopK, p.Kind, p.Temporal = 0, "file", temporal
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
