package treesitter

import sitter "github.com/tree-sitter/go-tree-sitter"

const tsQuery = `(call_expression function: (_) @callee)
`
const tsTypeQuery = `(type_identifier) @type
`
const jsParamQuery = ``

type tsFile struct{}

func parseTS(w *worker, s *src, root *sitter.Node) *tsFile { return &tsFile{} }

func resolveTS(b *builder, run *runCtx, files []*parsedFile) {}
