package treesitter

import (
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
	sitter "github.com/tree-sitter/go-tree-sitter"
	jsgrammar "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tsgrammar "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// TypeScript and JavaScript front-end (one for both: the grammars share
// their node kinds, the TypeScript one adds types): what one file declares
// and uses (parseTS), then names resolved across the tree (resolveTS).

// typeScript and javaScript are one family: their files import each
// other, so they are resolved (and extracted) together.
var (
	typeScript = language{
		name:  ingest.LangTypeScript,
		rules: 2, // 2: constructor calls, CommonJS and object-literal members, typed values, call chains, callbacks, unresolved counts
		grammars: []grammar{
			{name: "typescript", exts: []string{".ts", ".mts", ".cts"},
				lang:  func() *sitter.Language { return sitter.NewLanguage(tsgrammar.LanguageTypescript()) },
				query: tsQuery + tsTypeQuery},
			{name: "tsx", exts: []string{".tsx"},
				lang:  func() *sitter.Language { return sitter.NewLanguage(tsgrammar.LanguageTSX()) },
				query: tsQuery + tsTypeQuery},
		},
		configs: []string{"tsconfig.json"},
		family:  "ts",
		parse:   func(w *worker, s *src, root *sitter.Node) any { return parseTS(w, s, root) },
		facts:   reflect.TypeFor[*tsFile](),
		resolve: resolveTS,
	}
	javaScript = language{
		name:  ingest.LangJavaScript,
		rules: 2, // as TypeScript's: the family shares one resolver
		grammars: []grammar{{name: "javascript", exts: []string{".js", ".jsx", ".mjs", ".cjs"},
			lang:  func() *sitter.Language { return sitter.NewLanguage(jsgrammar.Language()) },
			query: tsQuery + jsParamQuery}},
		minified: []string{".min.js"},
		configs:  []string{"jsconfig.json", "package.json"},
		family:   "ts",
		parse:    func(w *worker, s *src, root *sitter.Node) any { return parseTS(w, s, root) },
		facts:    reflect.TypeFor[*tsFile](),
		resolve:  resolveTS,
	}
)

// tsElem is the chain segment of an element of an array: x[i].
const tsElem = "[]"

// tsQuery captures what a file uses, in both grammars.
const tsQuery = `
(call_expression function: (_) @callee)
(new_expression constructor: (_) @new)
(variable_declarator name: (_) @bind)
(variable_declarator name: (identifier)) @decl
(assignment_expression left: (member_expression object: (this)) right: (new_expression)) @thisnew
(for_in_statement left: (identifier) right: (_)) @forof
(arguments (arrow_function) @callback)
(arguments (function_expression) @callback)
(arrow_function parameter: (identifier) @bind)
(catch_clause parameter: (_) @bind)
(for_in_statement left: (_) @bind)
(function_declaration name: (identifier) @localdef)
(generator_function_declaration name: (identifier) @localdef)
(class_declaration name: (_) @localdef)
(arguments (identifier) @vref)
(arguments (member_expression) @vref)
(pair value: (identifier) @vref)
(shorthand_property_identifier) @vref
(array (identifier) @vref)
(return_statement (identifier) @vref)
(assignment_expression right: (identifier) @vref)
(variable_declarator value: (identifier) @vref)
`

// tsTypeQuery adds the parameters and type names of TypeScript.
const tsTypeQuery = `
(required_parameter pattern: (_) @bind)
(optional_parameter pattern: (_) @bind)
(required_parameter pattern: (identifier) type: (type_annotation)) @param
(optional_parameter pattern: (identifier) type: (type_annotation)) @param
(type_identifier) @type
(nested_type_identifier) @type
(type_parameter name: (type_identifier) @typebind)
`

// jsParamQuery adds the parameters of JavaScript.
const jsParamQuery = `
(formal_parameters (identifier) @bind)
(formal_parameters (assignment_pattern left: (_) @bind))
(formal_parameters (object_pattern) @bind)
(formal_parameters (array_pattern) @bind)
(formal_parameters (rest_pattern) @bind)
`

// tsFile is what one TypeScript or JavaScript file declares and uses.
type tsFile struct {
	defs    []tsDef
	imports []tsImport
	exports []tsBinding // export { local as exported }, export default local
	uses    []tsUse
	locals  scopeNames // def → names bound inside it
	tlocals scopeNames // def → type parameters
	// vtypes are the declared values of variables and parameters, by
	// def and name (chain nil when two declarations disagree or one says
	// nothing syntax can follow): a variable's type is its annotation's,
	// else its initializer's, and no assignment can change it.
	vtypes map[int]map[string]tsVal
	// cbvals are the parameters of functions passed as arguments, by
	// name: the innermost range holding a use wins.
	cbvals map[string][]tsCallbackVal
	// ftypes are the declared values of the fields of classes and
	// interfaces, by def and name: annotated fields and constructor
	// parameter properties, fields initialised, or assigned in the
	// constructor, with new C(…).
	ftypes map[int]map[string]tsVal
	// testCalls: top-level describe/it/test calls with a name.
	testCalls  bool
	esm        bool      // has import or export statements
	heritageAt [][2]uint // byte ranges of implements and extends clauses
	// main is the top-level name CommonJS module.exports is set to (""
	// when it is not): what require() of the file returns.
	main string
	// holders are the top-level names that get function properties
	// assigned (X.m = function…, X.prototype.m = …): a var among them is
	// a def, the parent of those members.
	holders map[string]bool
}

// tsVal is what syntax says a value is: an instance of the type a chain
// names (how 'i': an annotation, new C(…)), an array (or set, iterable)
// of them (how 'a': T[], Array<T>), or what a call of the chain returns
// (how 'c'), or that awaited (how 'w'), or an element of the chain's
// value (how 'o': for (const x of xs)).
type tsVal struct {
	chain []string
	how   byte
	// how 'p' (a call of chain) and 'q' (new chain(…)): the value is
	// parameter param of the function passed as argument arg.
	arg, param int
}

// setVal records v as the value of name in table t under def k: a second
// declaration that disagrees makes it unknown.
func setVal(t map[int]map[string]tsVal, k int, name string, v tsVal) {
	if t[k] == nil {
		t[k] = make(map[string]tsVal)
	}
	if old, ok := t[k][name]; ok && (old.how != v.how || old.arg != v.arg || old.param != v.param || !slices.Equal(old.chain, v.chain)) {
		v = tsVal{}
	}
	t[k][name] = v
}

type tsDef struct {
	extent
	name, qual string // qual: "Class.method", "Namespace.fn"
	kind       string
	// ret is the type a function's return annotation names; retAwait
	// the type awaiting its result gives (T of Promise<T>, else ret).
	ret, retAwait []string
	// cbParams: for a parameter of function type, by its position, the
	// types its own parameters are declared with (nil: not a class or
	// interface name): what a function passed there receives.
	cbParams     map[int][][]string
	line0, line1 int
	exported     bool
	heritage     [][]string // extends and implements, as name chains
	extends      [][]string // those of heritage that extends names: where members are inherited from
	// sig: an overload signature or a declaration without a body; the
	// implementation, when there is one, describes the symbol instead.
	sig bool
	// proto: a member of the instances of a constructor function
	// (X.prototype.m = …), not of X itself (X.m = …).
	proto bool
	// fnStart is the start of the function whose this the def's body
	// sees (its own; 0 when it has none).
	fnStart uint
}

// tsImport is an import statement, a re-export (export … from), a
// require() or an import().
type tsImport struct {
	spec     string
	scope    int // def holding a require() or import(), -1 at top level
	bindings []tsBinding
	reexport bool // bindings are exported names (local = exported name); "*" local is export *
	require  bool // a require(): "*" is module.exports, not the namespace
	line     int
}

// tsBinding binds local to imported ("default", "*" for the module, or a
// name).
type tsBinding struct{ local, imported string }

// tsUse is a call, a new, a value named or (TypeScript) a type name.
type tsUse struct {
	scope int
	chain []string
	kind  byte // 'c' call, 'n' new, 't' type, 's' super(…), 'r' a value named (not called)
	line  int
	at    uint // byte offset: which callback's parameters it sees
}

// tsCallbackVal is a parameter of a function passed as an argument: its
// value inside the function's byte range (a name the enclosing def may
// bind otherwise elsewhere).
type tsCallbackVal struct {
	start, end uint
	v          tsVal
}

func parseTS(w *worker, s *src, root *sitter.Node) *tsFile {
	f := &tsFile{locals: make(scopeNames), tlocals: make(scopeNames), vtypes: make(map[int]map[string]tsVal),
		ftypes:  make(map[int]map[string]tsVal),
		holders: make(map[string]bool)}
	f.findHolders(s, root)
	f.stmts(s, root, -1, false)
	if f.main != "" {
		for i := range f.defs {
			if f.defs[i].parent < 0 && f.defs[i].name == f.main {
				f.defs[i].exported = true
			}
		}
	}
	var nestedEnd uint // end of the last a.b.C type captured
	w.captures(s, root, func(c capture) {
		n := &c.node
		scope := scopeAt(f.defs, n.StartByte())
		switch c.name {
		case "callee":
			f.callee(s, n, scope)
		case "vref":
			if ch := tsChain(s, n); ch != nil && f.thisOK(s, n, ch, scope) {
				f.uses = append(f.uses, tsUse{scope: scope, chain: ch, kind: 'r', line: startLine(n), at: n.StartByte()})
			}
		case "new":
			f.uses = append(f.uses, tsUse{scope: scope, chain: tsChain(s, n), kind: 'n', line: startLine(n), at: n.StartByte()})
		case "type":
			// A name in an implements or extends clause is an implements
			// edge, not a reference; the names inside a.b.C are part of it.
			start := n.StartByte()
			if scope < 0 || start < nestedEnd || f.inHeritage(start) {
				return
			}
			if s.kind(n) == "nested_type_identifier" {
				nestedEnd = n.EndByte()
			}
			if ch := tsChain(s, n); ch != nil {
				f.uses = append(f.uses, tsUse{scope: scope, chain: ch, kind: 't', line: startLine(n), at: n.StartByte()})
			}
		case "bind":
			f.locals.bind(scope, tsBindNames(s, n))
		case "decl":
			setVal(f.vtypes, scope, s.text(s.field(n, "name")), declaredVal(s, s.field(n, "type"), s.field(n, "value")))
		case "param":
			setVal(f.vtypes, scope, s.text(s.field(n, "pattern")), declaredVal(s, s.field(n, "type"), nil))
		case "callback":
			f.callback(s, n, scope)
		case "forof":
			// for (const x of xs): x is an element of xs (for … in gives
			// keys: strings).
			v := tsVal{}
			for i := uint(0); i < n.ChildCount(); i++ {
				if c := n.Child(i); s.kind(c) == "of" {
					if ch := tsChain(s, s.field(n, "right")); ch != nil {
						v = tsVal{chain: ch, how: 'o'}
					}
				}
			}
			setVal(f.vtypes, scope, s.text(s.field(n, "left")), v)
		case "thisnew":
			// this.x = new C(…) in a class's constructor: the field's type.
			if scope >= 0 && f.defs[scope].name == "constructor" && f.defs[scope].parent >= 0 && f.thisOK(s, n, []string{"this"}, scope) {
				if prop := s.field(s.field(n, "left"), "property"); prop != nil {
					setVal(f.ftypes, f.defs[scope].parent, s.text(prop), declaredVal(s, nil, s.field(n, "right")))
				}
			}
		case "typebind":
			f.tlocals.bind(scope, []string{s.text(n)})
		case "localdef":
			if scope >= 0 && f.defs[scope].nameStart == n.StartByte() {
				return
			}
			f.locals.bind(scope, []string{s.text(n)})
		}
	})
	return f
}

// callee records a call: a require() or import() is an import instead.
func (f *tsFile) callee(s *src, n *sitter.Node, scope int) {
	switch k := s.kind(n); {
	case k == "import" || k == "identifier" && s.text(n) == "require":
		call := n.Parent()
		args := s.named(s.field(call, "arguments"))
		if len(args) == 0 || s.kind(&args[0]) != "string" {
			return
		}
		imp := tsImport{spec: stringValue(s, &args[0]), scope: scope, require: k != "import", line: startLine(n)}
		if p := call.Parent(); k != "import" && s.kind(p) == "variable_declarator" {
			if v := s.field(p, "value"); v != nil && v.StartByte() == call.StartByte() {
				name := s.field(p, "name")
				switch s.kind(name) {
				case "identifier":
					imp.bindings = append(imp.bindings, tsBinding{local: s.text(name), imported: "*"})
				case "object_pattern":
					for _, c := range s.named(name) {
						switch s.kind(&c) {
						case "shorthand_property_identifier_pattern":
							imp.bindings = append(imp.bindings, tsBinding{local: s.text(&c), imported: s.text(&c)})
						case "pair_pattern":
							if v := s.field(&c, "value"); s.kind(v) == "identifier" {
								imp.bindings = append(imp.bindings, tsBinding{local: s.text(v), imported: s.text(s.field(&c, "key"))})
							}
						}
					}
				}
			}
		}
		if p := call.Parent(); k != "import" && s.kind(p) == "member_expression" {
			// var x = require('./y').name
			if d := p.Parent(); s.kind(d) == "variable_declarator" && s.kind(s.field(d, "name")) == "identifier" {
				if v := s.field(d, "value"); v != nil && v.StartByte() == p.StartByte() && v.EndByte() == p.EndByte() {
					imp.bindings = append(imp.bindings, tsBinding{local: s.text(s.field(d, "name")), imported: s.text(s.field(p, "property"))})
				}
			}
		}
		f.imports = append(f.imports, imp)
		return
	case k == "super":
		// super(…): the base class's constructor ('s': uncounted when
		// the base has none in the tree).
		f.uses = append(f.uses, tsUse{scope: scope, chain: []string{"super", "constructor"}, kind: 's', line: startLine(n), at: n.StartByte()})
		return
	}
	ch := tsChain(s, n)
	if !f.thisOK(s, n, ch, scope) {
		ch = nil
	}
	f.uses = append(f.uses, tsUse{scope: scope, chain: ch, kind: 'c', line: startLine(n), at: n.StartByte()})
}

// thisOK reports whether a chain not starting with this, or whose this is
// the one of the def around it: a function (not an arrow) nested in the
// def has a this of its own, which syntax does not know.
func (f *tsFile) thisOK(s *src, n *sitter.Node, ch []string, scope int) bool {
	if len(ch) == 0 || ch[0] != "this" {
		return true
	}
	if scope < 0 {
		return false
	}
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch s.kind(p) {
		case "function_expression", "function", "function_declaration", "generator_function",
			"generator_function_declaration", "method_definition":
			return p.StartByte() == f.defs[scope].fnStart
		case "class_body":
			return true // a field initializer: the instance
		case "program":
			return false
		}
	}
	return false
}

// stmts reads the declarations among the statements of a program or a
// namespace body.
func (f *tsFile) stmts(s *src, n *sitter.Node, parent int, exported bool) {
	for _, c := range s.named(n) {
		switch s.kind(&c) {
		case "export_statement":
			f.esm = true
			f.export(s, &c, parent)
		case "import_statement":
			f.esm = true
			f.importStmt(s, &c)
		case "expression_statement":
			for _, e := range s.named(&c) {
				switch s.kind(&e) {
				case "internal_module":
					f.decl(s, &e, parent, exported, false)
				case "call_expression":
					if parent < 0 && isTestCall(s, &e) {
						f.testCalls = true
					}
				case "assignment_expression":
					if parent < 0 {
						f.commonJS(s, &e, "")
					}
				}
			}
		case "ambient_declaration":
			for _, d := range s.named(&c) {
				f.decl(s, &d, parent, exported, false)
			}
		default:
			f.decl(s, &c, parent, exported, false)
		}
	}
}

// export reads an export statement.
func (f *tsFile) export(s *src, n *sitter.Node, parent int) {
	isDefault := false
	for i := uint(0); i < n.ChildCount(); i++ {
		if c := n.Child(i); !c.IsNamed() && s.text(c) == "default" {
			isDefault = true
		}
	}
	if d := s.field(n, "declaration"); d != nil {
		f.decl(s, d, parent, true, isDefault)
		return
	}
	if source := s.field(n, "source"); source != nil {
		imp := tsImport{spec: stringValue(s, source), scope: -1, reexport: true, line: startLine(n)}
		star := true
		for _, c := range s.named(n) {
			switch s.kind(&c) {
			case "export_clause":
				star = false
				for _, sp := range s.named(&c) {
					name, alias := s.text(s.field(&sp, "name")), s.text(s.field(&sp, "alias"))
					if alias == "" {
						alias = name
					}
					imp.bindings = append(imp.bindings, tsBinding{local: alias, imported: name})
				}
			case "namespace_export":
				star = false
				for _, id := range s.named(&c) {
					imp.bindings = append(imp.bindings, tsBinding{local: s.text(&id), imported: "*"})
				}
			}
		}
		if star {
			imp.bindings = append(imp.bindings, tsBinding{local: "*", imported: "*"})
		}
		f.imports = append(f.imports, imp)
		return
	}
	if v := s.field(n, "value"); v != nil {
		switch s.kind(v) {
		case "identifier":
			f.exports = append(f.exports, tsBinding{local: s.text(v), imported: "default"})
		case "class", "function_expression", "function", "arrow_function", "generator_function":
			f.decl(s, v, parent, true, true)
		}
		return
	}
	for _, c := range s.named(n) {
		switch s.kind(&c) {
		case "export_clause":
			for _, sp := range s.named(&c) {
				name, alias := s.text(s.field(&sp, "name")), s.text(s.field(&sp, "alias"))
				if alias == "" {
					alias = name
				}
				f.exports = append(f.exports, tsBinding{local: name, imported: alias})
			}
		case "identifier": // export = x
			f.exports = append(f.exports, tsBinding{local: s.text(&c), imported: "default"})
		}
	}
}

func (f *tsFile) importStmt(s *src, n *sitter.Node) {
	imp := tsImport{spec: stringValue(s, s.field(n, "source")), scope: -1, line: startLine(n)}
	for _, c := range s.named(n) {
		if s.kind(&c) != "import_clause" {
			continue
		}
		for _, b := range s.named(&c) {
			switch s.kind(&b) {
			case "identifier":
				imp.bindings = append(imp.bindings, tsBinding{local: s.text(&b), imported: "default"})
			case "namespace_import":
				for _, id := range s.named(&b) {
					imp.bindings = append(imp.bindings, tsBinding{local: s.text(&id), imported: "*"})
				}
			case "named_imports":
				for _, sp := range s.named(&b) {
					if s.kind(&sp) != "import_specifier" {
						continue
					}
					name, alias := s.text(s.field(&sp, "name")), s.text(s.field(&sp, "alias"))
					if alias == "" {
						alias = name
					}
					imp.bindings = append(imp.bindings, tsBinding{local: alias, imported: name})
				}
			}
		}
	}
	f.imports = append(f.imports, imp)
}

// isFunc reports whether a node is a function value.
func isFunc(s *src, n *sitter.Node) bool {
	switch s.kind(n) {
	case "function_expression", "function", "arrow_function", "generator_function":
		return true
	}
	return false
}

// memberTarget splits the target of X.m = … or X.prototype.m = … into X,
// m and whether m is the instances' (nil when it is neither form, or X is
// module or exports).
func memberTarget(chain []string) (holder, name string, proto, ok bool) {
	switch {
	case len(chain) == 2:
		holder, name = chain[0], chain[1]
	case len(chain) == 3 && chain[1] == "prototype":
		holder, name, proto = chain[0], chain[2], true
	default:
		return "", "", false, false
	}
	if holder == "module" || holder == "exports" || holder == "this" || name == "prototype" {
		return "", "", false, false
	}
	return holder, name, proto, true
}

// findHolders collects the top-level names that get function members
// assigned (X.m = function…, X.prototype.m = …, X.prototype = {…}), before
// the declarations are read, so that a var among them becomes a def in
// document order.
func (f *tsFile) findHolders(s *src, root *sitter.Node) {
	for _, c := range s.named(root) {
		if s.kind(&c) != "expression_statement" {
			continue
		}
		for _, e := range s.named(&c) {
			if s.kind(&e) != "assignment_expression" {
				continue
			}
			right := s.field(&e, "right")
			ch := tsChain(s, s.field(&e, "left"))
			if h, _, _, ok := memberTarget(ch); ok && isFunc(s, right) {
				f.holders[h] = true
			} else if len(ch) == 2 && ch[1] == "prototype" && s.kind(right) == "object" {
				f.holders[ch[0]] = true
			}
		}
	}
}

// commonJS reads a top-level assignment, or the chain of them that
// initialises the var declName (var app = exports = module.exports = {}):
// module.exports = X sets what require() returns, exports.f = … and
// module.exports.f = … export f, X.m = function… and X.prototype.m = …
// define members of X.
func (f *tsFile) commonJS(s *src, n *sitter.Node, declName string) {
	var targets [][]string
	var at []*sitter.Node // the assignment of each target
	v := n
	for s.kind(v) == "assignment_expression" {
		targets = append(targets, tsChain(s, s.field(v, "left")))
		at = append(at, v)
		v = s.field(v, "right")
	}
	isMain := func(ch []string) bool {
		return len(ch) == 2 && ch[0] == "module" && ch[1] == "exports" || len(ch) == 1 && ch[0] == "exports" && len(targets) > 1
	}
	mainDone := false
	for k, ch := range targets {
		switch {
		case isMain(ch):
			if !mainDone {
				f.cjsMain(s, v, declName)
				mainDone = true
			}
		case len(ch) == 2 && ch[0] == "exports", len(ch) == 3 && ch[0] == "module" && ch[1] == "exports":
			name := ch[len(ch)-1]
			switch {
			case declName != "":
				f.exports = append(f.exports, tsBinding{local: declName, imported: name})
			case isFunc(s, v):
				i := f.addDef(s, n, nil, name, ingest.KindFunc, -1, true)
				if i >= 0 {
					f.defs[i].fnStart = v.StartByte()
				}
			case s.kind(v) == "identifier":
				f.exports = append(f.exports, tsBinding{local: s.text(v), imported: name})
			}
		case declName == "":
			// req.get = req.header = function header(…): both members.
			holder, name, proto, ok := memberTarget(ch)
			if !ok {
				if len(ch) == 2 && ch[1] == "prototype" && s.kind(v) == "object" {
					f.protoObject(s, v, ch[0])
				}
				continue
			}
			if p := f.topDef(holder); p >= 0 && isFunc(s, v) {
				i := f.addDef(s, at[k], s.field(s.field(at[k], "left"), "property"), name, ingest.KindMethod, p, true)
				if i >= 0 {
					f.defs[i].proto = proto
					f.defs[i].fnStart = v.StartByte()
				}
			}
		}
	}
}

// cjsMain records what module.exports is set to: a name, a function or
// class (a def of its own name, else default), or an object literal whose
// properties are the exports.
func (f *tsFile) cjsMain(s *src, v *sitter.Node, declName string) {
	switch {
	case declName != "":
		f.main = declName
	case s.kind(v) == "identifier":
		f.main = s.text(v)
	case isFunc(s, v), s.kind(v) == "class":
		name := s.text(s.field(v, "name"))
		if name == "" {
			name = "default"
		}
		kind := ingest.KindFunc
		if s.kind(v) == "class" {
			kind = ingest.KindClass
		}
		i := f.addDef(s, v, s.field(v, "name"), name, kind, -1, true)
		if i < 0 {
			return
		}
		f.main = name
		if kind == ingest.KindClass {
			f.members(s, s.field(v, "body"), i)
		} else {
			f.defs[i].fnStart = v.StartByte()
		}
	case s.kind(v) == "object":
		f.objectMembers(s, v, -1, false)
		for _, p := range s.named(v) {
			switch s.kind(&p) {
			case "shorthand_property_identifier":
				f.exports = append(f.exports, tsBinding{local: s.text(&p), imported: s.text(&p)})
			case "pair":
				if pv := s.field(&p, "value"); s.kind(pv) == "identifier" {
					f.exports = append(f.exports, tsBinding{local: s.text(pv), imported: s.text(s.field(&p, "key"))})
				}
			}
		}
	}
	if f.main != "" {
		f.exports = append(f.exports, tsBinding{local: f.main, imported: "default"})
	}
}

// protoObject reads X.prototype = {m: function…, n() {…}}: members of
// X's instances.
func (f *tsFile) protoObject(s *src, obj *sitter.Node, holder string) {
	if p := f.topDef(holder); p >= 0 {
		f.objectMembers(s, obj, p, true)
	}
}

// objectMembers reads the functions of an object literal ({m: function…,
// n() {…}, o: () => …}): members of def parent (of its instances when
// proto), or, for parent -1 (module.exports = {…}), exported functions
// of the file.
func (f *tsFile) objectMembers(s *src, obj *sitter.Node, parent int, proto bool) {
	kind := ingest.KindMethod
	if parent < 0 {
		kind = ingest.KindFunc
	}
	for _, c := range s.named(obj) {
		var name, fn *sitter.Node
		switch s.kind(&c) {
		case "pair":
			if v := s.field(&c, "value"); isFunc(s, v) {
				name, fn = s.field(&c, "key"), v
			}
		case "method_definition":
			name, fn = s.field(&c, "name"), &c
		}
		if s.kind(name) != "property_identifier" {
			continue
		}
		if i := f.addDef(s, &c, name, s.text(name), kind, parent, true); i >= 0 {
			f.defs[i].proto = proto
			f.defs[i].fnStart = fn.StartByte()
		}
	}
}

// hasFuncMembers reports whether an object literal has a function member.
func hasFuncMembers(s *src, obj *sitter.Node) bool {
	for _, c := range s.named(obj) {
		if s.kind(&c) == "method_definition" || s.kind(&c) == "pair" && isFunc(s, s.field(&c, "value")) {
			return true
		}
	}
	return false
}

// topDef is the index of the top-level def named name (-1: none).
func (f *tsFile) topDef(name string) int {
	for i := len(f.defs) - 1; i >= 0; i-- {
		if f.defs[i].parent < 0 && f.defs[i].name == name {
			return i
		}
	}
	return -1
}

// decl reads a declaration.
func (f *tsFile) decl(s *src, n *sitter.Node, parent int, exported, isDefault bool) {
	name := func() string {
		if nm := s.field(n, "name"); nm != nil {
			return s.text(nm)
		}
		if isDefault {
			return "default"
		}
		return ""
	}
	switch s.kind(n) {
	case "function_declaration", "generator_function_declaration", "function_signature", "function_expression",
		"function", "arrow_function", "generator_function":
		f.addDef(s, n, s.field(n, "name"), name(), ingest.KindFunc, parent, exported)
		if isDefault && s.field(n, "name") != nil {
			f.exports = append(f.exports, tsBinding{local: name(), imported: "default"})
		}
	case "class_declaration", "abstract_class_declaration", "class":
		nm := name()
		if nm == "" {
			return
		}
		idx := f.addDef(s, n, s.field(n, "name"), nm, ingest.KindClass, parent, exported)
		if isDefault && s.field(n, "name") != nil {
			f.exports = append(f.exports, tsBinding{local: nm, imported: "default"})
		}
		for _, c := range s.named(n) {
			if s.kind(&c) == "class_heritage" {
				f.addHeritage(idx, s, &c)
			}
		}
		f.members(s, s.field(n, "body"), idx)
	case "interface_declaration":
		idx := f.addDef(s, n, s.field(n, "name"), name(), ingest.KindInterface, parent, exported)
		for _, c := range s.named(n) {
			if s.kind(&c) == "extends_type_clause" {
				f.addHeritage(idx, s, &c)
			}
		}
		f.members(s, s.field(n, "body"), idx)
	case "type_alias_declaration":
		f.addDef(s, n, s.field(n, "name"), name(), ingest.KindType, parent, exported)
	case "enum_declaration":
		f.addDef(s, n, s.field(n, "name"), name(), ingest.KindEnum, parent, exported)
	case "internal_module":
		idx := f.addDef(s, n, s.field(n, "name"), name(), ingest.KindNamespace, parent, exported)
		if idx >= 0 {
			f.stmts(s, s.field(n, "body"), idx, false)
		}
	case "lexical_declaration", "variable_declaration":
		kind := ingest.KindVar
		if n.ChildCount() > 0 && s.text(n.Child(0)) == "const" {
			kind = ingest.KindConst
		}
		for _, d := range s.named(n) {
			if s.kind(&d) != "variable_declarator" {
				continue
			}
			nm := s.field(&d, "name")
			if s.kind(nm) != "identifier" {
				continue
			}
			v := s.field(&d, "value")
			if s.kind(v) == "assignment_expression" && parent < 0 {
				// var app = exports = module.exports = {}
				f.commonJS(s, v, s.text(nm))
			}
			switch s.kind(v) {
			case "arrow_function", "function_expression", "function", "generator_function":
				if i := f.addDef(s, &d, nm, s.text(nm), ingest.KindFunc, parent, exported); i >= 0 && s.kind(v) != "arrow_function" {
					f.defs[i].fnStart = v.StartByte()
				}
			case "class":
				idx := f.addDef(s, &d, nm, s.text(nm), ingest.KindClass, parent, exported)
				for _, c := range s.named(v) {
					if s.kind(&c) == "class_heritage" {
						f.addHeritage(idx, s, &c)
					}
				}
				f.members(s, s.field(v, "body"), idx)
			case "object":
				// var obj = {f: function…, g() {…}}: its functions are
				// members of obj.
				if exported || parent < 0 && (f.holders[s.text(nm)] || hasFuncMembers(s, v)) {
					if i := f.addDef(s, &d, nm, s.text(nm), kind, parent, exported); i >= 0 && parent < 0 {
						f.objectMembers(s, v, i, false)
					}
				}
			default:
				if exported || parent < 0 && f.holders[s.text(nm)] {
					f.addDef(s, &d, nm, s.text(nm), kind, parent, exported)
				}
			}
		}
	}
}

// members reads the methods of a class or interface body.
func (f *tsFile) members(s *src, body *sitter.Node, class int) {
	for _, m := range s.named(body) {
		var nameNode *sitter.Node
		switch s.kind(&m) {
		case "method_definition", "method_signature", "abstract_method_signature":
			nameNode = s.field(&m, "name")
		case "property_signature":
			if nm := s.field(&m, "name"); nm != nil {
				setVal(f.ftypes, class, s.text(nm), declaredVal(s, s.field(&m, "type"), nil))
			}
		case "public_field_definition", "field_definition":
			if nm := s.field(&m, "name"); nm != nil && !isFunc(s, s.field(&m, "value")) {
				setVal(f.ftypes, class, s.text(nm), declaredVal(s, s.field(&m, "type"), s.field(&m, "value")))
			}
			switch s.kind(s.field(&m, "value")) {
			case "arrow_function", "function_expression", "function":
				nameNode = s.field(&m, "name")
				if nameNode == nil {
					nameNode = s.field(&m, "property")
				}
			}
		}
		switch s.kind(nameNode) {
		case "property_identifier", "private_property_identifier", "identifier":
			f.addDef(s, &m, nameNode, s.text(nameNode), ingest.KindMethod, class, !isPrivateMember(s, &m, nameNode))
		}
		if s.kind(&m) == "method_definition" && s.text(nameNode) == "constructor" {
			f.paramProperties(s, s.field(&m, "parameters"), class)
		}
	}
}

// params are the parameters of a formal_parameters list without a this
// parameter (this: T declares this, not an argument).
func params(s *src, list *sitter.Node) []sitter.Node {
	var out []sitter.Node
	for _, p := range s.named(list) {
		switch s.kind(&p) {
		case "required_parameter", "optional_parameter":
			if s.kind(s.field(&p, "pattern")) == "this" {
				continue
			}
		case "comment":
			continue
		}
		out = append(out, p)
	}
	return out
}

// callbackParams reads, for each parameter of function type ((s:
// Subscriber<T>) => void), the types of that function's parameters.
func callbackParams(s *src, list *sitter.Node) map[int][][]string {
	var out map[int][][]string
	for k, p := range params(s, list) {
		ft := s.field(&p, "type")
		if c := s.named(ft); s.kind(ft) == "type_annotation" && len(c) == 1 {
			ft = &c[0]
		}
		if s.kind(ft) != "function_type" {
			continue
		}
		var types [][]string
		for _, q := range params(s, s.field(ft, "parameters")) {
			ch, _ := tsTypeChain(s, s.field(&q, "type"))
			types = append(types, ch)
		}
		if out == nil {
			out = make(map[int][][]string)
		}
		out[k] = types
	}
	return out
}

// callback records the parameters of a function passed as an argument
// (f((a, b) => …), new C(function (s) {…})) without annotations: each is
// what the callee declares its function parameter receives there.
func (f *tsFile) callback(s *src, fn *sitter.Node, scope int) {
	args := fn.Parent()
	call := args.Parent()
	var callee []string
	how := byte('p')
	switch s.kind(call) {
	case "call_expression":
		callee = tsChain(s, s.field(call, "function"))
	case "new_expression":
		callee, how = tsChain(s, s.field(call, "constructor")), 'q'
	}
	if callee == nil {
		return
	}
	arg := -1
	for k, a := range s.named(args) {
		if a.StartByte() == fn.StartByte() {
			arg = k
		}
	}
	var ps []sitter.Node
	if p := s.field(fn, "parameter"); p != nil {
		ps = []sitter.Node{*p}
	} else {
		ps = params(s, s.field(fn, "parameters"))
	}
	for j, p := range ps {
		name, v := &p, tsVal{chain: callee, how: how, arg: arg, param: j}
		if k := s.kind(&p); k == "required_parameter" || k == "optional_parameter" {
			name = s.field(&p, "pattern")
			if ann := s.field(&p, "type"); ann != nil {
				v = declaredVal(s, ann, nil) // annotated: its own type
			}
		}
		if s.kind(name) == "identifier" {
			if f.cbvals == nil {
				f.cbvals = make(map[string][]tsCallbackVal)
			}
			f.cbvals[s.text(name)] = append(f.cbvals[s.text(name)], tsCallbackVal{start: fn.StartByte(), end: fn.EndByte(), v: v})
		}
	}
}

// paramProperties reads a constructor's parameter properties
// (constructor(private readonly http: Http)): fields of the class.
func (f *tsFile) paramProperties(s *src, params *sitter.Node, class int) {
	for _, p := range s.named(params) {
		switch s.kind(&p) {
		case "required_parameter", "optional_parameter":
		default:
			continue
		}
		prop := false
		for _, c := range s.named(&p) {
			if k := s.kind(&c); k == "accessibility_modifier" || k == "override_modifier" || k == "readonly" {
				prop = true
			}
		}
		for i := uint(0); i < p.ChildCount(); i++ {
			if s.text(p.Child(i)) == "readonly" {
				prop = true
			}
		}
		if pat := s.field(&p, "pattern"); prop && s.kind(pat) == "identifier" {
			setVal(f.ftypes, class, s.text(pat), declaredVal(s, s.field(&p, "type"), nil))
		}
	}
}

// declaredVal is the value a declaration gives a name: its type
// annotation's type, else its initializer's (new C(…), a call, an awaited
// call); tsVal{} when neither says.
func declaredVal(s *src, ann, value *sitter.Node) tsVal {
	if ann != nil {
		if ch := tsElemChain(s, ann); ch != nil {
			return tsVal{chain: ch, how: 'a'}
		}
		if ch, _ := tsTypeChain(s, ann); ch != nil {
			return tsVal{chain: ch, how: 'i'}
		}
		return tsVal{}
	}
	how := byte('c')
	if s.kind(value) == "await_expression" {
		if c := s.named(value); len(c) == 1 {
			value, how = &c[0], 'w'
		}
	}
	switch s.kind(value) {
	case "new_expression":
		if ch := tsChain(s, s.field(value, "constructor")); ch != nil && how == 'c' {
			return tsVal{chain: ch, how: 'i'}
		}
	case "call_expression":
		if ch := tsChain(s, s.field(value, "function")); ch != nil {
			return tsVal{chain: ch, how: how}
		}
	}
	return tsVal{}
}

// tsElemChain is the element type's chain of an array type (T[],
// Array<T>, ReadonlyArray<T>, Set<T>, ReadonlySet<T>, Iterable<T>), nil
// for any other type.
func tsElemChain(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "type_annotation", "parenthesized_type", "readonly_type":
		if c := s.named(n); len(c) == 1 {
			return tsElemChain(s, &c[0])
		}
	case "array_type":
		if c := s.named(n); len(c) == 1 {
			ch, _ := tsTypeChain(s, &c[0])
			return ch
		}
	case "generic_type":
		switch s.text(s.field(n, "name")) {
		case "Array", "ReadonlyArray", "Set", "ReadonlySet", "Iterable", "IterableIterator":
			if args := s.named(s.field(n, "type_arguments")); len(args) == 1 {
				ch, _ := tsTypeChain(s, &args[0])
				return ch
			}
		}
	}
	return nil
}

// tsTypeChain is the name chain of the class or interface a type (or type
// annotation) names: T, a.T, T<…>, T | null | undefined; awaited is T
// of Promise<T> (else the type itself). nil for any other type.
func tsTypeChain(s *src, n *sitter.Node) (ch, awaited []string) {
	switch s.kind(n) {
	case "type_annotation", "parenthesized_type":
		if c := s.named(n); len(c) == 1 {
			return tsTypeChain(s, &c[0])
		}
	case "type_identifier", "nested_type_identifier":
		ch = tsChain(s, n)
		return ch, ch
	case "generic_type":
		ch = tsChain(s, s.field(n, "name"))
		awaited = ch
		if slices.Equal(ch, []string{"Promise"}) {
			awaited = nil
			if args := s.named(s.field(n, "type_arguments")); len(args) == 1 {
				awaited, _ = tsTypeChain(s, &args[0])
			}
		}
		return ch, awaited
	case "union_type":
		// T | null | undefined: T.
		var one *sitter.Node
		for _, c := range s.named(n) {
			switch {
			case s.kind(&c) == "literal_type" && s.text(&c) == "null",
				s.kind(&c) == "predefined_type" && (s.text(&c) == "undefined" || s.text(&c) == "null"):
			case one != nil:
				return nil, nil
			default:
				one = &c
			}
		}
		if one != nil {
			return tsTypeChain(s, one)
		}
	}
	return nil, nil
}

func isPrivateMember(s *src, m, name *sitter.Node) bool {
	if strings.HasPrefix(s.text(name), "#") {
		return true
	}
	for _, c := range s.named(m) {
		if s.kind(&c) == "accessibility_modifier" && s.text(&c) != "public" {
			return true
		}
	}
	return false
}

// addDef appends a def (unless it has no name) and returns its index.
func (f *tsFile) addDef(s *src, n, nameNode *sitter.Node, name, kind string, parent int, exported bool) int {
	if name == "" {
		return -1
	}
	d := tsDef{extent: extent{parent: parent, start: n.StartByte(), end: n.EndByte()}, name: name, qual: name, kind: kind,
		line0: startLine(n), line1: endLine(n), exported: exported}
	if nameNode != nil {
		d.nameStart = nameNode.StartByte()
	}
	if parent >= 0 {
		d.qual = f.defs[parent].qual + "." + name
	}
	switch s.kind(n) {
	case "function_signature", "method_signature", "abstract_method_signature":
		d.sig = true
	case "function_declaration", "generator_function_declaration", "function_expression", "function",
		"generator_function", "method_definition":
		d.fnStart = n.StartByte()
	}
	if kind == ingest.KindFunc || kind == ingest.KindMethod {
		fn := n
		switch s.kind(n) {
		case "variable_declarator", "public_field_definition", "field_definition", "pair":
			fn = s.field(n, "value")
		}
		d.ret, d.retAwait = tsTypeChain(s, s.field(fn, "return_type"))
		d.cbParams = callbackParams(s, s.field(fn, "parameters"))
	}
	f.defs = append(f.defs, d)
	return len(f.defs) - 1
}

// addHeritage records what a class_heritage or extends_type_clause names
// as def i's heritage, and what it extends (not implements) apart.
func (f *tsFile) addHeritage(i int, s *src, n *sitter.Node) {
	f.heritageAt = append(f.heritageAt, [2]uint{n.StartByte(), n.EndByte()})
	d := &f.defs[i]
	var walk func(n *sitter.Node, ext bool)
	walk = func(n *sitter.Node, ext bool) {
		for _, c := range s.named(n) {
			switch s.kind(&c) {
			case "extends_clause", "extends_type_clause":
				walk(&c, true)
			case "implements_clause":
				walk(&c, false)
			case "type_arguments":
			default:
				if ch := tsChain(s, &c); ch != nil {
					d.heritage = append(d.heritage, ch)
					if ext {
						d.extends = append(d.extends, ch)
					}
				}
			}
		}
	}
	walk(n, s.kind(n) == "extends_type_clause")
}

// inHeritage reports whether a byte offset is inside an implements or
// extends clause.
func (f *tsFile) inHeritage(p uint) bool {
	for _, r := range f.heritageAt {
		if r[0] <= p && p < r[1] {
			return true
		}
	}
	return false
}

// tsChain turns a callee, constructor or type into a name chain (nil when
// it is not one).
func tsChain(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "identifier", "type_identifier", "property_identifier", "private_property_identifier":
		return []string{s.text(n)}
	case "this":
		return []string{"this"}
	case "super":
		return []string{"super"}
	case "member_expression":
		obj := tsChain(s, s.field(n, "object"))
		prop := s.field(n, "property")
		if obj == nil || prop == nil {
			return nil
		}
		return append(obj, s.text(prop))
	case "nested_type_identifier", "nested_identifier":
		var out []string
		for _, c := range s.named(n) {
			ch := tsChain(s, &c)
			if ch == nil {
				return nil
			}
			out = append(out, ch...)
		}
		return out
	case "generic_type":
		return tsChain(s, s.field(n, "name"))
	case "call_expression":
		// a.b().c: the call is its callee's last name with "()" added.
		ch := tsChain(s, s.field(n, "function"))
		if len(ch) == 0 || ch[len(ch)-1] == "super" {
			return nil
		}
		ch[len(ch)-1] += "()"
		return ch
	case "subscript_expression":
		// x[i]: an element (segment "[]"); x["name"]: the property.
		obj := tsChain(s, s.field(n, "object"))
		if obj == nil {
			return nil
		}
		if idx := s.field(n, "index"); s.kind(idx) == "string" {
			return append(obj, stringValue(s, idx))
		}
		return append(obj, tsElem)
	case "non_null_expression", "parenthesized_expression":
		if c := s.named(n); len(c) == 1 {
			return tsChain(s, &c[0])
		}
	}
	return nil
}

// tsBindNames are the names a binding pattern binds.
func tsBindNames(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "identifier", "shorthand_property_identifier_pattern":
		return []string{s.text(n)}
	case "object_pattern", "array_pattern", "rest_pattern":
		var out []string
		for _, c := range s.named(n) {
			out = append(out, tsBindNames(s, &c)...)
		}
		return out
	case "pair_pattern":
		return tsBindNames(s, s.field(n, "value"))
	case "assignment_pattern", "object_assignment_pattern":
		return tsBindNames(s, s.field(n, "left"))
	}
	return nil
}

// isTestCall: describe("…", …), it(…), test(…), also .each/.only/.skip.
func isTestCall(s *src, call *sitter.Node) bool {
	ch := tsChain(s, s.field(call, "function"))
	if len(ch) == 0 {
		return false
	}
	switch ch[0] {
	case "describe", "it", "test", "suite":
	default:
		return false
	}
	args := s.named(s.field(call, "arguments"))
	return len(args) > 0 && (s.kind(&args[0]) == "string" || s.kind(&args[0]) == "template_string")
}

func stringValue(s *src, n *sitter.Node) string {
	t := s.text(n)
	if len(t) >= 2 {
		return t[1 : len(t)-1]
	}
	return t
}

// isTSTestFile: x.test.ts, x.spec.js, files under __tests__.
func isTSTestFile(rel string) bool {
	base := path.Base(rel)
	return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(rel, "__tests__/") || strings.Contains(rel, "/__tests__/")
}
