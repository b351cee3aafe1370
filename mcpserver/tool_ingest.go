package mcpserver

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/precise"
	"github.com/memctl/memctl/ingest/treesitter"
)

// IngestArgs is the input of ingest: `memctl ingest code|LANG DIR`.
type IngestArgs struct {
	Dir             string   `json:"dir" jsonschema:"the code tree to read: an absolute path, or relative to the server's working directory"`
	Languages       []string `json:"languages,omitempty" jsonschema:"read only these: go, python, typescript, javascript, rust (default: every language of the tree, Go type-checked)"`
	Force           bool     `json:"force,omitempty" jsonschema:"re-read the tree even if its hashes match the last ingest"`
	SyntaxOnly      bool     `json:"syntax_only,omitempty" jsonschema:"Go: resolve names from syntax alone, without type-checking"`
	IncludeVendor   bool     `json:"include_vendor,omitempty"`
	IncludeTestdata bool     `json:"include_testdata,omitempty"`
	IncludeHidden   bool     `json:"include_hidden,omitempty"`
	Precise         bool     `json:"precise,omitempty" jsonschema:"run the SCIP indexers installed (scip-go, scip-python, scip-typescript, rust-analyzer: PATH or MEMCTL_SCIP_* of the server) and let their indexes decide calls, references and implements; languages without one stay on syntax and are named"`
	ProvenanceArgs
}

// IngestResult is the answer of ingest: the --json summary of `memctl
// ingest code` (SPEC.md §9.6).
type IngestResult = codetree.Summary

func (s *Server) ingest(_ context.Context, a *IngestArgs) (IngestResult, error) {
	start := time.Now()
	if a.Dir == "" {
		return IngestResult{}, invalidArg("dir is required")
	}
	o := codetree.Options{Langs: treesitter.TreeSitterLanguages, WithGo: true, Force: a.Force, SyntaxOnly: a.SyntaxOnly,
		Walk: ingest.WalkOptions{IncludeVendor: a.IncludeVendor, IncludeTestdata: a.IncludeTestdata, IncludeHidden: a.IncludeHidden},
		Meta: s.meta(a.ProvenanceArgs)}
	if a.Precise {
		// Indexers are found as `ingest code --precise` finds them without
		// --indexer: MEMCTL_SCIP_* then PATH, of the server's environment.
		o.Precise = &precise.Options{}
	}
	if len(a.Languages) > 0 {
		o.Langs, o.WithGo = nil, false
		for _, l := range a.Languages {
			switch {
			case l == ingest.LangGo:
				o.WithGo = true
			case slices.Contains(treesitter.TreeSitterLanguages, l):
				o.Langs = append(o.Langs, l)
			default:
				return IngestResult{}, invalidArg("language %q: want go, python, typescript, javascript or rust", l)
			}
		}
	}
	// Through freshness, as `memctl ingest code`: the store then follows
	// the tree, and the analysis tools refresh it before answering.
	res, err := freshness.Ingest(s.store, a.Dir, freshness.Options{Ingest: o})
	if de := (*codetree.DirError)(nil); errors.As(err, &de) {
		return IngestResult{}, invalidArg("ingest %v", de)
	}
	if err != nil {
		return IngestResult{}, err
	}
	out := *res.Summary
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}
