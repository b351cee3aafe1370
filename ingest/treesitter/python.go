package treesitter

import (
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"

	"github.com/memctl/memctl/ingest"
	sitter "github.com/tree-sitter/go-tree-sitter"
	pygrammar "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// Python front-end: what one file declares and uses (parsePython, on the
// worker pool), then names resolved across the tree (resolvePython).

var python = language{
	name:  ingest.LangPython,
	rules: 2, // 2: typed values (annotations, containers, generics, with, walrus), nested functions, decorators, properties, unresolved counts
	grammars: []grammar{{name: "python", exts: []string{".py"},
		lang: func() *sitter.Language { return sitter.NewLanguage(pygrammar.Language()) }, query: pyQuery}},
	parse:   func(w *worker, s *src, root *sitter.Node) any { return parsePython(w, s, root) },
	facts:   reflect.TypeFor[*pyFile](),
	resolve: resolvePython,
	// A root that is itself a package names its modules below the
	// packages above it.
	prepare: func(run *runCtx, files []*parsedFile) {
		run.pyPrefix = pythonRootPrefix(run.root, run.dirs, files)
	},
	hashNote: func(run *runCtx) string { return "prefix " + run.pyPrefix },
}

// pyQuery captures what a Python file uses. Declarations are read by a
// walk of the statements instead (parsePython), which knows their nesting.
// Mentions (@ref) are every attribute chain and the names in the places
// a function is passed as a value or a class named in a type (@ident,
// kept by pyRefIdent: cheaper to compile than a pattern per place); a callee,
// a decorator or a class's bases among them are left to their own
// captures (parsePython drops them by range).
//
// Every pattern is a node kind alone: pyExpand reads the fields the
// places need from the node (the callee of a call, the target of an
// assignment…). A pattern with child steps makes tree-sitter analyse
// the grammar's parse table for its parent kind when the query is
// compiled — about 7 ms of a one-shot refresh's CPU for these places,
// against about 1.5 ms for the kinds alone — and a process compiles the
// query to parse a single edited file. pyQueryPlaces (python_query_test.go)
// writes the places as patterns: the second implementation the facts are
// compared with.
const pyQuery = `
(call) @call
(decorator) @decorator
(attribute) @ref
(identifier) @ident
(import_statement) @import
(import_from_statement) @import
(parameters) @params
(lambda_parameters) @params
(function_definition) @def
(class_definition) @def
(assignment) @assign
(augmented_assignment) @augassign
(for_statement) @for
(for_in_clause) @for
(with_item) @with
(named_expression) @walrus
(as_pattern_target) @bind
(global_statement) @global
(nonlocal_statement) @global
`

// pyExpand turns a capture of pyQuery into the captures parsePython
// reads, each the node a place names:
//
//	@callee    the function of a call
//	@deco      an identifier or attribute child of a decorator
//	@localdef  the identifier naming a function or class
//	@assign    an assignment, and @bind its left side
//	@bind      the left side of an augmented assignment, of a for
//	           statement or clause, the name of a named expression, an
//	           as_pattern_target
//	@for       a for statement or clause whose left side is an
//	           identifier, with a right side
//	@with      a with item binding an identifier: value (as_pattern alias:
//	           (as_pattern_target (identifier)))
//	@walrus    a named expression whose name is an identifier
//
// (named children only, as (_) in a pattern); the others as they are.
func pyExpand(s *src, c capture, emit func(capture)) {
	n := &c.node
	named := func(x *sitter.Node) bool { return x != nil && x.IsNamed() }
	bindLeft := func() *sitter.Node {
		l := s.field(n, "left")
		if named(l) {
			emit(capture{name: "bind", node: *l})
		}
		return l
	}
	switch c.name {
	case "call":
		if f := s.field(n, "function"); named(f) {
			emit(capture{name: "callee", node: *f})
		}
	case "decorator":
		for _, ch := range s.named(n) {
			if k := s.kind(&ch); k == "identifier" || k == "attribute" {
				emit(capture{name: "deco", node: ch})
			}
		}
	case "def":
		if nm := s.field(n, "name"); nm != nil && s.kind(nm) == "identifier" {
			emit(capture{name: "localdef", node: *nm})
		}
	case "assign":
		emit(c)
		bindLeft()
	case "augassign":
		bindLeft()
	case "for":
		l := bindLeft()
		if l == nil || s.kind(l) != "identifier" {
			return
		}
		for i := uint32(0); i < uint32(n.ChildCount()); i++ {
			if n.FieldNameForChild(i) == "right" && named(n.Child(uint(i))) {
				emit(c) // once, however many right sides a clause has (as the pattern matched)
				return
			}
		}
	case "with":
		v := s.field(n, "value")
		if s.kind(v) != "as_pattern" {
			return
		}
		if a := s.field(v, "alias"); s.kind(a) == "as_pattern_target" {
			for _, ch := range s.named(a) {
				if s.kind(&ch) == "identifier" {
					emit(c)
				}
			}
		}
	case "walrus":
		nm, v := s.field(n, "name"), s.field(n, "value")
		if named(nm) {
			emit(capture{name: "bind", node: *nm})
		}
		if nm != nil && s.kind(nm) == "identifier" && named(v) {
			emit(c)
		}
	default:
		emit(c)
	}
}

// pyFile is what one Python file declares and uses.
type pyFile struct {
	defs    []pyDef
	imports []pyImport
	calls   []pyCall
	locals  scopeNames // function def → names bound in it (parameters, assignments, nested defs…)
	globals scopeNames // function def → names declared global or nonlocal (not its own)
	// vars are the values assigned to names, by scope: a function def, a
	// class def (its body) or -1 (module level).
	vars map[int]map[string][]pyValue
	// attrs are the values assigned to instance attributes (self.x = …
	// in a method), by class def.
	attrs map[int]map[string][]pyValue
}

// pyDef is a class or function, at any depth.
type pyDef struct {
	extent              // parent: the enclosing def, -1 at module level; start: its first decorator
	name, qual   string // qual: "Class.method", "outer.inner" within the module
	kind         string
	line0, line1 int
	bases        [][]string // classes: base expressions that are name chains
	baseArgs     [][]string // classes: each base's type arguments (Base[A, B]), dotted ("" when not a name)
	basesStart   uint       // classes: byte range of the bases' list
	basesEnd     uint
	static       bool                // @staticmethod: no self
	classMethod  bool                // @classmethod (and __init_subclass__, __class_getitem__): the first parameter is the class
	property     bool                // @property (also cached_property, …setter): an attribute access calls it
	selfName     string              // methods: the first parameter
	params       map[string][]string // parameter → its annotation (a type chain)
	ret          []string            // the return annotation (a type chain)
}

// pyValue is one value bound to a name: its annotation and the
// expression assigned (a chain, ["None"], or nil when neither tells).
type pyValue struct {
	ann, expr []string
	scope     int // the def whose scope evaluates it (-1: module level)
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
// (["self", "save"], ["super()", "__init__"], ["os", "path", "join"],
// ["Engine()", "run"]), or a mention of one that is not called (ref).
type pyCall struct {
	scope int // innermost def, -1 at module level
	chain []string
	line  int
	ref   bool // a mention, not a call (a property read still runs it)
	deco  bool // a decorator: named in the scope around the def it decorates
}

func parsePython(w *worker, s *src, root *sitter.Node) *pyFile {
	return parsePythonWith(w, s, root, pyExpand)
}

// parsePythonWith is parsePython over the captures expand makes of those
// of s's query (the test's second implementation passes its own).
func parsePythonWith(w *worker, s *src, root *sitter.Node, expand func(*src, capture, func(capture))) *pyFile {
	f := &pyFile{locals: make(scopeNames), globals: make(scopeNames),
		vars: make(map[int]map[string][]pyValue), attrs: make(map[int]map[string][]pyValue)}
	f.stmts(s, root, -1)
	type pyRef struct {
		pyCall
		start, end uint
	}
	var refs []pyRef
	used := make(map[[2]uint]bool) // callees and decorators
	handle := func(c capture) {
		n := &c.node
		scope := scopeAt(f.defs, n.StartByte())
		switch c.name {
		case "callee":
			used[[2]uint{n.StartByte(), n.EndByte()}] = true
			if ch := pyChain(s, n); ch != nil {
				f.calls = append(f.calls, pyCall{scope: scope, chain: ch, line: startLine(n)})
			} else {
				f.calls = append(f.calls, pyCall{scope: scope, line: startLine(n)})
			}
		case "deco":
			used[[2]uint{n.StartByte(), n.EndByte()}] = true
			f.calls = append(f.calls, pyCall{scope: scope, chain: pyChain(s, n), line: startLine(n), deco: true})
		case "ident":
			if !pyRefIdent(n) {
				return
			}
			fallthrough
		case "ref":
			if ch := pyChain(s, n); ch != nil {
				refs = append(refs, pyRef{pyCall{scope: scope, chain: ch, line: startLine(n), ref: true}, n.StartByte(), n.EndByte()})
			}
		case "import":
			f.imports = append(f.imports, pyParseImport(s, n, f.funcScope(scope)))
		case "params":
			f.locals.bind(f.funcScope(scope), pyBindNames(s, n))
		case "localdef":
			if scope >= 0 && f.defs[scope].nameStart == n.StartByte() {
				scope = f.defs[scope].parent // a def's name is bound in the scope around it
			}
			f.locals.bind(f.funcScope(scope), []string{s.text(n)})
		case "assign":
			f.assign(s, n, scope)
		case "with":
			// with cm as x: x is what cm.__enter__() returns.
			as := s.field(n, "value")
			if c := s.named(as); len(c) == 2 {
				if ch := pyChain(s, &c[0]); ch != nil {
					f.bindValue(scope, s.text(s.field(as, "alias")), pyValue{expr: append(ch, "__enter__()"), scope: scope})
				}
			}
		case "walrus":
			// (x := v): a value of x, in the scope around it.
			f.bindValue(scope, s.text(s.field(n, "name")), pyValue{expr: pyValueChain(s, s.field(n, "value")), scope: scope})
		case "for":
			// for x in xs: x is an element of xs.
			if ch := pyChain(s, s.field(n, "right")); ch != nil {
				f.bindValue(scope, s.text(s.field(n, "left")), pyValue{expr: append(ch, pyIter), scope: scope})
			}
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
	}
	w.captures(s, root, func(c capture) { expand(s, c, handle) })
	for _, r := range refs {
		if !used[[2]uint{r.start, r.end}] && !f.inBases(r.start) {
			f.calls = append(f.calls, r.pyCall)
		}
	}
	return f
}

// inBases reports whether offset p lies in the bases of a class.
func (f *pyFile) inBases(p uint) bool {
	i := scopeAt(f.defs, p)
	return i >= 0 && f.defs[i].basesStart <= p && p < f.defs[i].basesEnd
}

// assign records the value an assignment binds to a plain name (in the
// function, class body or module around it) or to self.name in a method.
func (f *pyFile) assign(s *src, n *sitter.Node, scope int) {
	left := s.field(n, "left")
	v := pyValue{ann: pyAnnotation(s, s.field(n, "type")), expr: pyValueChain(s, s.field(n, "right")), scope: scope}
	if v.ann == nil && v.expr == nil && s.field(n, "right") == nil {
		return
	}
	switch s.kind(left) {
	case "identifier":
		f.bindValue(scope, s.text(left), v)
	case "attribute":
		obj := s.field(left, "object")
		if scope < 0 || s.kind(obj) != "identifier" {
			return
		}
		d := f.defs[scope]
		if d.parent < 0 || f.defs[d.parent].kind != ingest.KindClass || d.selfName == "" || d.classMethod || s.text(obj) != d.selfName {
			return
		}
		if f.attrs[d.parent] == nil {
			f.attrs[d.parent] = make(map[string][]pyValue)
		}
		name := s.text(s.field(left, "attribute"))
		f.attrs[d.parent][name] = append(f.attrs[d.parent][name], v)
	}
}

// bindValue records a value of a plain name: a def's scope is the body; a
// class body's names belong to the class.
func (f *pyFile) bindValue(scope int, name string, v pyValue) {
	if f.vars[scope] == nil {
		f.vars[scope] = make(map[string][]pyValue)
	}
	f.vars[scope][name] = append(f.vars[scope][name], v)
}

// stmts reads the declarations among the statements below n: module,
// class and function bodies and the blocks of compound statements there.
func (f *pyFile) stmts(s *src, n *sitter.Node, parent int) {
	for _, c := range s.named(n) {
		switch s.kind(&c) {
		case "class_definition", "function_definition":
			f.def(s, &c, &c, parent, nil)
		case "decorated_definition":
			var decs [][]string
			for _, d := range s.named(&c) {
				if s.kind(&d) == "decorator" {
					for _, e := range s.named(&d) {
						if ch := pyChain(s, &e); len(ch) > 0 {
							decs = append(decs, ch)
						}
					}
				}
			}
			if d := s.field(&c, "definition"); d != nil {
				f.def(s, d, &c, parent, decs)
			}
		case "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause", "except_group_clause",
			"finally_clause", "with_statement", "for_statement", "while_statement", "block",
			"match_statement", "case_clause":
			f.stmts(s, &c, parent)
		}
	}
}

// def reads a class or function; outer is the node it starts at (its
// decorated_definition when decorated).
func (f *pyFile) def(s *src, n, outer *sitter.Node, parent int, decorators [][]string) {
	nameNode := s.field(n, "name")
	if nameNode == nil {
		return
	}
	d := pyDef{extent: extent{parent: parent, start: outer.StartByte(), end: n.EndByte(), nameStart: nameNode.StartByte()},
		name: s.text(nameNode), line0: startLine(n), line1: endLine(n)}
	d.qual = d.name
	if parent >= 0 {
		d.qual = f.defs[parent].qual + "." + d.name
	}
	idx := len(f.defs)
	if s.kind(n) == "class_definition" {
		d.kind = ingest.KindClass
		if sc := s.field(n, "superclasses"); sc != nil {
			d.basesStart, d.basesEnd = sc.StartByte(), sc.EndByte()
		}
		for _, b := range s.named(s.field(n, "superclasses")) {
			var args []string
			if s.kind(&b) == "subscript" { // a generic base: Base[T]
				for _, a := range s.named(&b)[1:] {
					args = append(args, strings.Join(pyAnnotation(s, &a), "."))
				}
				b = *s.field(&b, "value")
			}
			if ch := pyChain(s, &b); len(ch) > 0 {
				d.bases = append(d.bases, ch)
				d.baseArgs = append(d.baseArgs, args)
			}
		}
		f.defs = append(f.defs, d)
		f.stmts(s, s.field(n, "body"), idx)
		return
	}
	d.kind = ingest.KindFunc
	for _, dec := range decorators {
		switch dec[len(dec)-1] {
		case "staticmethod":
			d.static = true
		case "classmethod":
			d.classMethod = true
		case "property", "cached_property", "setter", "getter", "deleter":
			d.property = true
		}
	}
	d.ret = pyAnnotation(s, s.field(n, "return_type"))
	for _, dec := range decorators {
		if last := dec[len(dec)-1]; (last == "contextmanager" || last == "asynccontextmanager") &&
			len(d.ret) >= 3 && d.ret[0] == pyContainerMarker {
			// A generator made a context manager: with f() as x gives
			// x what it yields (Iterator[T], Generator[T, …]).
			switch b := d.ret[1]; b[strings.LastIndexByte(b, '.')+1:] {
			case "Iterator", "Generator", "AsyncIterator", "AsyncGenerator":
				d.ret = []string{pyContainerMarker, "", d.ret[2]}
			}
		}
	}
	for i, p := range s.named(s.field(n, "parameters")) {
		names := pyBindNames(s, &p)
		if len(names) == 0 {
			continue
		}
		if i == 0 {
			d.selfName = names[0]
		}
		if ann := pyAnnotation(s, s.field(&p, "type")); ann != nil {
			if d.params == nil {
				d.params = make(map[string][]string)
			}
			d.params[names[0]] = ann
		}
	}
	if parent >= 0 && f.defs[parent].kind == ingest.KindClass {
		d.kind = ingest.KindMethod
		switch d.name {
		case "__new__":
			d.static = true
		case "__init_subclass__", "__class_getitem__":
			d.classMethod = true
		}
	}
	if d.kind != ingest.KindMethod || d.static {
		d.selfName = ""
	}
	f.defs = append(f.defs, d)
	f.stmts(s, s.field(n, "body"), idx)
}

// funcScope is scope when it is a function or method, else -1 (names
// bound in a class body or at module level are not locals of anything).
func (f *pyFile) funcScope(scope int) int {
	if scope >= 0 && f.defs[scope].kind != ingest.KindClass {
		return scope
	}
	return -1
}

// Chain segments that are not names: a subscript (x[k]) and an element of
// an iteration (for v in x: v is x followed by pyIter).
const (
	pySub  = "[]"
	pyIter = "[*]"
)

// pyChain turns a callee into a name chain, nil when it is not one. A
// call inside the chain is its callee's last name with "()" added
// (Engine("x").run: ["Engine()", "run"]; super().m: ["super()", "m"]); a
// subscript is a segment pySub (self.tags[k].m: ["self", "tags", "[]",
// "m"]).
func pyChain(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "identifier":
		return []string{s.text(n)}
	case "subscript":
		if v := pyChain(s, s.field(n, "value")); v != nil {
			return append(v, pySub)
		}
		return nil
	case "attribute":
		obj := pyChain(s, s.field(n, "object"))
		if obj == nil {
			return nil
		}
		return append(obj, s.text(s.field(n, "attribute")))
	case "call":
		fn := s.field(n, "function")
		if s.kind(fn) == "identifier" && s.text(fn) == "super" {
			if args := s.field(n, "arguments"); args != nil && args.NamedChildCount() > 0 {
				return nil // super(C, self): not the enclosing class's bases
			}
			return []string{"super()"}
		}
		ch := pyChain(s, fn)
		if ch == nil {
			return nil
		}
		ch[len(ch)-1] += "()"
		return ch
	case "parenthesized_expression":
		if c := s.named(n); len(c) == 1 {
			return pyChain(s, &c[0])
		}
	}
	return nil
}

// pyValueChain is the chain of an assigned expression, ["None"] for None,
// nil for anything else.
func pyValueChain(s *src, n *sitter.Node) []string {
	switch s.kind(n) {
	case "none":
		return []string{"None"}
	case "await":
		return nil
	}
	return pyChain(s, n)
}

// pyAnnotation reads a type annotation as the chain of the class it
// declares: Name, mod.Name, "Name" (a forward reference), Name | None,
// Optional[Name], Generic[T] (the generic class); nil for anything else.
func pyAnnotation(s *src, n *sitter.Node) []string {
	if n == nil {
		return nil
	}
	switch s.kind(n) {
	case "type":
		if c := s.named(n); len(c) == 1 {
			return pyAnnotation(s, &c[0])
		}
	case "identifier", "attribute":
		return pyChain(s, n)
	case "none":
		return []string{"None"}
	case "string":
		return pyAnnotationText(strings.Trim(s.text(n), `"'`))
	case "binary_operator":
		l, r := pyAnnotation(s, s.field(n, "left")), pyAnnotation(s, s.field(n, "right"))
		return pyOptional(l, r)
	case "subscript", "generic_type":
		var base []string
		var args []sitter.Node
		if s.kind(n) == "subscript" {
			base = pyChain(s, s.field(n, "value"))
			args = s.named(n)[1:]
		} else {
			c := s.named(n)
			if len(c) != 2 {
				return nil
			}
			base = pyChain(s, &c[0])
			args = s.named(&c[1])
		}
		if base == nil {
			return nil
		}
		switch base[len(base)-1] {
		case "Optional":
			if len(args) == 1 {
				return pyAnnotation(s, &args[0])
			}
			return nil
		case "Union":
			if len(args) == 2 {
				return pyOptional(pyAnnotation(s, &args[0]), pyAnnotation(s, &args[1]))
			}
			return nil
		case "Annotated":
			if len(args) > 0 {
				return pyAnnotation(s, &args[0])
			}
			return nil
		case "type", "Type":
			if len(args) == 1 {
				if a := pyAnnotation(s, &args[0]); a != nil && a[0] != "None" && a[0] != "type[]" {
					return append([]string{"type[]"}, a...)
				}
			}
			return nil
		}
		if c := pyContainerAnnotation(s, base, args); c != nil {
			return c
		}
		return base
	}
	return nil
}

// pyContainerMarker heads the annotation of a standard container:
// [pyContainerMarker, base, type arguments…], each a dotted chain (""
// when not a name; base "" for what a @contextmanager function returns).
const pyContainerMarker = "container[]"

// pyContainer describes a standard generic container (of builtins,
// typing, collections, collections.abc, contextvars, queue): the type
// argument iterating it gives, the one subscripting it gives (-1: none),
// and the ones its methods return, as typeshed declares them.
type pyContainer struct {
	iter, sub int
	methods   map[string]int
}

// pyContainers are the standard generic containers by name.
var pyContainers = func() map[string]pyContainer {
	m := make(map[string]pyContainer)
	for _, n := range strings.Fields(`list List MutableSequence deque Deque`) {
		m[n] = pyContainer{0, 0, map[string]int{"pop": 0, "popleft": 0}}
	}
	for _, n := range strings.Fields(`Sequence tuple Tuple`) { // tuple[T, ...]
		m[n] = pyContainer{0, 0, nil}
	}
	for _, n := range strings.Fields(`set Set MutableSet`) {
		m[n] = pyContainer{0, -1, map[string]int{"pop": 0}}
	}
	for _, n := range strings.Fields(`frozenset FrozenSet AbstractSet Iterable Iterator Collection Reversible
		Generator KeysView ValuesView`) {
		m[n] = pyContainer{0, -1, nil}
	}
	for _, n := range strings.Fields(`dict Dict MutableMapping OrderedDict DefaultDict defaultdict ChainMap`) {
		m[n] = pyContainer{0, 1, map[string]int{"get": 1, "pop": 1, "setdefault": 1}}
	}
	m["Mapping"] = pyContainer{0, 1, map[string]int{"get": 1}}
	m["ContextVar"] = pyContainer{-1, -1, map[string]int{"get": 0}}
	for _, n := range strings.Fields(`ContextManager AbstractContextManager AsyncContextManager
		AbstractAsyncContextManager`) {
		m[n] = pyContainer{-1, -1, map[string]int{"__enter__": 0, "__aenter__": 0}}
	}
	// What a @contextmanager function returns (base ""): a context
	// manager of what it yields.
	m[""] = m["ContextManager"]
	for _, n := range strings.Fields(`AsyncIterator AsyncGenerator`) {
		m[n] = pyContainer{-1, -1, nil} // async for: not followed
	}
	for _, n := range strings.Fields(`Queue SimpleQueue LifoQueue PriorityQueue`) {
		m[n] = pyContainer{-1, -1, map[string]int{"get": 0, "get_nowait": 0}}
	}
	return m
}()

// pyContainerAnnotation reads base[args] as a standard container's
// annotation, nil when it is not one (a tuple only as tuple[T, ...]).
func pyContainerAnnotation(s *src, base []string, args []sitter.Node) []string {
	name := base[len(base)-1]
	if _, ok := pyContainers[name]; !ok {
		return nil
	}
	if name == "tuple" || name == "Tuple" {
		if len(args) != 2 || strings.TrimSpace(s.text(&args[1])) != "..." {
			return nil
		}
		args = args[:1]
	}
	out := []string{pyContainerMarker, strings.Join(base, ".")}
	for i := range args {
		a := pyAnnotation(s, &args[i])
		for _, seg := range a {
			if !pyIdent(seg) {
				a = nil // a nested container, None, type[…]: not followed
				break
			}
		}
		out = append(out, strings.Join(a, "."))
	}
	return out
}

// pyOptional is the one of two annotations that is not None, when the
// other is.
func pyOptional(a, b []string) []string {
	switch {
	case len(b) == 1 && b[0] == "None":
		return a
	case len(a) == 1 && a[0] == "None":
		return b
	}
	return nil
}

// pyAnnotationText reads a forward reference ("Flask", "te.Self",
// "App | None", "t.Optional[App]").
func pyAnnotationText(t string) []string {
	t = strings.TrimSpace(t)
	if a, b, ok := strings.Cut(t, "|"); ok {
		return pyOptional(pyAnnotationText(a), pyAnnotationText(b))
	}
	if open := strings.IndexByte(t, '['); open > 0 && strings.HasSuffix(t, "]") {
		base, arg := t[:open], t[open+1:len(t)-1]
		switch base[strings.LastIndexByte(base, '.')+1:] {
		case "Optional":
			return pyAnnotationText(arg)
		case "Union", "Annotated":
			return nil
		}
		t = base
	}
	parts := strings.Split(t, ".")
	for _, p := range parts {
		if !pyIdent(p) {
			return nil
		}
	}
	return parts
}

func pyIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
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

// pyRefIdent reports whether identifier n is a plain name in a place that
// makes it a mention (@ref): the kind of the node around it and, for some,
// the field it is. One (identifier) capture filtered here compiles in
// about 7 ms where these places as 18 query patterns took about 17
// (python_ref_test.go compares the two).
func pyRefIdent(n *sitter.Node) bool {
	p := n.Parent()
	if p == nil {
		return false
	}
	field := ""
	switch p.Kind() {
	case "argument_list", "return_statement", "expression_list", "list", "tuple", "set", "type",
		"comparison_operator", "boolean_operator", "not_operator", "conditional_expression", "parenthesized_expression":
		return true
	case "keyword_argument", "subscript", "pair":
		field = "value"
	case "assignment":
		field = "right"
	case "attribute":
		field = "object"
	case "lambda":
		field = "body"
	default:
		return false
	}
	c := p.ChildByFieldName(field)
	return c != nil && c.Id() == n.Id()
}
