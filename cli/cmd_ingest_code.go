package cli

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/urfave/cli/v2"
)

// ingestCodeCommand is `ingest code DIR`: every language of the tree, Go
// through `ingest go`'s type-checked path and the others through
// tree-sitter, written as one revision.
func ingestCodeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "code",
		Usage: "ingest every language of DIR (Go, Python, TypeScript, JavaScript, Rust) in one revision",
		Description: "Detects languages by file extension: Go is type-checked as by `ingest go`, the\n" +
			"others are parsed with tree-sitter. Honours .gitignore; skips vendor, node_modules,\n" +
			"virtual environments, build output and hidden directories. Writes what changed\n" +
			"since the last ingest as one revision. Keys and payloads: SPEC.md §9.",
		Args: []string{"DIR"},
		Flags: append(append(writeFlags(true), walkFlags()...),
			&cli.BoolFlag{Name: "syntax-only", Usage: "do not type-check Go: resolve its names from syntax alone"},
			&cli.BoolFlag{Name: "force", Usage: "re-read the tree even if its hashes match the last ingest"},
		),
		Run: func(k *call) error { return runIngestCode(k, "code", treesitter.TreeSitterLanguages, true) },
	})
}

// ingestLangCommand is `ingest python|typescript|javascript|rust DIR`.
func ingestLangCommand(env Env, lang string) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  lang,
		Usage: fmt.Sprintf("ingest the %s files of DIR: files, symbols and their relations (tree-sitter)", lang),
		Description: "Parses with tree-sitter; walks as `ingest code` does. Writes what changed since\n" +
			"the last ingest of this language as one revision. Keys and payloads: SPEC.md §9.",
		Args:  []string{"DIR"},
		Flags: append(append(writeFlags(true), walkFlags()...), &cli.BoolFlag{Name: "force", Usage: "re-read the tree even if its hash matches the last ingest"}),
		Run:   func(k *call) error { return runIngestCode(k, lang, []string{lang}, false) },
	})
}

// ingestLangJSON is one language of the --json summary of `ingest code`.
type ingestLangJSON struct {
	Lang        string `json:"lang"`
	Files       int    `json:"files"`
	Symbols     int    `json:"symbols"`
	Edges       int    `json:"edges"`
	Unresolved  int    `json:"unresolved"`
	ParseErrors int    `json:"parse_errors"`
	Unchanged   bool   `json:"unchanged"`
	Mode        string `json:"mode,omitempty"`
}

// ingestCodeJSON is the --json summary of `ingest code` and `ingest LANG`.
type ingestCodeJSON struct {
	Dir          string           `json:"dir"`
	Languages    []ingestLangJSON `json:"languages"`
	Unchanged    bool             `json:"unchanged"`
	Nodes        int              `json:"nodes"`
	Edges        int              `json:"edges"`
	Rev          uint64           `json:"rev"`
	NodesPut     int              `json:"nodes_put"`
	NodesDeleted int              `json:"nodes_deleted"`
	EdgesPut     int              `json:"edges_put"`
	EdgesDeleted int              `json:"edges_deleted"`
	Seconds      float64          `json:"seconds"`
	LoadErrors   []string         `json:"load_errors"`
}

func runIngestCode(k *call, verb string, langs []string, withGo bool) error {
	start := time.Now()
	if k.env.Getenv == nil || k.env.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	dir := k.args[0]
	s, err := k.open(false)
	if err != nil {
		return err
	}
	force := k.ctx.Bool("force")
	bar := newProgressBar(k.env)
	defer bar.done()
	out := ingestCodeJSON{Dir: dir, LoadErrors: []string{}}
	g := ingest.NewGraph()
	var written []string

	// Go, through its own type-checked path, when the tree has Go files
	// or an earlier ingest left Go nodes to update.
	var goRes *ingest.GoResult
	if withGo {
		stored, err := ingest.StoredTreeHash(s)
		if err != nil {
			return err
		}
		has, err := ingest.HasGoFiles(dir, walkOptions(k))
		if err != nil {
			return usageErr("ingest %s %s: %v", verb, dir, err)
		}
		if has || stored != "" {
			opts := ingest.GoOptions{WalkOptions: walkOptions(k), SyntaxOnly: k.ctx.Bool("syntax-only"), Progress: bar.update}
			if !force {
				opts.SkipIfTreeHash = stored
			}
			if goRes, err = ingest.ExtractGo(dir, opts); err != nil {
				return usageErr("ingest %s %s: %v", verb, dir, err)
			}
			out.LoadErrors = append(out.LoadErrors, goRes.LoadErrors...)
			if !goRes.Unchanged {
				mergeGraph(g, goRes.Graph)
				written = append(written, ingest.LangGo)
			}
		}
	}

	opts := treesitter.Options{WalkOptions: walkOptions(k), Progress: bar.update, OmitAbsent: withGo,
		SkipIfTreeHash: make(map[string]string)}
	for _, lang := range langs {
		h, err := ingest.StoredLangTreeHash(s, lang)
		if err != nil {
			return err
		}
		if h != "" {
			opts.SkipIfTreeHash[lang] = h
		}
	}
	if force {
		opts.SkipIfTreeHash = nil
	}
	res, err := treesitter.Extract(dir, langs, opts)
	if err != nil {
		return usageErr("ingest %s %s: %v", verb, dir, err)
	}
	mergeGraph(g, res.Graph)
	written = append(written, res.Extracted...)

	if goRes != nil {
		lj := ingestLangJSON{Lang: ingest.LangGo, Files: goRes.Files, Unchanged: goRes.Unchanged, Mode: modeText(goRes)}
		if !goRes.Unchanged {
			lj.Symbols, lj.Edges = countGo(goRes.Graph)
		}
		out.Languages = append(out.Languages, lj)
	}
	for _, l := range res.Langs {
		out.Languages = append(out.Languages, ingestLangJSON{Lang: l.Lang, Files: l.Files, Symbols: l.Symbols, Edges: l.Edges,
			Unresolved: l.Unresolved, ParseErrors: l.ParseErrors, Unchanged: l.Unchanged})
	}
	if out.Languages == nil {
		out.Languages = []ingestLangJSON{}
	}
	var stats ingest.WriteStats
	out.Unchanged = len(written) == 0
	if !out.Unchanged {
		out.Nodes, out.Edges = g.NumNodes(), g.NumEdges()
		if stats, err = ingest.WriteCode(s, g, written, k.meta(), bar.update); err != nil {
			return err
		}
	}
	bar.done()
	out.Rev = uint64(stats.Commit.Rev)
	out.NodesPut, out.NodesDeleted = stats.NodesPut, stats.NodesDeleted
	out.EdgesPut, out.EdgesDeleted = stats.EdgesPut, stats.EdgesDeleted
	out.Seconds = time.Since(start).Seconds()
	for _, e := range out.LoadErrors {
		fmt.Fprintf(k.env.Stderr, "memctl: ingest %s: syntax-only fallback: %s\n", verb, e)
	}
	if k.out.json {
		return k.out.record(out)
	}
	return k.out.textf("%s\n", codeSummary(verb, dir, out, stats, withGo))
}

// codeSummary is the text summary line (SPEC.md §9.6).
func codeSummary(verb, dir string, out ingestCodeJSON, stats ingest.WriteStats, multi bool) string {
	if !multi && len(out.Languages) == 1 && out.Unchanged {
		return fmt.Sprintf("ingest %s %s: %d files unchanged since the last ingest; nothing written; %.2fs",
			verb, dir, out.Languages[0].Files, out.Seconds)
	}
	var parts []string
	for _, l := range out.Languages {
		var p string
		switch {
		case l.Unchanged:
			p = fmt.Sprintf("%d files unchanged", l.Files)
		case l.Lang == ingest.LangGo:
			p = fmt.Sprintf("%d files, %d symbols, %d edges (%s)", l.Files, l.Symbols, l.Edges, l.Mode)
		default:
			p = fmt.Sprintf("%d files, %d symbols, %d edges, %d unresolved calls", l.Files, l.Symbols, l.Edges, l.Unresolved)
			if l.ParseErrors > 0 {
				p += fmt.Sprintf(", %d with syntax errors", l.ParseErrors)
			}
		}
		if multi {
			p = l.Lang + ": " + p
		}
		parts = append(parts, p)
	}
	if multi && len(parts) == 0 {
		parts = append(parts, "no source files")
	}
	write := "nothing changed"
	if !out.Unchanged {
		write = fmt.Sprintf("%d nodes, %d edges; %s", out.Nodes, out.Edges, writeText(stats))
	}
	return fmt.Sprintf("ingest %s %s: %s; %s; %.2fs", verb, dir, strings.Join(parts, "; "), write, out.Seconds)
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
