package precise

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/scip"
	"github.com/memctl/memctl/lmdbstore"
	scippb "github.com/sourcegraph/scip/bindings/go/scip"
)

// resolved are the relations a precise index decides for the files it
// covers; every other relation (contains, defines, imports, tests) stays
// as the syntax extraction found it.
var resolved = map[string]bool{ingest.RelCalls: true, ingest.RelReferences: true, ingest.RelImplements: true}

// LangStats counts one language of a graph after Apply.
type LangStats struct {
	Files, Covered, Symbols, Edges, Unresolved int
}

// ownerOf is the language owning an extracted node (ingest.OwnerOf).
func ownerOf(n ingest.Node) string {
	return ingest.OwnerOf(lmdbstore.Node{Key: n.Key, Payload: n.Payload})
}

// Apply returns g with the calls, references and implements edges that
// leave the files of langs the index covers (and the symbols those files
// define) replaced by the index's (SPEC.md §9.12). A definition of the
// index is the syntax graph's symbol at its file and line (scip.Matcher);
// a function, method or type the syntax graph lacks gets a node under
// the key ingest code's rules give it. Covered files are marked precise
// (`"precise":tool`, no `unresolved`), and so is the ingest:<lang> node of
// a language with a covered file. g itself is not changed.
func Apply(g *ingest.Graph, ix *scip.Index, langs []string, tool string) (*ingest.Graph, map[string]*LangStats) {
	stats := make(map[string]*LangStats, len(langs))
	inLangs := func(l string) bool { _, ok := stats[l]; return ok }
	for _, l := range langs {
		stats[l] = &LangStats{}
	}
	files := make(map[string]ingest.FilePayload) // path → payload, files of langs
	var cands []scip.Candidate
	symPath := make(map[string]string) // sym key of langs → its file
	g.EachNode(func(n ingest.Node) {
		l := ownerOf(n)
		if !inLangs(l) {
			return
		}
		switch n.Type {
		case ingest.TypeFile:
			var p ingest.FilePayload
			if json.Unmarshal(n.Payload, &p) == nil {
				files[p.Path] = p
				stats[l].Files++
			}
		case ingest.TypeSymbol:
			var p ingest.SymbolPayload
			if json.Unmarshal(n.Payload, &p) == nil {
				cands = append(cands, scip.Candidate{Key: n.Key, Name: p.Name, Path: p.Path, Start: p.LineStart, End: p.LineEnd})
				symPath[n.Key] = p.Path
			}
		}
	})
	covered := make(map[string]bool)
	for _, d := range ix.Documents {
		if _, ok := files[d.Path]; ok {
			covered[d.Path] = true
		}
	}

	out := ingest.NewGraph()
	g.EachNode(out.AddNode)
	keys := mapSymbols(out, ix, cands, files, covered, symPath)

	// Keep every edge but the resolved ones leaving covered code.
	coveredSrc := func(key string) bool {
		if p, ok := strings.CutPrefix(key, "file:"); ok {
			return covered[p]
		}
		p, ok := symPath[key]
		return ok && covered[p]
	}
	g.EachEdge(func(e ingest.Edge) {
		if resolved[e.Rel] && coveredSrc(e.Src) {
			return
		}
		out.AddEdge(e)
	})
	for _, r := range ix.Refs {
		if !covered[r.Path] {
			continue
		}
		src := ingest.FileKey(r.Path)
		if r.Caller != "" {
			src = keys[r.Caller]
		}
		dst := keys[r.Symbol]
		if src == "" || dst == "" || src == dst {
			continue
		}
		rel := ingest.RelReferences
		if scip.IsFuncSymbol(ix, r.Symbol) {
			rel = ingest.RelCalls
		}
		out.AddEdge(ingest.Edge{Src: src, Rel: rel, Dst: dst})
	}
	for _, r := range ix.Implements {
		if !scip.IsTypeSymbol(ix, r.From) || !scip.IsTypeSymbol(ix, r.To) {
			continue
		}
		a, b := keys[r.From], keys[r.To]
		if a != "" && b != "" && a != b && coveredSrc(a) {
			out.AddEdge(ingest.Edge{Src: a, Rel: ingest.RelImplements, Dst: b})
		}
	}

	// Mark what the index decided.
	marked := make(map[string]bool)
	for p := range covered {
		n, _ := out.Node(ingest.FileKey(p))
		out.AddNode(ingest.Node{Key: n.Key, Type: n.Type, Payload: setPrecise(n.Payload, tool)})
		marked[files[p].Lang] = true
		if files[p].Lang == "" {
			marked[ingest.LangGo] = true
		}
	}
	for _, l := range langs {
		if n, ok := out.Node(ingest.IngestKey(l)); ok && marked[l] {
			out.AddNode(ingest.Node{Key: n.Key, Type: n.Type, Payload: setPrecise(n.Payload, tool)})
		}
	}
	count(out, stats, covered)
	return out, stats
}

// mapSymbols maps the index's symbols defined in covered files onto keys
// of g, adding nodes for the functions, methods and types the syntax
// graph lacks.
func mapSymbols(g *ingest.Graph, ix *scip.Index, cands []scip.Candidate, files map[string]ingest.FilePayload,
	covered map[string]bool, symPath map[string]string) map[string]string {
	m := scip.NewMatcher(cands)
	keys := make(map[string]string)
	holds := make(map[string]bool) // symbols that are the caller of a reference
	for _, r := range ix.Refs {
		if r.Caller != "" && covered[r.Path] {
			holds[r.Caller] = true
		}
	}
	for _, sym := range scip.SortedSymbols(ix) {
		var first *scip.Def
		for i, d := range ix.Defs[sym] {
			if !d.Named() || !covered[d.Path] {
				continue
			}
			if k := m.Def(d); k != "" {
				keys[sym] = k
				break
			}
			if first == nil {
				first = &ix.Defs[sym][i]
			}
		}
		if keys[sym] != "" || first == nil {
			continue
		}
		switch first.Desc.Suffix {
		case scippb.Descriptor_Method, scippb.Descriptor_Type, scippb.Descriptor_Macro:
		case scippb.Descriptor_Term:
			if !holds[sym] {
				continue // fields, variables, constants holding no code: no node
			}
		default:
			continue
		}
		f := files[first.Path]
		key, p, ok := newSymbol(sym, *first, f)
		if !ok {
			continue
		}
		keys[sym] = key
		if !g.HasNode(key) {
			g.AddNode(ingest.Node{Key: key, Type: ingest.TypeSymbol, Payload: ingest.MustJSON(p)})
			symPath[key] = first.Path
		}
		file := ingest.FileKey(first.Path)
		g.AddEdge(ingest.Edge{Src: file, Rel: ingest.RelDefines, Dst: key})
		g.AddEdge(ingest.Edge{Src: file, Rel: ingest.RelContains, Dst: key})
	}
	return keys
}

// newSymbol names a definition the syntax graph lacks as ingest code
// would: Go as `ingest go` (scip-go's import paths are Go's), Python
// `sym:py:<module>.<member path>`, TypeScript/JavaScript
// `sym:ts:<path>#<member path>`, Rust `sym:rs:<module path>::<member path>`.
func newSymbol(sym string, d scip.Def, f ingest.FilePayload) (string, ingest.SymbolPayload, bool) {
	_, rest, ok := scip.Members(sym)
	if !ok {
		return "", ingest.SymbolPayload{}, false
	}
	names := make([]string, len(rest))
	for i, r := range rest {
		names[i] = r.Name
	}
	lang := f.Lang
	if lang == "" {
		lang = ingest.LangGo
	}
	p := ingest.SymbolPayload{Package: f.Package, Name: d.Desc.Name, Path: d.Path, LineStart: d.Line(), LineEnd: d.Line(), Test: f.Test}
	if d.HasEnclosing {
		p.LineEnd = int(d.Enclosing.EndLine) + 1
	}
	if len(rest) >= 2 && rest[len(rest)-2].Suffix == scippb.Descriptor_Type {
		p.Recv = rest[len(rest)-2].Name
	}
	var key string
	switch lang {
	case ingest.LangGo:
		if key, ok = scip.KeyOf(sym, lang); !ok {
			return "", p, false
		}
		r, _ := utf8.DecodeRuneInString(p.Name)
		p.Exported = unicode.IsUpper(r)
	case ingest.LangPython:
		if f.Package == "" {
			return "", p, false
		}
		key = "sym:py:" + f.Package + "." + strings.Join(names, ".")
		p.Exported = !strings.HasPrefix(p.Name, "_") || strings.HasPrefix(p.Name, "__") && strings.HasSuffix(p.Name, "__")
	case ingest.LangTypeScript, ingest.LangJavaScript:
		p.Package = d.Path
		key = "sym:" + ingest.LangTags[lang] + ":" + d.Path + "#" + strings.Join(names, ".")
	case ingest.LangRust:
		if f.Package == "" {
			return "", p, false
		}
		key = "sym:rs:" + f.Package + "::" + strings.Join(names, "::")
	default:
		return "", p, false
	}
	switch d.Desc.Suffix {
	case scippb.Descriptor_Term:
		p.Kind = ingest.KindVar
	case scippb.Descriptor_Type:
		p.Kind = ingest.KindType
		if lang == ingest.LangPython || lang == ingest.LangTypeScript || lang == ingest.LangJavaScript {
			p.Kind = ingest.KindClass
		}
	default:
		p.Kind = ingest.KindFunc
		if p.Recv != "" {
			p.Kind = ingest.KindMethod
		}
	}
	return key, p, true
}

// setPrecise sets a payload's "precise" field and drops its "unresolved"
// count (the index resolved the file's references; SPEC.md §9.12).
func setPrecise(payload json.RawMessage, tool string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil {
		return payload
	}
	delete(m, "unresolved")
	m["precise"], _ = json.Marshal(tool)
	return ingest.MustJSON(m)
}

// count fills the statistics of the languages from the graph.
func count(g *ingest.Graph, stats map[string]*LangStats, covered map[string]bool) {
	owner := make(map[string]string, g.NumNodes())
	g.EachNode(func(n ingest.Node) {
		l := ownerOf(n)
		st, ok := stats[l]
		if !ok {
			return
		}
		owner[n.Key] = l
		switch n.Type {
		case ingest.TypeSymbol:
			st.Symbols++
		case ingest.TypeFile:
			var p ingest.FilePayload
			if json.Unmarshal(n.Payload, &p) == nil {
				st.Unresolved += p.Unresolved
				if covered[p.Path] {
					st.Covered++
				}
			}
		}
	})
	g.EachEdge(func(e ingest.Edge) {
		if l, ok := owner[e.Src]; ok && !strings.HasPrefix(e.Src, "dir:") {
			stats[l].Edges++
		}
	})
}
