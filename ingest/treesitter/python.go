package treesitter

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/memctl/memctl/ingest"
	sitter "github.com/tree-sitter/go-tree-sitter"
	pygrammar "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// Python front-end: what one file declares and uses (parsePython, on the
// worker pool), then names resolved across the tree (resolvePython).

var python = language{
	name: ingest.LangPython,
	grammars: []grammar{{name: "python", exts: []string{".py"},
		lang: func() *sitter.Language { return sitter.NewLanguage(pygrammar.Language()) }, query: pyQuery}},
	parse:   func(w *worker, s *src, root *sitter.Node) any { return parsePython(w, s, root) },
	resolve: resolvePython,
	// A root that is itself a package names its modules below the
	// packages above it.
	prepare: func(run *runCtx, files []*parsedFile) {
		run.pyPrefix = pythonRootPrefix(run.root, run.dirs, files)
	},
	hashNote: func(run *runCtx) string { return "prefix " + run.pyPrefix },
}

// pyQuery captures what a Python file uses. Declarations are read by a
// walk of the module and class bodies instead (parsePython), which knows
// their nesting.
const pyQuery = `
(call function: (_) @callee)
(import_statement) @import
(import_from_statement) @import
(parameters) @params
(lambda_parameters) @params
(function_definition name: (identifier) @localdef)
(class_definition name: (identifier) @localdef)
(assignment left: (_) @bind)
(augmented_assignment left: (_) @bind)
(for_statement left: (_) @bind)
(for_in_clause left: (_) @bind)
(as_pattern_target) @bind
(named_expression name: (_) @bind)
(global_statement) @global
`

// pyFile is what one Python file declares and uses.
type pyFile struct {
	defs    []pyDef
	imports []pyImport
	calls   []pyCall
	locals  scopeNames // function def → names bound in it (nested scopes included)
	globals scopeNames // function def → names declared global
}

// pyDef is a class, or a function or method at module or class level.
type pyDef struct {
	extent              // parent: the enclosing class def, -1 at module level
	name, qual   string // qual: "Class.method" within the module
	kind         string
	line0, line1 int
	bases        [][]string // classes: base expressions that are name chains
	static       bool       // @staticmethod: no self
	selfName     string     // methods: the first parameter
}

// pyImport is one import statement.
type pyImport struct {
	scope  int // function def that holds it, -1 for module level
	level  int // leading dots of a from-import
	module string
	from   bool
	names  []pyName // from-import names; a plain import's module and alias
	star   bool
	line   int
}

type pyName struct{ name, alias string }

// pyCall is a call whose callee is a name or an attribute chain
// (["self", "save"], ["super()", "__init__"], ["os", "path", "join"]).
type pyCall struct {
	scope int // innermost def, -1 at module level
	chain []string
	line  int
}

func parsePython(w *worker, s *src, root *sitter.Node) *pyFile {
	f := &pyFile{locals: make(scopeNames), globals: make(scopeNames)}
	f.stmts(s, root, -1)
	w.captures(s, root, func(c capture) {
		n := &c.node
		scope := scopeAt(f.defs, n.StartByte())
		switch c.name {
		case "callee":
			f.calls = append(f.calls, pyCall{scope: scope, chain: pyChain(s, n), line: startLine(n)})
		case "import":
			f.imports = append(f.imports, pyParseImport(s, n, f.funcScope(scope)))
		case "params":
			f.locals.bind(f.funcScope(scope), pyBindNames(s, n))
		case "localdef":
			if scope >= 0 && f.defs[scope].nameStart == n.StartByte() {
				return // the name of a def that has a node of its own
			}
			f.locals.bind(f.funcScope(scope), []string{s.text(n)})
		case "bind":
			f.locals.bind(f.funcScope(scope), pyBindNames(s, n))
		case "global":
			if fs := f.funcScope(scope); fs >= 0 {
				for _, c := range s.named(n) {
					if s.kind(&c) == "identifier" {
						f.globals.bind(fs, []string{s.text(&c)})
					}
				}
			}
		}
	})
	return f
}

// stmts reads the declarations among the statements below n (module or
// class body, and the blocks of if/try/with/for/while there).
func (f *pyFile) stmts(s *src, n *sitter.Node, parent int) {
	for _, c := range s.named(n) {
		switch s.kind(&c) {
		case "class_definition", "function_definition":
			f.def(s, &c, parent, nil)
		case "decorated_definition":
			var decs []string
			for _, d := range s.named(&c) {
				if s.kind(&d) == "decorator" {
					for _, e := range s.named(&d) {
						if ch := pyChain(s, &e); len(ch) > 0 {
							decs = append(decs, ch[len(ch)-1])
						}
					}
				}
			}
			if d := s.field(&c, "definition"); d != nil {
				f.def(s, d, parent, decs)
			}
		case "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause", "except_group_clause",
			"finally_clause", "with_statement", "for_statement", "while_statement", "block":
			f.stmts(s, &c, parent)
		}
	}
}

func (f *pyFile) def(s *src, n *sitter.Node, parent int, decorators []string) {
	nameNode := s.field(n, "name")
	if nameNode == nil {
		return
	}
	d := pyDef{extent: extent{parent: parent, start: n.StartByte(), end: n.EndByte(), nameStart: nameNode.StartByte()},
		name: s.text(nameNode), line0: startLine(n), line1: endLine(n)}
	d.qual = d.name
	if parent >= 0 {
		d.qual = f.defs[parent].qual + "." + d.name
	}
	idx := len(f.defs)
	if s.kind(n) == "class_definition" {
		d.kind = ingest.KindClass
		for _, b := range s.named(s.field(n, "superclasses")) {
			if ch := pyChain(s, &b); len(ch) > 0 {
				d.bases = append(d.bases, ch)
			}
		}
		f.defs = append(f.defs, d)
		f.stmts(s, s.field(n, "body"), idx)
		return
	}
	d.kind = ingest.KindFunc
	if parent >= 0 {
		d.kind = ingest.KindMethod
		for _, dec := range decorators {
			if dec == "staticmethod" {
				d.static = true
			}
		}
		if !d.static {
			if ps := s.named(s.field(n, "parameters")); len(ps) > 0 {
				if names := pyBindNames(s, &ps[0]); len(names) > 0 {
					d.selfName = names[0]
				}
			}
		}
	}
	f.defs = append(f.defs, d)
}

// funcScope is scope when it is a function or method, else -1 (names
// bound in a class body or at module level are not locals of anything).
func (f *pyFile) funcScope(scope int) int {
	if scope >= 0 && f.defs[scope].kind != ingest.KindClass {
		return scope
	}
	return -1
}

// pyChain turns a callee into a name chain, nil when it is not one.
func pyChain(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "identifier":
		return []string{s.text(n)}
	case "attribute":
		obj := pyChain(s, s.field(n, "object"))
		if obj == nil {
			return nil
		}
		return append(obj, s.text(s.field(n, "attribute")))
	case "call":
		if fn := s.field(n, "function"); s.kind(fn) == "identifier" && s.text(fn) == "super" {
			return []string{"super()"}
		}
	}
	return nil
}

// pyBindNames are the names a binding target or parameter list binds.
func pyBindNames(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "identifier":
		return []string{s.text(n)}
	case "default_parameter", "typed_default_parameter":
		return pyBindNames(s, s.field(n, "name"))
	case "typed_parameter", "parameters", "lambda_parameters", "list_splat_pattern", "dictionary_splat_pattern",
		"pattern_list", "tuple_pattern", "list_pattern", "as_pattern_target", "parenthesized_expression",
		"list_splat", "tuple", "list":
		var out []string
		for _, c := range s.named(n) {
			if s.kind(&c) == "type" {
				continue
			}
			out = append(out, pyBindNames(s, &c)...)
		}
		return out
	}
	return nil
}

func pyParseImport(s *src, n *sitter.Node, scope int) pyImport {
	imp := pyImport{scope: scope, line: startLine(n)}
	nameOf := func(c *sitter.Node) pyName {
		if s.kind(c) == "aliased_import" {
			return pyName{name: s.text(s.field(c, "name")), alias: s.text(s.field(c, "alias"))}
		}
		return pyName{name: s.text(c)}
	}
	if s.kind(n) == "import_statement" {
		for _, c := range s.named(n) {
			if k := s.kind(&c); k == "dotted_name" || k == "aliased_import" {
				imp.names = append(imp.names, nameOf(&c))
			}
		}
		return imp
	}
	imp.from = true
	mod := s.field(n, "module_name")
	if s.kind(mod) == "relative_import" {
		for _, c := range s.named(mod) {
			switch s.kind(&c) {
			case "import_prefix":
				imp.level = len(strings.TrimSpace(s.text(&c)))
			case "dotted_name":
				imp.module = s.text(&c)
			}
		}
	} else {
		imp.module = s.text(mod)
	}
	for _, c := range s.named(n) {
		if mod != nil && c.StartByte() == mod.StartByte() {
			continue
		}
		switch s.kind(&c) {
		case "dotted_name", "aliased_import":
			imp.names = append(imp.names, nameOf(&c))
		case "wildcard_import":
			imp.star = true
		}
	}
	return imp
}

// isPyTestFile: pytest's test_*.py and *_test.py and conftest.py, and
// Django's tests.py.
func isPyTestFile(rel string) bool {
	base := path.Base(rel)
	return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" || base == "tests.py"
}

// pythonRootPrefix is the dotted package path of root when root is itself
// a package (it holds __init__.py): its name and those of the packages
// above it on disk, with a trailing dot ("" otherwise).
func pythonRootPrefix(root string, dirs map[string]bool, files []*parsedFile) string {
	hasInit := false
	for _, f := range files {
		if f.Rel == "__init__.py" {
			hasInit = true
		}
	}
	if !hasInit {
		return ""
	}
	prefix := filepath.Base(root)
	for d := filepath.Dir(root); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "__init__.py")); err != nil {
			break
		}
		prefix = filepath.Base(d) + "." + prefix
	}
	return prefix + "."
}
