package treesitter

import (
	"path"

	"github.com/memctl/memctl/ingest"
)

// LangOf is the language whose ingest reads a source file of that name (a
// base name or a slash path; only the base name is looked at):
// ingest.LangGo for *.go, a tree-sitter language by its grammars'
// extensions (build output such as *.min.js excluded), "" for none. It is
// the rule the walks apply to file names; directories are theirs.
func LangOf(name string) string {
	name = path.Base(name)
	if path.Ext(name) == ".go" {
		return ingest.LangGo
	}
	return langOfFile(name)
}
