// Package precise is `ingest code --precise` (SPEC.md §9.12): it runs the
// SCIP indexers installed for the languages of a tree (scip-go,
// scip-python, scip-typescript, rust-analyzer) and lets their indexes
// decide the calls, references and implements of the files they cover,
// on top of the syntax graph ingest code extracted.
//
// Invariants:
//   - One source of truth per file and revision: a file an index covers
//     has exactly the index's resolved edges (and is marked precise, with
//     no unresolved count); every other file keeps the syntax graph's.
//   - Nodes are the syntax graph's, under ingest code's keys, plus the
//     functions, methods and types only the index defines: switching
//     between precise and syntax mode moves no key the syntax graph has.
//   - A language whose indexer is missing, fails, or writes no usable
//     index stays on syntax, and the Lang result says why.
package precise

import (
	"slices"
	"time"

	"github.com/memctl/memctl/ingest"
)

// Choice is the indexer a language would be read by.
type Choice struct {
	Indexer *Indexer
	Exe     string // "" when Err is set
	Err     error  // why there is none (ErrNotFound, a bad flag or variable)
}

// Tool is the indexer's name, "" when there is none: what the ingest:LANG
// payload's `precise` field records after a precise read.
func (c Choice) Tool() string {
	if c.Indexer == nil || c.Err != nil {
		return ""
	}
	return c.Indexer.Name
}

// Plan finds the indexer of each language.
func (o Options) Plan(langs []string) map[string]Choice {
	out := make(map[string]Choice, len(langs))
	for _, l := range langs {
		ix := IndexerFor(l)
		if ix == nil {
			out[l] = Choice{Err: ErrNoIndexer}
			continue
		}
		exe, err := o.Find(ix)
		out[l] = Choice{Indexer: ix, Exe: exe, Err: err}
	}
	return out
}

// ErrNoIndexer: no SCIP indexer is known for the language.
var ErrNoIndexer = errorString("no SCIP indexer known for the language")

type errorString string

func (e errorString) Error() string { return string(e) }

// Lang is what precise mode did for one language (`--json` "precise").
type Lang struct {
	Lang    string `json:"lang"`
	Indexer string `json:"indexer,omitempty"`
	Version string `json:"version,omitempty"`
	// Files are the language's files; Precise those the index covered.
	Files   int `json:"files"`
	Precise int `json:"precise"`
	// Fallback says why the language, or its files the index did not
	// cover, stayed on syntax ("" when the index covered every file).
	Fallback string  `json:"fallback,omitempty"`
	Seconds  float64 `json:"seconds"`
	// Unchanged: the language's tree hash and indexer are those of the
	// last ingest, so it was neither read nor indexed; Indexer is the
	// one that read it then ("" and Fallback set: syntax).
	Unchanged bool `json:"unchanged,omitempty"`
}

// Result is a graph after Apply and what each language got.
type Result struct {
	Graph *ingest.Graph
	Langs []Lang // in ingest.Languages order
	Stats map[string]*LangStats
}

// Run indexes dir with the planned indexer of each of langs (languages
// extracted this run; one run per indexer, scip-typescript covering both
// TypeScript and JavaScript) and applies the indexes to g.
func Run(dir string, g *ingest.Graph, langs []string, plan map[string]Choice, progress func(ingest.Progress)) Result {
	res := Result{Graph: g, Stats: make(map[string]*LangStats)}
	// A language extracted only to delete what an earlier ingest wrote
	// (no file left) has nothing to index.
	langs = slices.DeleteFunc(slices.Clone(langs), func(l string) bool { return filesOf(g, l) == 0 })
	done := make(map[string]bool)
	for _, l := range ingest.Languages {
		if !slices.Contains(langs, l) || done[l] {
			continue
		}
		c := plan[l]
		group := []string{l}
		if c.Indexer != nil {
			group = nil
			for _, m := range c.Indexer.Langs {
				if slices.Contains(langs, m) {
					group = append(group, m)
				}
			}
		}
		for _, m := range group {
			done[m] = true
		}
		if c.Err != nil || c.Indexer == nil {
			for _, m := range group {
				res.Langs = append(res.Langs, Lang{Lang: m, Indexer: nameOf(c), Files: filesOf(g, m), Fallback: c.Err.Error()})
			}
			continue
		}
		if progress != nil {
			progress(ingest.Progress{Phase: "indexing (" + c.Indexer.Name + ")"})
		}
		start := time.Now()
		ix, err := run(c.Indexer, c.Exe, dir)
		secs := time.Since(start).Seconds()
		if err != nil {
			for _, m := range group {
				res.Langs = append(res.Langs, Lang{Lang: m, Indexer: c.Indexer.Name, Files: filesOf(g, m), Fallback: err.Error(), Seconds: secs})
			}
			continue
		}
		var stats map[string]*LangStats
		res.Graph, stats = Apply(res.Graph, ix, group, c.Indexer.Name)
		for _, m := range group {
			st := stats[m]
			res.Stats[m] = st
			l := Lang{Lang: m, Indexer: c.Indexer.Name, Version: ix.ToolVersion, Files: st.Files, Precise: st.Covered, Seconds: secs}
			switch {
			case st.Covered == 0:
				l.Fallback = c.Indexer.Name + ": the index covers none of the language's files"
			case st.Covered < st.Files:
				l.Fallback = c.Indexer.Name + ": the index does not cover every file; the others are read from syntax"
			}
			res.Langs = append(res.Langs, l)
		}
	}
	slices.SortStableFunc(res.Langs, func(a, b Lang) int {
		return slices.Index(ingest.Languages, a.Lang) - slices.Index(ingest.Languages, b.Lang)
	})
	return res
}

func nameOf(c Choice) string {
	if c.Indexer == nil {
		return ""
	}
	return c.Indexer.Name
}

// filesOf counts the file nodes of a language.
func filesOf(g *ingest.Graph, lang string) int {
	n := 0
	g.EachNode(func(nd ingest.Node) {
		if nd.Type == ingest.TypeFile && ownerOf(nd) == lang {
			n++
		}
	})
	return n
}
