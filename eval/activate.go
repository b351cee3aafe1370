package eval

import (
	"strings"

	"github.com/memctl/memctl/engines"
)

// Activate is memctl's own answer: `memctl activate file:F` with its
// defaults, every activated file node in rank order.
func Activate() Predictor {
	return Predictor{
		Name: "activate",
		Doc:  "memctl activate from the file (defaults), files in rank order",
		Open: func(m *Memory) (Ranker, error) {
			return func(file string) ([]string, error) {
				n, ok := m.FileNode(file)
				if !ok {
					return nil, nil
				}
				p := engines.DefaultActivationParams()
				p.TopK = 0
				rs, err := m.Engine.Activate([]engines.Seed{{Node: n, Score: 1}}, p)
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
