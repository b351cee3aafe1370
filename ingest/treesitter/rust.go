package treesitter

import sitter "github.com/tree-sitter/go-tree-sitter"

const rsQuery = `(call_expression function: (_) @callee)
`

type rsFile struct{}

func parseRust(w *worker, s *src, root *sitter.Node) *rsFile { return &rsFile{} }

func resolveRust(b *builder, run *runCtx, files []*parsedFile) {}
