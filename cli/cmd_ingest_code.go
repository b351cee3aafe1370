package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/precise"
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
		Flags: append(append(append(writeFlags(true), walkFlags()...),
			&cli.BoolFlag{Name: "syntax-only", Usage: "do not type-check Go: resolve its names from syntax alone"},
			&cli.BoolFlag{Name: "offline", Usage: "Go: download nothing (GOPROXY=off): packages whose dependencies are not in the module cache are read from syntax"},
			&cli.BoolFlag{Name: "force", Usage: "re-read the tree even if its hashes match the last ingest"},
		), preciseFlags()...),
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

// ingestCodeJSON is the --json summary of `ingest code` and `ingest LANG`.
type ingestCodeJSON = codetree.Summary

func runIngestCode(k *call, verb string, langs []string, withGo bool) error {
	start := time.Now()
	dir := k.args[0]
	var prec *precise.Options
	if withGo {
		var err error
		if prec, err = preciseOptions(k); err != nil {
			return err
		}
	}
	s, err := k.open(false)
	if err != nil {
		return err
	}
	bar := newProgressBar(k.env)
	defer bar.done()
	// Through freshness: the store then follows the tree (SPEC §9.10), so
	// context, the engine commands and the MCP server see later edits.
	res, err := freshness.Ingest(s, dir, freshness.Options{Ingest: codetree.Options{Langs: langs, WithGo: withGo,
		SyntaxOnly: withGo && k.ctx.Bool("syntax-only"), Offline: withGo && k.ctx.Bool("offline"), Force: k.ctx.Bool("force"),
		Walk: walkOptions(k), Meta: k.meta(), Progress: bar.update, Precise: prec}})
	if de := (*codetree.DirError)(nil); errors.As(err, &de) {
		return usageErr("ingest %s %v", verb, de)
	} else if err != nil {
		return err
	}
	out, stats := *res.Summary, res.Stats
	bar.done()
	out.Seconds = time.Since(start).Seconds()
	for _, e := range out.LoadErrors {
		fmt.Fprintf(k.env.Stderr, "memctl: ingest %s: syntax-only fallback: %s\n", verb, e)
	}
	if k.out.json {
		return k.out.record(out)
	}
	if err := k.out.textf("%s\n", codeSummary(verb, dir, out, stats, withGo)); err != nil {
		return err
	}
	for _, l := range append(fallbackLines(out.Fallbacks), preciseLines(out.Precise)...) {
		if err := k.out.textf("%s\n", l); err != nil {
			return err
		}
	}
	return nil
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
			if l.Unresolved > 0 {
				p = fmt.Sprintf("%d files, %d symbols, %d edges, %d unresolved calls (%s)", l.Files, l.Symbols, l.Edges, l.Unresolved, l.Mode)
			}
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
