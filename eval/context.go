package eval

import (
	"fmt"
	"strings"
	"time"

	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/ingest"
)

// Budgeted predictors answer with what fits a token budget, not a ranked
// top K: their recall is the share of the commit's other changed files
// that appear in what an agent would read (SPEC.md §11.2).

// ContextPack reads only what `memctl context FILE --budget B` renders:
// the files it names (Related files, the files of Related symbols, the
// files of Changed and Attempted operations), in the order they appear.
func ContextPack(budget int) Predictor {
	return Predictor{
		Name:     fmt.Sprintf("context-%dk", budget/1000),
		Doc:      fmt.Sprintf("the files a memctl context pack of %d tokens names", budget),
		Budgeted: true,
		Open: func(m *Memory) (Ranker, error) {
			a := contextpack.New(m.Store, contextpack.Options{SnapshotPath: "-", Clock: func() time.Time { return m.Time }})
			m.onClose(func() { a.Close() })
			return func(file string) ([]string, error) {
				if _, known := m.FileNode(file); !known {
					return nil, nil
				}
				p, err := a.Assemble(contextpack.Request{Targets: []string{ingest.FileKey(file)}, Budget: budget})
				if err != nil {
					return nil, err
				}
				return packFiles(p), nil
			}, nil
		},
	}
}

// packFiles lists the repository files a pack names, in rendering order.
func packFiles(p *contextpack.Pack) []string {
	var out []string
	seen := map[string]bool{}
	add := func(key string) {
		if path, ok := strings.CutPrefix(key, "file:"); ok && !seen[path] {
			seen[path] = true
			out = append(out, path)
		}
	}
	for _, pol := range p.Applies {
		add(pol.Anchor)
	}
	for _, n := range p.Related {
		if n.Kind == "symbol" {
			add("file:" + n.Path)
		} else {
			add(n.Key)
		}
	}
	for _, c := range p.Changed {
		add(c.Key)
		for _, peer := range c.Peers {
			add(peer)
		}
	}
	for _, at := range p.Attempted {
		for _, c := range at.Changes {
			add(c.Key)
			for _, peer := range c.Peers {
				add(peer)
			}
		}
	}
	return out
}

// RepoMap is the Aider-style baseline at the same budget: files ranked by
// PageRank personalised on the query (the pagerank predictor), each
// rendered as Aider's repository map does — its path, then one line per
// symbol it defines — until the next file would pass the budget in
// o200k tokens.
func RepoMap(budget int) Predictor {
	return Predictor{
		Name:     fmt.Sprintf("repomap-%dk", budget/1000),
		Doc:      fmt.Sprintf("Aider-style repository map (personalised PageRank, paths and definitions) cut to %d tokens", budget),
		Budgeted: true,
		Open: func(m *Memory) (Ranker, error) {
			fg, err := buildFileGraph(m)
			if err != nil {
				return nil, err
			}
			defs, err := definedNames(m)
			if err != nil {
				return nil, err
			}
			enc := bpe.O200kBase()
			return func(file string) ([]string, error) {
				ranked, err := fg.rank(file)
				if err != nil {
					return nil, err
				}
				used := 0
				var out []string
				for _, f := range ranked {
					if f == file {
						continue
					}
					var b strings.Builder
					b.WriteString(f + ":\n")
					for _, d := range defs[f] {
						b.WriteString("│ " + d + "\n")
					}
					cost := enc.Count(b.String())
					if used+cost > budget {
						break
					}
					used += cost
					out = append(out, f)
				}
				return out, nil
			}, nil
		},
	}
}

// definedNames maps each file path to the short names of the symbols it
// defines (what a repository map lists under the file).
func definedNames(m *Memory) (map[string][]string, error) {
	g := m.Graph
	defines, ok, err := g.RelationByName(ingest.RelDefines)
	if err != nil || !ok {
		return map[string][]string{}, err
	}
	out := map[string][]string{}
	for _, f := range m.Files() {
		n, _ := m.FileNode(f)
		dsts, rels, _, err := g.OutChecked(n)
		if err != nil {
			return nil, err
		}
		for i, d := range dsts {
			if rels[i] != defines.ID {
				continue
			}
			key, err := g.Key(csr.NodeIndex(d))
			if err != nil {
				return nil, err
			}
			name := key
			if i := strings.LastIndexAny(name, "/"); i >= 0 {
				name = name[i+1:]
			}
			out[f] = append(out[f], strings.TrimPrefix(name, "sym:"))
		}
	}
	return out, nil
}
