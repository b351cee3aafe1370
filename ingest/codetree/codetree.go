// Package codetree ingests a whole code tree: Go through ingest's
// type-checked path and Python, TypeScript, JavaScript and Rust through
// tree-sitter, merged into one graph and written as one revision (SPEC.md
// §9). It is what `memctl ingest code|LANG` and the MCP `ingest` tool run.
//
// Invariants: a tree whose per-language hashes match the last ingest is
// not re-read (unless Force) and writes nothing; a language that is read
// replaces exactly the nodes and edges that language owns; a failure
// leaves the store as it was.
package codetree

import (
	"fmt"
	"strings"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/memctl/memctl/lmdbstore"
)

// Options configures an ingest.
type Options struct {
	// Langs are the tree-sitter languages to read (treesitter.TreeSitterLanguages
	// for all of them).
	Langs []string
	// WithGo also reads Go (type-checked) when the tree has Go files or an
	// earlier ingest left Go nodes to update.
	WithGo     bool
	SyntaxOnly bool // Go: resolve names from syntax alone
	Offline    bool // Go: download nothing (ingest.GoOptions.Offline)
	Force      bool // re-read trees whose hashes match the last ingest
	Walk       ingest.WalkOptions
	Meta       lmdbstore.WriteMeta
	Progress   func(ingest.Progress) // nil: none
}

// Lang is one language of a Summary (SPEC.md §9.6, `--json`).
type Lang struct {
	Lang        string `json:"lang"`
	Files       int    `json:"files"`
	Symbols     int    `json:"symbols"`
	Edges       int    `json:"edges"`
	Unresolved  int    `json:"unresolved"`
	ParseErrors int    `json:"parse_errors"`
	Unchanged   bool   `json:"unchanged"`
	Mode        string `json:"mode,omitempty"`
}

// Summary is what an ingest read and wrote (SPEC.md §9.6, `--json`).
type Summary struct {
	Dir          string   `json:"dir"`
	Languages    []Lang   `json:"languages"`
	Unchanged    bool     `json:"unchanged"`
	Nodes        int      `json:"nodes"`
	Edges        int      `json:"edges"`
	Rev          uint64   `json:"rev"`
	NodesPut     int      `json:"nodes_put"`
	NodesDeleted int      `json:"nodes_deleted"`
	EdgesPut     int      `json:"edges_put"`
	EdgesDeleted int      `json:"edges_deleted"`
	Seconds      float64  `json:"seconds"`
	LoadErrors   []string `json:"load_errors"`
	// Fallbacks name the Go packages read from syntax although
	// type-checking was asked for, why, and the fix.
	Fallbacks []ingest.Fallback `json:"fallbacks"`
}

// DirError: the tree could not be read (not a directory, unreadable); the
// store is untouched.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string { return fmt.Sprintf("%s: %v", e.Dir, e.Err) }
func (e *DirError) Unwrap() error { return e.Err }

// Ingest reads dir and writes what changed as one revision. The returned
// WriteStats are zero when nothing was written.
func Ingest(s *lmdbstore.Store, dir string, o Options) (Summary, ingest.WriteStats, error) {
	out := Summary{Dir: dir, LoadErrors: []string{}, Languages: []Lang{}, Fallbacks: []ingest.Fallback{}}
	var stats ingest.WriteStats
	g := ingest.NewGraph()
	var written []string

	if o.WithGo {
		stored, err := ingest.StoredTreeHash(s)
		if err != nil {
			return out, stats, err
		}
		has, err := ingest.HasGoFiles(dir, o.Walk)
		if err != nil {
			return out, stats, &DirError{dir, err}
		}
		if has || stored != "" {
			opts := ingest.GoOptions{WalkOptions: o.Walk, SyntaxOnly: o.SyntaxOnly, Offline: o.Offline, Progress: o.Progress}
			if !o.Force {
				opts.SkipIfTreeHash = stored
			}
			res, err := ingest.ExtractGo(dir, opts)
			if err != nil {
				return out, stats, &DirError{dir, err}
			}
			out.LoadErrors = append(out.LoadErrors, res.LoadErrors...)
			out.Fallbacks = append(out.Fallbacks, res.Fallbacks...)
			l := Lang{Lang: ingest.LangGo, Files: res.Files, Unchanged: res.Unchanged, Mode: GoMode(res),
				Unresolved: res.Unresolved}
			if !res.Unchanged {
				mergeGraph(g, res.Graph)
				written = append(written, ingest.LangGo)
				l.Symbols, l.Edges = countGo(res.Graph)
			}
			out.Languages = append(out.Languages, l)
		}
	}

	opts := treesitter.Options{WalkOptions: o.Walk, Progress: o.Progress, OmitAbsent: o.WithGo,
		SkipIfTreeHash: make(map[string]string)}
	for _, lang := range o.Langs {
		h, err := ingest.StoredLangTreeHash(s, lang)
		if err != nil {
			return out, stats, err
		}
		if h != "" {
			opts.SkipIfTreeHash[lang] = h
		}
	}
	if o.Force {
		opts.SkipIfTreeHash = nil
	}
	res, err := treesitter.Extract(dir, o.Langs, opts)
	if err != nil {
		return out, stats, &DirError{dir, err}
	}
	mergeGraph(g, res.Graph)
	written = append(written, res.Extracted...)
	for _, l := range res.Langs {
		out.Languages = append(out.Languages, Lang{Lang: l.Lang, Files: l.Files, Symbols: l.Symbols, Edges: l.Edges,
			Unresolved: l.Unresolved, ParseErrors: l.ParseErrors, Unchanged: l.Unchanged})
	}

	out.Unchanged = len(written) == 0
	if !out.Unchanged {
		out.Nodes, out.Edges = g.NumNodes(), g.NumEdges()
		if stats, err = ingest.WriteCode(s, g, written, o.Meta, o.Progress); err != nil {
			return out, stats, err
		}
	}
	out.Rev = uint64(stats.Commit.Rev)
	out.NodesPut, out.NodesDeleted = stats.NodesPut, stats.NodesDeleted
	out.EdgesPut, out.EdgesDeleted = stats.EdgesPut, stats.EdgesDeleted
	return out, stats, nil
}

// GoMode names how Go was resolved: "type-checked", "syntax-only" or the
// mix.
func GoMode(res *ingest.GoResult) string {
	switch res.Mode {
	case ingest.ModeTyped:
		return "type-checked"
	case ingest.ModeSyntax:
		return "syntax-only"
	}
	return fmt.Sprintf("%d type-checked, %d syntax-only", res.TypedPackages, res.SyntaxPackages)
}

// mergeGraph adds the nodes and edges of src to dst.
func mergeGraph(dst, src *ingest.Graph) {
	if src == nil {
		return
	}
	src.EachNode(dst.AddNode)
	src.EachEdge(dst.AddEdge)
}

// countGo counts the symbols of a Go graph and the edges leaving its
// nodes other than directories.
func countGo(g *ingest.Graph) (symbols, edges int) {
	g.EachNode(func(n ingest.Node) {
		if n.Type == ingest.TypeSymbol {
			symbols++
		}
	})
	g.EachEdge(func(e ingest.Edge) {
		if !strings.HasPrefix(e.Src, "dir:") {
			edges++
		}
	})
	return symbols, edges
}
