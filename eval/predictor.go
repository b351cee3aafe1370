package eval

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/memctl/memctl/roles"
)

// Ranker answers one query on one memory: the files related to file (a
// path relative to the evaluated directory), best first. It may return any
// number of paths, files that are not source and the query itself
// included: the evaluation keeps the first K source files other than the
// query. A file the
// memory does not know gives an empty answer, not an error.
type Ranker func(file string) ([]string, error)

// Predictor is one way of answering "which files are related to this one?".
// Open is called once per memory (once per replayed commit) and may
// precompute what its queries share.
type Predictor struct {
	Name string // unique, lower case: the table row and the JSON "predictor"
	Doc  string // one line: what it ranks by
	Open func(m *Memory) (Ranker, error)
	// Budgeted predictors answer with what fits a token budget: every
	// source file of the answer counts (no top-K cut), so recall is the
	// share of the wanted files the answer shows.
	Budgeted bool
}

// Predictors returns the built-in predictors a run scores by default:
// memctl's answer first, then the baselines (SPEC.md §11.2).
func Predictors() []Predictor {
	return []Predictor{Activate(), CoChange(), SameDir(), PersonalizedPageRank(), Lexical()}
}

// Extra returns the predictors a run scores only when asked by name:
// ablations of memctl's answer.
func Extra() []Predictor {
	return []Predictor{ActivateGraph(), ActivateStatic(), ContextPack(2000), ContextPack(8000), RepoMap(2000), RepoMap(8000)}
}

// PickPredictors selects predictors by name from Predictors and Extra, in
// the order given; no names selects Predictors.
func PickPredictors(names []string) ([]Predictor, error) {
	if len(names) == 0 {
		return Predictors(), nil
	}
	all := append(Predictors(), Extra()...)
	var out []Predictor
	for _, n := range names {
		i := slices.IndexFunc(all, func(p Predictor) bool { return p.Name == n })
		if i < 0 {
			var known []string
			for _, p := range all {
				known = append(known, p.Name)
			}
			return nil, fmt.Errorf("unknown predictor %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// byChanges orders candidate paths by change count descending, then path.
func byChanges(m *Memory, paths []string) {
	slices.SortStableFunc(paths, func(a, b string) int {
		ca, cb := m.History(a).Changes, m.History(b).Changes
		if ca != cb {
			return cb - ca
		}
		return strings.Compare(a, b)
	})
}

// SameDir ranks the other files of the query's directory by how often git
// changed them (ties by path): the "neighbouring files" baseline.
func SameDir() Predictor {
	return Predictor{
		Name: "samedir",
		Doc:  "files of the same directory, most changed first",
		Open: func(m *Memory) (Ranker, error) {
			byDir := map[string][]string{}
			for _, f := range m.Files() {
				d := path.Dir(f)
				byDir[d] = append(byDir[d], f)
			}
			for _, fs := range byDir {
				byChanges(m, fs)
			}
			return func(file string) ([]string, error) {
				return byDir[path.Dir(file)], nil
			}, nil
		},
	}
}

// CoChange ranks files by the number of past commits that changed them
// together with the query (the co_changed edges of ingest git), ties by
// change count then path: the ROSE-style history baseline.
func CoChange() Predictor {
	return Predictor{
		Name: "cochange",
		Doc:  "files changed together with it most often (co_changed counts)",
		Open: func(m *Memory) (Ranker, error) {
			rel, ok, err := m.Graph.RelationByName(roles.RelCoChanged)
			if err != nil {
				return nil, err
			}
			return func(file string) ([]string, error) {
				n, known := m.FileNode(file)
				if !ok || !known {
					return nil, nil
				}
				counts := map[string]float64{}
				add := func(peers, rels []uint32, ws []float32) {
					for i, p := range peers {
						if rels[i] != rel.ID || !(ws[i] > 0 && ws[i] < 1) {
							continue
						}
						if fp, isFile := m.FilePath(p); isFile {
							w := float64(ws[i])
							counts[fp] += w / (1 - w) // n/(n+1) → n
						}
					}
				}
				ts, rs, ws, err := m.Graph.OutChecked(n)
				if err != nil {
					return nil, err
				}
				add(ts, rs, ws)
				ss, rs, ws, err := m.Graph.InChecked(n)
				if err != nil {
					return nil, err
				}
				add(ss, rs, ws)
				out := make([]string, 0, len(counts))
				for f := range counts {
					out = append(out, f)
				}
				slices.SortFunc(out, func(a, b string) int {
					if ca, cb := counts[a], counts[b]; ca != cb {
						if ca > cb {
							return -1
						}
						return 1
					}
					if ca, cb := m.History(a).Changes, m.History(b).Changes; ca != cb {
						return cb - ca
					}
					return strings.Compare(a, b)
				})
				return out, nil
			}, nil
		},
	}
}
