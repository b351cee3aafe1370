package scip

import (
	"cmp"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/ingest"
	scippb "github.com/sourcegraph/scip/bindings/go/scip"
)

// filePayload is a file node written by `ingest scip` (SPEC.md §9.7):
// ingest's file payload fields, and indexer, which marks the share.
type filePayload struct {
	Path    string `json:"path"`
	Lang    string `json:"lang,omitempty"`
	Hash    string `json:"hash"`
	Test    bool   `json:"test,omitempty"`
	Indexer string `json:"indexer"`
}

// symbolPayload is ingest.SymbolPayload and indexer.
type symbolPayload struct {
	Package   string `json:"package"`
	Name      string `json:"name"`
	Recv      string `json:"recv,omitempty"`
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
	Exported  bool   `json:"exported,omitempty"`
	Test      bool   `json:"test,omitempty"`
	Indexer   string `json:"indexer"`
}

type packagePayload struct {
	ImportPath string `json:"import_path"`
	External   bool   `json:"external,omitempty"`
	Lang       string `json:"lang,omitempty"`
	Indexer    string `json:"indexer"`
}

type ingestPayload struct {
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	ProjectRoot string `json:"project_root"`
	Documents   int    `json:"documents"`
	Indexer     string `json:"indexer"`
}

// IngestKey is the node recording the last import by an indexer
// ("ingest:scip:scip-go").
func IngestKey(tool string) string { return "ingest:scip:" + tool }

// docLang is a document's language: SCIP's name lower-cased, else by
// extension; TSX/JSX count as TypeScript/JavaScript.
func docLang(d Document) string {
	l := strings.ToLower(d.Language)
	switch l {
	case "typescriptreact":
		return ingest.LangTypeScript
	case "javascriptreact":
		return ingest.LangJavaScript
	case "":
	default:
		return l
	}
	switch path.Ext(d.Path) {
	case ".go":
		return ingest.LangGo
	case ".py":
		return ingest.LangPython
	case ".ts", ".tsx", ".mts", ".cts":
		return ingest.LangTypeScript
	case ".js", ".jsx", ".mjs", ".cjs":
		return ingest.LangJavaScript
	case ".rs":
		return ingest.LangRust
	}
	return ""
}

// Keys maps the index's defined symbols onto memctl keys.
type Keys struct {
	sym  map[string]string // symbol → sym: key
	def  map[string]Def    // symbol → the definition the node describes
	lang map[string]string // document path → language
}

// NewKeys names every defined symbol that gets a node: the first
// definition (by path, then position) describes it.
func NewKeys(ix *Index) *Keys {
	k := &Keys{sym: make(map[string]string), def: make(map[string]Def), lang: make(map[string]string)}
	for _, d := range ix.Documents {
		k.lang[d.Path] = docLang(d)
	}
	for sym, defs := range ix.Defs {
		d := slices.MinFunc(defs, func(a, b Def) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return cmp.Or(cmp.Compare(a.Range.StartLine, b.Range.StartLine), cmp.Compare(a.Range.StartChar, b.Range.StartChar))
		})
		s, err := ParseSymbol(sym)
		if err != nil {
			continue
		}
		key, isPkg, ok := keyOf(s, k.lang[d.Path])
		if !ok || isPkg {
			continue
		}
		k.sym[sym], k.def[sym] = key, d
	}
	return k
}

// Key is the sym: key of a defined symbol ("" when it has no node).
func (k *Keys) Key(sym string) string { return k.sym[sym] }

// Caller is the key of a reference's caller: its symbol's, or the file.
func (k *Keys) Caller(r Ref) string {
	if r.Caller == "" {
		return ingest.FileKey(r.Path)
	}
	return k.sym[r.Caller]
}

// IsFuncSymbol reports whether sym names a function or method.
func IsFuncSymbol(ix *Index, sym string) bool {
	defs := ix.Defs[sym]
	return len(defs) > 0 && defs[0].Desc.IsFunc()
}

// IsTypeSymbol reports whether sym names a type.
func IsTypeSymbol(ix *Index, sym string) bool {
	defs := ix.Defs[sym]
	return len(defs) > 0 && defs[0].Desc.Suffix == scippb.Descriptor_Type
}

// Graph builds the code graph of an index (SPEC.md §9.7).
func Graph(ix *Index) *ingest.Graph {
	g := ingest.NewGraph()
	keys := NewKeys(ix)
	indexer := ix.Tool
	docs := make(map[string]Document, len(ix.Documents))
	for _, d := range ix.Documents {
		docs[d.Path] = d
		g.AddNode(ingest.Node{Key: ingest.FileKey(d.Path), Type: ingest.TypeFile, Payload: ingest.MustJSON(filePayload{
			Path: d.Path, Lang: docLang(d), Hash: d.Hash, Test: isTestPath(d.Path), Indexer: indexer})})
	}
	targets := make(map[string]bool) // implemented types: interfaces
	for _, r := range ix.Implements {
		targets[r.To] = true
	}
	for sym, key := range keys.sym {
		d := keys.def[sym]
		s, _ := ParseSymbol(sym)
		ns, rest, _ := split(s.Descriptors)
		p := symbolPayload{Name: d.Desc.Name, Path: d.Path, LineStart: d.Line(), LineEnd: d.Line(),
			Test: isTestPath(d.Path), Indexer: indexer}
		var nsNames []string
		for _, n := range ns {
			nsNames = append(nsNames, n.Name)
		}
		p.Package = strings.Join(nsNames, "/")
		if s.Scheme == "scip-python" {
			p.Package = strings.Join(nsNames, ".")
		}
		if d.HasEnclosing {
			p.LineEnd = int(d.Enclosing.EndLine) + 1
		}
		if len(rest) >= 2 && rest[len(rest)-2].Suffix == scippb.Descriptor_Type {
			p.Recv = rest[len(rest)-2].Name
		}
		switch d.Desc.Suffix {
		case scippb.Descriptor_Method, scippb.Descriptor_Macro:
			p.Kind = ingest.KindFunc
			if p.Recv != "" {
				p.Kind = ingest.KindMethod
			}
		case scippb.Descriptor_Type:
			p.Kind = ingest.KindType
			if targets[sym] {
				p.Kind = ingest.KindInterface
			}
		default:
			p.Kind = ingest.KindVar
		}
		if keys.lang[d.Path] == ingest.LangGo {
			r, _ := utf8.DecodeRuneInString(p.Name)
			p.Exported = unicode.IsUpper(r)
		}
		g.AddNode(ingest.Node{Key: key, Type: ingest.TypeSymbol, Payload: ingest.MustJSON(p)})
		file := ingest.FileKey(d.Path)
		g.AddEdge(ingest.Edge{Src: file, Rel: ingest.RelDefines, Dst: key})
		g.AddEdge(ingest.Edge{Src: file, Rel: ingest.RelContains, Dst: key})
	}
	for _, r := range ix.Refs {
		src, dst := keys.Caller(r), keys.Key(r.Symbol)
		if src == "" || dst == "" || src == dst {
			continue
		}
		rel := ingest.RelReferences
		if IsFuncSymbol(ix, r.Symbol) {
			rel = ingest.RelCalls
		}
		g.AddEdge(ingest.Edge{Src: src, Rel: rel, Dst: dst})
	}
	for _, r := range ix.Implements {
		if !IsTypeSymbol(ix, r.From) || !IsTypeSymbol(ix, r.To) {
			continue
		}
		if a, b := keys.Key(r.From), keys.Key(r.To); a != "" && b != "" && a != b {
			g.AddEdge(ingest.Edge{Src: a, Rel: ingest.RelImplements, Dst: b})
		}
	}
	addImports(g, ix, keys)
	g.AddNode(ingest.Node{Key: IngestKey(ix.Tool), Type: ingest.TypeIngest, Payload: ingest.MustJSON(ingestPayload{
		Tool: ix.Tool, ToolVersion: ix.ToolVersion, ProjectRoot: ix.ProjectRoot, Documents: len(ix.Documents), Indexer: indexer})})
	return g
}

// addImports writes file → module edges: to the file that defines the
// module when the index has it (Python, TypeScript), else, for Go, to the
// package (pkg:<import path>, external when no document's package clause
// names it).
func addImports(g *ingest.Graph, ix *Index, keys *Keys) {
	own := make(map[string]string) // document → its own Go package symbol (the package clause comes first)
	inTree := make(map[string]bool)
	for _, r := range ix.Modules {
		if _, ok := own[r.Path]; !ok && keys.lang[r.Path] == ingest.LangGo {
			own[r.Path] = r.Symbol
			inTree[r.Symbol] = true
		}
	}
	for _, r := range ix.Modules {
		file := ingest.FileKey(r.Path)
		if defs := ix.Defs[r.Symbol]; len(defs) > 0 {
			if defs[0].Path != r.Path {
				g.AddEdge(ingest.Edge{Src: file, Rel: ingest.RelImports, Dst: ingest.FileKey(defs[0].Path)})
			}
			continue
		}
		if keys.lang[r.Path] != ingest.LangGo || own[r.Path] == r.Symbol {
			continue
		}
		s, err := ParseSymbol(r.Symbol)
		if err != nil {
			continue
		}
		key, isPkg, ok := keyOf(s, ingest.LangGo)
		if !ok || !isPkg {
			continue
		}
		g.AddNode(ingest.Node{Key: key, Type: ingest.TypePackage, Payload: ingest.MustJSON(packagePayload{
			ImportPath: strings.TrimPrefix(key, "pkg:"), External: !inTree[r.Symbol], Indexer: ix.Tool})})
		g.AddEdge(ingest.Edge{Src: file, Rel: ingest.RelImports, Dst: key})
	}
}

// isTestPath: the file-name conventions of SPEC.md §9.3 (Go `_test.go`,
// Python `test_*.py`/`*_test.py`/`conftest.py`, TypeScript/JavaScript
// `*.test.*`/`*.spec.*`/`__tests__/`).
func isTestPath(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, "_test.go"), strings.HasSuffix(base, "_test.py"),
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"), base == "conftest.py",
		strings.Contains(base, ".test."), strings.Contains(base, ".spec."), strings.Contains("/"+p, "/__tests__/"):
		return true
	}
	return false
}

// DocLang is the memctl language of a document (SPEC.md §9.11).
func DocLang(d Document) string { return docLang(d) }
