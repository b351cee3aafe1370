// Package treesitter reads the languages ingest has no type checker for —
// Python, TypeScript, JavaScript and Rust — with tree-sitter grammars and
// builds the same ingest.Graph as Go's ingest (SPEC.md §9): file, pkg: and
// sym: nodes keyed with the language's tag, and the code relations between
// them, resolved from syntax alone (what cannot be resolved is dropped and
// counted, never guessed).
//
// Extract walks the tree (walk.go), hashes every file, parses the files of
// the languages whose tree hash changed on a worker pool (parse.go: one
// parser per grammar and worker, one compiled query per grammar), then
// resolves names across each language's files and builds the graph
// (graph.go).
//
// Invariants: the same tree gives the same graph whatever the number of
// workers; a file's facts are extracted from its own bytes only, and
// everything that crosses files happens in the language's resolver.
//
// A new language is one file with one registration: a var of type
// language (its grammars with their extensions and query, config files,
// parser and resolver; python.go, typescript.go and rust.go are the
// models) and its row in languages below. The walker, the parser pool and
// Extract read this table and never switch on a language; the scope
// helpers its parser needs are shared (scope.go). Outside this package a
// language also needs its name and key tag in ingest (ingest.Languages,
// ingest.LangTags).
package treesitter

import (
	"path"
	"reflect"
	"slices"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// language is one tree-sitter front-end: everything the walker, the
// parser pool and Extract select by language.
type language struct {
	name string // ingest.LangPython, …
	// rules is the version of the language's extraction rules, the
	// first line of its tree hash (SPEC.md §9.3): bump it whenever the
	// graph built from the same files changes, so an incremental ingest
	// reads the language again instead of keeping the old graph.
	rules int
	// grammars parse the language's files: a file is parsed with the
	// grammar that lists its extension. The language's files are those
	// with one of these extensions.
	grammars []grammar
	// minified are file-name suffixes of build output among those
	// extensions (".min.js"): such files are not source.
	minified []string
	// configs are the base names of the files that change how the
	// language's imports resolve; they are part of its tree hash.
	configs []string
	// family names the languages that resolve into each other and are
	// extracted together (TypeScript and JavaScript: "ts"); "" for a
	// language on its own. Members of a family share one resolver.
	family string
	// parse extracts one file's facts from its syntax tree (on the
	// worker pool: only the file's own bytes).
	parse func(w *worker, s *src, root *sitter.Node) any
	// facts is the type parse returns: the parse cache file encodes it
	// (cachefile.go).
	facts reflect.Type
	// resolve resolves names across the files of the language's family
	// (in the order of languages) and adds them to the graph.
	resolve func(b *builder, run *runCtx, files []*parsedFile)
	// prepare, when set, reads what the language needs of the whole run
	// before tree hashes are taken; hashNote, when set, is a line of the
	// language's tree hash (what prepare found that changes the graph).
	prepare  func(run *runCtx, files []*parsedFile)
	hashNote func(run *runCtx) string
}

// grammar is one tree-sitter grammar of a language with the query its
// parser runs.
type grammar struct {
	name  string   // unique across languages; names the worker's parser
	exts  []string // the file extensions it parses (".tsx")
	lang  func() *sitter.Language
	query string
}

// languages are the tree-sitter front-ends, in ingest.Languages order: the
// registry every part of the package reads.
var languages = []*language{&python, &typeScript, &javaScript, &rust}

// TreeSitterLanguages are the languages this package extracts.
var TreeSitterLanguages = func() []string {
	var out []string
	for _, l := range languages {
		out = append(out, l.name)
	}
	return out
}()

// languageNamed returns the front-end of lang, nil for none.
func languageNamed(lang string) *language {
	for _, l := range languages {
		if l.name == lang {
			return l
		}
	}
	return nil
}

// langOfFile is the language of a source file by its extension ("" for
// none of the tree-sitter languages).
func langOfFile(name string) string {
	ext := path.Ext(name)
	for _, l := range languages {
		if l.grammarFor(ext) == nil {
			continue
		}
		for _, suf := range l.minified {
			if strings.HasSuffix(name, suf) {
				return ""
			}
		}
		return l.name
	}
	return ""
}

// configLang is the language whose config file has the base name name.
func configLang(name string) (string, bool) {
	for _, l := range languages {
		if slices.Contains(l.configs, name) {
			return l.name, true
		}
	}
	return "", false
}

// grammarFor is the grammar that parses files with extension ext, nil for
// none.
func (l *language) grammarFor(ext string) *grammar {
	for i := range l.grammars {
		if slices.Contains(l.grammars[i].exts, ext) {
			return &l.grammars[i]
		}
	}
	return nil
}

// kin reports whether l and o are extracted and resolved together: the
// same language or the same family.
func (l *language) kin(o *language) bool {
	return l == o || l.family != "" && l.family == o.family
}
