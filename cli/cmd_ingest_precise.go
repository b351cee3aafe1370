package cli

// `ingest code --precise` (SPEC.md §9.12): the SCIP indexers found on
// PATH, by MEMCTL_SCIP_* variables or by `--indexer NAME=PATH` decide the
// resolved edges of the languages they index.

import (
	"fmt"

	"github.com/memctl/memctl/ingest/precise"
	"github.com/urfave/cli/v2"
)

func preciseFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "precise", Usage: "run the SCIP indexers installed (scip-go, scip-python, scip-typescript, rust-analyzer) and take calls, references and implements from their indexes; languages without one stay on syntax"},
		&cli.StringSliceFlag{Name: "indexer", Usage: "with --precise: the executable of an indexer, `NAME=PATH` (repeatable; else $MEMCTL_SCIP_GO, $MEMCTL_SCIP_PYTHON, $MEMCTL_SCIP_TYPESCRIPT, $MEMCTL_RUST_ANALYZER, else PATH)"},
	}
}

// preciseOptions reads --precise and --indexer; nil without --precise.
func preciseOptions(k *call) (*precise.Options, error) {
	if k.ctx.IsSet("indexer") && !k.ctx.Bool("precise") {
		return nil, usageErr("%s: --indexer needs --precise", k.ctx.Command.FullName())
	}
	if !k.ctx.Bool("precise") {
		return nil, nil
	}
	paths, err := precise.ParsePaths(k.ctx.StringSlice("indexer"))
	if err != nil {
		return nil, usageErr("%s: %v", k.ctx.Command.FullName(), err)
	}
	return &precise.Options{Paths: paths, Getenv: k.env.Getenv, LookPath: precise.LookPathIn(k.env.Getenv("PATH"))}, nil
}

// preciseLines are the text lines after the summary: one per language
// read with --precise.
func preciseLines(langs []precise.Lang) []string {
	var out []string
	for _, l := range langs {
		switch {
		case l.Unchanged && l.Fallback == "":
			out = append(out, fmt.Sprintf("precise: %s: %s, unchanged", l.Lang, l.Indexer))
		case l.Unchanged:
			out = append(out, fmt.Sprintf("syntax: %s: %s (unchanged)", l.Lang, l.Fallback))
		case l.Precise == 0:
			out = append(out, fmt.Sprintf("syntax: %s: %s", l.Lang, l.Fallback))
		case l.Precise < l.Files:
			out = append(out, fmt.Sprintf("precise: %s: %s %s, %d of %d files (%d read from syntax: not in the index); %.2fs",
				l.Lang, l.Indexer, l.Version, l.Precise, l.Files, l.Files-l.Precise, l.Seconds))
		default:
			out = append(out, fmt.Sprintf("precise: %s: %s %s, %d files; %.2fs", l.Lang, l.Indexer, l.Version, l.Files, l.Seconds))
		}
	}
	return out
}
