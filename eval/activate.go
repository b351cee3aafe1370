package eval

import (
	"strings"

	"github.com/memctl/memctl/engines"
)

// Activate is memctl's own answer: `memctl activate --files file:F` with
// the defaults (the related profile), every activated file in rank order.
func Activate() Predictor {
	return Predictor{
		Name: "activate",
		Doc:  "memctl activate --files from the file (related profile, defaults)",
		Open: func(m *Memory) (Ranker, error) {
			return func(file string) ([]string, error) {
				n, ok := m.FileNode(file)
				if !ok {
					return nil, nil
				}
				p := engines.DefaultRelatedParams()
				p.TopK, p.Kind, p.PerContainer = 0, "file", 0
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
