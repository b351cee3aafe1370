package cli

// The ingest commands turn code into memory: `memctl ingest go DIR` (Go
// packages, files and symbols), `memctl ingest code DIR` (every language:
// Go as ingest go does, Python, TypeScript, JavaScript and Rust through
// tree-sitter), `memctl ingest python|typescript|javascript|rust DIR` (one
// language) and `memctl ingest git DIR` (co-change history). Each writes
// at most one revision and nothing when the tree has not changed. SPEC.md
// §9 documents keys, payloads and output.

import (
	"github.com/memctl/memctl/ingest"
	"github.com/urfave/cli/v2"
)

func ingestCommands(env Env) []*cli.Command {
	return []*cli.Command{{
		Name:  "ingest",
		Usage: "turn a code tree into memory (ingest code DIR, ingest go DIR, ingest git DIR, …)",
		Subcommands: []*cli.Command{
			ingestCodeCommand(env),
			ingestGoCommand(env),
			ingestLangCommand(env, ingest.LangPython),
			ingestLangCommand(env, ingest.LangTypeScript),
			ingestLangCommand(env, ingest.LangJavaScript),
			ingestLangCommand(env, ingest.LangRust),
			ingestGitCommand(env),
			ingestScipCommand(env),
		},
	}}
}

// walkFlags choose which directories an ingest enters.
func walkFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "include-vendor", Usage: "also enter vendor directories"},
		&cli.BoolFlag{Name: "include-testdata", Usage: "also enter testdata directories"},
		&cli.BoolFlag{Name: "include-hidden", Usage: "also enter directories starting with . or _"},
	}
}

func walkOptions(k *call) ingest.WalkOptions {
	return ingest.WalkOptions{
		IncludeVendor:   k.ctx.Bool("include-vendor"),
		IncludeTestdata: k.ctx.Bool("include-testdata"),
		IncludeHidden:   k.ctx.Bool("include-hidden"),
	}
}
