package treesitter

import (
	"reflect"
	"regexp"
	"strings"

	"github.com/memctl/memctl/ingest"
	sitter "github.com/tree-sitter/go-tree-sitter"
	rsgrammar "github.com/tree-sitter/tree-sitter-rust/bindings/go"
)

// Rust front-end: what one file declares and uses (parseRust), then the
// crates' module trees and names resolved (resolveRust).

var rust = language{
	name:  ingest.LangRust,
	rules: 2, // 2: unresolved counts in file payloads
	grammars: []grammar{{name: "rust", exts: []string{".rs"},
		lang: func() *sitter.Language { return sitter.NewLanguage(rsgrammar.Language()) }, query: rsQuery}},
	configs: []string{"Cargo.toml"},
	parse:   func(w *worker, s *src, root *sitter.Node) any { return parseRust(w, s, root) },
	facts:   reflect.TypeFor[*rsFile](),
	resolve: resolveRust,
}

// rsQuery captures what a Rust file uses. Items are read by a walk of the
// file and module bodies (parseRust), which knows their nesting and
// attributes.
const rsQuery = `
(call_expression function: (_) @callee)
(macro_invocation (token_tree) @macro)
(use_declaration) @use
(let_declaration pattern: (_) @bind)
(parameter pattern: (_) @bind)
(closure_parameters) @bind
(for_expression pattern: (_) @bind)
(match_pattern) @bind
(let_condition pattern: (_) @bind)
(function_item name: (identifier) @localdef)
(type_identifier) @type
(scoped_type_identifier) @type
(type_parameters (type_identifier) @typebind)
(constrained_type_parameter left: (type_identifier) @typebind)
`

// rsFile is what one Rust file declares and uses.
type rsFile struct {
	items   []rsItem
	mods    []rsModDecl
	uses    []rsUse
	calls   []rsCall
	types   []rsCall // type names, as paths
	locals  scopeNames
	tlocals scopeNames
}

// rsItem is an item: an inline module, a fn, struct, enum, union, trait,
// type alias, const or static, a method of an impl or trait, or an impl
// block (which gets no node: its methods do).
type rsItem struct {
	extent       // parent: the enclosing inline module, impl or trait; -1 for the file's module
	name         string
	kind         string // ingest.Kind*, or "impl"
	line0, line1 int
	pub          bool
	test         bool // #[test] (or a path ending in test: #[tokio::test])
	cfgTest      bool // #[cfg(test)]
	implType     []string
	typeText     string // impl self type's name, for keys when it is not in the tree
	implTrait    []string
	traitText    string // "Display", "From<u8>"
	bounds       [][]string
	hasBody      bool
}

// rsModDecl is `mod name;`, whose body is another file.
type rsModDecl struct {
	name   string
	scope  int    // inline module holding it, -1 for the file's module
	path   string // #[path = "…"]
	line   int
	cfgTst bool
}

// rsUse is one name a use declaration binds: alias → path, or a glob.
type rsUse struct {
	scope int // inline module or fn item holding it, -1 for the file's module
	alias string
	path  []string
	glob  bool
}

// rsCall is a called path (["Version", "parse"], ["self", "len"]) or a
// type path, inside item scope.
type rsCall struct {
	scope int
	path  []string
	line  int
}

var rsTestAttr = regexp.MustCompile(`^(\w+::)*test\b`)

func parseRust(w *worker, s *src, root *sitter.Node) *rsFile {
	f := &rsFile{locals: make(scopeNames), tlocals: make(scopeNames)}
	f.walk(s, root, -1)
	w.captures(s, root, func(c capture) {
		n := &c.node
		scope := scopeAt(f.items, n.StartByte())
		switch c.name {
		case "callee":
			if p := rsPath(s, n); p != nil {
				f.calls = append(f.calls, rsCall{scope: scope, path: p, line: startLine(n)})
			} else {
				f.calls = append(f.calls, rsCall{scope: scope, line: startLine(n)})
			}
		case "macro":
			if n.Parent() != nil && s.kind(n.Parent()) == "macro_invocation" {
				f.tokenCalls(s, n, scope)
			}
		case "use":
			if scope >= 0 && f.items[scope].kind != ingest.KindModule {
				f.useDecl(s, n, scope)
			}
		case "bind":
			f.locals.bind(scope, rsBindNames(s, n))
		case "localdef":
			if scope >= 0 && f.items[scope].nameStart != n.StartByte() {
				f.locals.bind(scope, []string{s.text(n)})
			}
		case "type":
			if p := rsPath(s, n); p != nil && scope >= 0 {
				f.types = append(f.types, rsCall{scope: scope, path: p, line: startLine(n)})
			}
		case "typebind":
			f.tlocals.bind(scope, []string{s.text(n)})
		}
	})
	return f
}

// walk reads the items of a file or module body.
func (f *rsFile) walk(s *src, n *sitter.Node, parent int) {
	var attrs []string
	for _, c := range s.named(n) {
		k := s.kind(&c)
		if k == "attribute_item" {
			for _, a := range s.named(&c) {
				attrs = append(attrs, strings.Join(strings.Fields(s.text(&a)), ""))
			}
			continue
		}
		if k == "line_comment" || k == "block_comment" {
			continue
		}
		test, cfgTest, pathAttr := false, false, ""
		for _, a := range attrs {
			switch {
			case rsTestAttr.MatchString(a):
				test = true
			case a == "cfg(test)" || strings.HasPrefix(a, "cfg(all(test,"):
				cfgTest = true
			case strings.HasPrefix(a, "path="):
				pathAttr = strings.Trim(strings.TrimPrefix(a, "path="), `"`)
			}
		}
		attrs = nil
		item := func(kind string) int {
			return f.addItem(s, &c, kind, parent, test, cfgTest)
		}
		switch k {
		case "mod_item":
			if body := s.field(&c, "body"); body != nil {
				idx := item(ingest.KindModule)
				f.walk(s, body, idx)
			} else {
				f.mods = append(f.mods, rsModDecl{name: s.text(s.field(&c, "name")), scope: parent, path: pathAttr,
					line: startLine(&c), cfgTst: cfgTest})
			}
		case "function_item", "function_signature_item":
			kind := ingest.KindFunc
			if parent >= 0 && (f.items[parent].kind == "impl" || f.items[parent].kind == ingest.KindTrait) {
				kind = ingest.KindMethod
			}
			idx := item(kind)
			f.items[idx].hasBody = k == "function_item"
		case "struct_item":
			item(ingest.KindStruct)
		case "enum_item":
			item(ingest.KindEnum)
		case "union_item":
			item(ingest.KindUnion)
		case "type_item":
			item(ingest.KindType)
		case "const_item":
			item(ingest.KindConst)
		case "static_item":
			item(ingest.KindVar)
		case "trait_item":
			idx := item(ingest.KindTrait)
			for _, b := range s.named(s.field(&c, "bounds")) {
				if p := rsPath(s, &b); p != nil {
					f.items[idx].bounds = append(f.items[idx].bounds, p)
				}
			}
			f.walk(s, s.field(&c, "body"), idx)
		case "impl_item":
			idx := item("impl")
			it := &f.items[idx]
			it.implType = rsPath(s, s.field(&c, "type"))
			it.typeText = rsTypeName(s, s.field(&c, "type"))
			if tr := s.field(&c, "trait"); tr != nil {
				it.implTrait = rsPath(s, tr)
				it.traitText = strings.Join(strings.Fields(s.text(tr)), "")
				if i := strings.LastIndex(it.traitText, "::"); i >= 0 && !strings.Contains(it.traitText[:i], "<") {
					it.traitText = it.traitText[i+2:]
				}
			}
			f.walk(s, s.field(&c, "body"), idx)
		case "use_declaration":
			f.useDecl(s, &c, parent)
		case "extern_crate_declaration":
			name := s.text(s.field(&c, "name"))
			alias := s.text(s.field(&c, "alias"))
			if alias == "" {
				alias = name
			}
			f.uses = append(f.uses, rsUse{scope: parent, alias: alias, path: []string{name}})
		}
	}
}

func (f *rsFile) addItem(s *src, n *sitter.Node, kind string, parent int, test, cfgTest bool) int {
	it := rsItem{extent: extent{parent: parent, start: n.StartByte(), end: n.EndByte()}, kind: kind, line0: startLine(n), line1: endLine(n),
		test: test, cfgTest: cfgTest}
	if nm := s.field(n, "name"); nm != nil {
		it.name, it.nameStart = s.text(nm), nm.StartByte()
	}
	for _, c := range s.named(n) {
		if s.kind(&c) == "visibility_modifier" {
			it.pub = true
		}
	}
	f.items = append(f.items, it)
	return len(f.items) - 1
}

// useDecl reads a use declaration into bindings.
func (f *rsFile) useDecl(s *src, n *sitter.Node, scope int) {
	var tree func(n *sitter.Node, prefix []string)
	tree = func(n *sitter.Node, prefix []string) {
		switch s.kind(n) {
		case "use_as_clause":
			p := append(append([]string(nil), prefix...), rsPath(s, s.field(n, "path"))...)
			f.uses = append(f.uses, rsUse{scope: scope, alias: s.text(s.field(n, "alias")), path: p})
		case "use_wildcard":
			var p []string
			for _, c := range s.named(n) {
				p = append(p, rsPath(s, &c)...)
			}
			f.uses = append(f.uses, rsUse{scope: scope, path: append(append([]string(nil), prefix...), p...), glob: true})
		case "scoped_use_list":
			p := append(append([]string(nil), prefix...), rsPath(s, s.field(n, "path"))...)
			tree(s.field(n, "list"), p)
		case "use_list":
			for _, c := range s.named(n) {
				tree(&c, prefix)
			}
		case "self":
			if len(prefix) > 0 {
				f.uses = append(f.uses, rsUse{scope: scope, alias: prefix[len(prefix)-1], path: prefix})
			}
		default:
			p := append(append([]string(nil), prefix...), rsPath(s, n)...)
			if len(p) > 0 && p[len(p)-1] != "self" {
				f.uses = append(f.uses, rsUse{scope: scope, alias: p[len(p)-1], path: p})
			}
		}
	}
	tree(s.field(n, "argument"), nil)
}

// tokenCalls finds calls inside a macro's token tree, which the grammar
// does not parse: a path (a, a::b, self.m) followed by a parenthesised
// token tree.
func (f *rsFile) tokenCalls(s *src, n *sitter.Node, scope int) {
	var path []string
	prev := ""
	for i := uint(0); i < n.ChildCount(); i++ {
		c := n.Child(i)
		k := s.kind(c)
		switch k {
		case "identifier", "self", "super", "crate":
			name := s.text(c)
			switch {
			case prev == "::" && len(path) > 0:
				path = append(path, name)
			case prev == "." && len(path) == 1 && path[0] == "self":
				path = append(path, name)
			case prev == ".":
				path = []string{".", name} // a method of some value
			default:
				path = []string{name}
			}
		case "::", ".":
		case "token_tree":
			if strings.HasPrefix(s.text(c), "(") && len(path) > 0 && prev != "!" && path[len(path)-1] != "self" {
				if path[0] == "." {
					f.calls = append(f.calls, rsCall{scope: scope, line: startLine(c)})
				} else {
					f.calls = append(f.calls, rsCall{scope: scope, path: path, line: startLine(c)})
				}
			}
			path = nil
			f.tokenCalls(s, c, scope)
		default:
			path = nil
		}
		prev = k
	}
}

// rsPath turns a path expression, type or callee into segments (nil when
// it is not a path).
func rsPath(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "identifier", "type_identifier", "self", "super", "crate", "metavariable":
		return []string{s.text(n)}
	case "scoped_identifier", "scoped_type_identifier":
		name := s.text(s.field(n, "name"))
		p := s.field(n, "path")
		if p == nil {
			return []string{name}
		}
		prefix := rsPath(s, p)
		if prefix == nil {
			return nil
		}
		return append(prefix, name)
	case "generic_function":
		return rsPath(s, s.field(n, "function"))
	case "generic_type":
		return rsPath(s, s.field(n, "type"))
	case "reference_type", "pointer_type":
		return rsPath(s, s.field(n, "type"))
	case "field_expression":
		if v := s.field(n, "value"); s.kind(v) == "self" {
			return []string{"self", s.text(s.field(n, "field"))}
		}
	}
	return nil
}

// rsTypeName is the name of an impl's self type, for keys: its last path
// segment without type arguments ("Vec" for Vec<u8>, "str" for &str).
func rsTypeName(s *src, n *sitter.Node) string {
	if p := rsPath(s, n); len(p) > 0 {
		return p[len(p)-1]
	}
	t := strings.Join(strings.Fields(s.text(n)), "")
	return strings.TrimLeft(t, "&*")
}

// rsBindNames are the identifiers a pattern binds (with the paths it
// names: over-approximating locals only drops calls, never adds edges).
func rsBindNames(s *src, n *sitter.Node) []string {
	if s.kind(n) == "identifier" {
		return []string{s.text(n)}
	}
	var out []string
	for _, c := range s.named(n) {
		switch s.kind(&c) {
		case "type_identifier", "primitive_type", "reference_type", "generic_type", "scoped_type_identifier":
			continue
		}
		out = append(out, rsBindNames(s, &c)...)
	}
	return out
}
