package treesitter

import (
	"path"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// pyMod is one module of the tree.
type pyMod struct {
	name   string // dotted
	file   *parsedFile
	facts  *pyFile
	isInit bool           // an __init__.py: the module is a package
	byQual map[string]int // def qual → first def index
	tests  map[int]bool   // defs that are test code
	cache  map[string]pyTarget
	busy   map[string]bool // names being looked up (import cycles)
}

// pyTarget is what a name resolves to.
type pyTarget struct {
	kind int
	mod  *pyMod
	def  int    // pyTSymbol: index in mod.facts.defs
	ext  string // pyTExternal: top-level module name
}

const (
	pyTUnknown  = iota // bound to something resolution cannot follow
	pyTModule          // a module of the tree
	pyTSymbol          // a class or function of the tree
	pyTExternal        // outside the tree (import of another package, builtin)
)

type pyResolver struct {
	b       *builder
	mods    map[string]*pyMod // by dotted name
	byRel   map[string]*pyMod
	classes map[*pyMod]map[int][]pyTarget // resolved bases
}

// resolvePython adds the graph of the Python files.
func resolvePython(b *builder, run *runCtx, files []*parsedFile) {
	r := &pyResolver{b: b, mods: make(map[string]*pyMod), byRel: make(map[string]*pyMod),
		classes: make(map[*pyMod]map[int][]pyTarget)}
	names := pyModuleNames(files, run.pyPrefix)
	for _, f := range files {
		facts, _ := f.facts.(*pyFile)
		if facts == nil {
			facts = &pyFile{}
		}
		m := &pyMod{name: names[f.Rel], file: f, facts: facts, isInit: path.Base(f.Rel) == "__init__.py",
			byQual: make(map[string]int), tests: make(map[int]bool),
			cache: make(map[string]pyTarget), busy: make(map[string]bool)}
		for i, d := range facts.defs {
			if _, ok := m.byQual[d.qual]; !ok {
				m.byQual[d.qual] = i
			}
		}
		r.mods[m.name] = m
		r.byRel[f.Rel] = m
	}
	// A module is also found by its path from the root ("a/b.py" as
	// a.b), which is how a namespace package (no __init__.py) imports.
	for _, f := range files {
		if alias := pathModuleName(f.Rel); r.mods[alias] == nil {
			r.mods[alias] = r.byRel[f.Rel]
		}
	}
	// Packages: directories with __init__.py.
	pkgOf := make(map[string]string) // dir → package key
	for _, f := range files {
		if m := r.byRel[f.Rel]; m.isInit {
			key := pkgKey(ingest.LangPython, m.name)
			b.addPackage(ingest.LangPython, key, m.name, m.name[strings.LastIndexByte(m.name, '.')+1:], path.Dir(f.Rel))
			pkgOf[path.Dir(f.Rel)] = key
		}
	}
	for _, f := range files {
		m := r.byRel[f.Rel]
		r.markTests(m)
		b.addFile(f, m.name, pkgOf[path.Dir(f.Rel)], isPyTestFile(f.Rel))
		for i, d := range m.facts.defs {
			if m.byQual[d.qual] != i {
				b.edge(ingest.FileKey(f.Rel), ingest.RelDefines, r.key(m, m.byQual[d.qual]))
				continue
			}
			p := ingest.SymbolPayload{Package: m.name, Name: d.name, Kind: d.kind, LineStart: d.line0, LineEnd: d.line1,
				Exported: !strings.HasPrefix(d.name, "_") || strings.HasPrefix(d.name, "__") && strings.HasSuffix(d.name, "__"),
				Test:     isPyTestFile(f.Rel) || m.tests[i]}
			if d.parent >= 0 {
				p.Recv = m.facts.defs[d.parent].qual
			}
			b.addSymbol(r.key(m, i), f.Rel, p)
			if d.parent >= 0 {
				b.edge(r.key(m, d.parent), ingest.RelContains, r.key(m, i))
			}
		}
	}
	pairs := make(map[string]string)
	for _, f := range files {
		m := r.byRel[f.Rel]
		r.imports(m)
		for i, d := range m.facts.defs {
			for _, base := range r.bases(m, i) {
				if base.kind == pyTSymbol {
					b.edge(r.key(m, i), ingest.RelImplements, r.key(base.mod, base.def))
				}
			}
			_ = d
		}
		r.calls(m)
		dir, base := path.Split(f.Rel)
		for _, pattern := range []struct{ prefix, suffix string }{{"test_", ".py"}, {"", "_test.py"}} {
			if strings.HasPrefix(base, pattern.prefix) && strings.HasSuffix(base, pattern.suffix) && base != pattern.prefix+pattern.suffix {
				target := dir + strings.TrimSuffix(strings.TrimPrefix(base, pattern.prefix), pattern.suffix) + ".py"
				if _, ok := r.byRel[target]; ok && target != f.Rel {
					pairs[f.Rel] = target
				}
			}
		}
	}
	b.pairTestFiles(pairs)
}

// pyModuleNames maps each file to its dotted module name: the packages
// (directories with __init__.py) above it, joined with its name (without
// .py; an __init__.py is its package). A root that is a package is named
// by prefix. Names that several files would share fall back to their
// path: "tests/test_a.py" → "tests.test_a".
func pyModuleNames(files []*parsedFile, prefix string) map[string]string {
	initDirs := make(map[string]bool)
	for _, f := range files {
		if path.Base(f.Rel) == "__init__.py" {
			initDirs[path.Dir(f.Rel)] = true
		}
	}
	names := make(map[string]string, len(files))
	claims := make(map[string][]string)
	for _, f := range files {
		dir, base := path.Split(f.Rel)
		dir = path.Clean(dir)
		var parts []string
		if base != "__init__.py" {
			parts = []string{strings.TrimSuffix(base, ".py")}
		}
		d := dir
		for d != "." && initDirs[d] {
			parts = append([]string{path.Base(d)}, parts...)
			d = path.Dir(d)
		}
		name := strings.Join(parts, ".")
		if d == "." && initDirs["."] && prefix != "" {
			name = strings.TrimSuffix(prefix+name, ".")
		}
		if name == "" {
			name = pathModuleName(f.Rel)
		}
		names[f.Rel] = name
		claims[name] = append(claims[name], f.Rel)
	}
	for _, rels := range claims {
		if len(rels) > 1 {
			for _, rel := range rels {
				names[rel] = pathModuleName(rel)
			}
		}
	}
	return names
}

func pathModuleName(rel string) string {
	rel = strings.TrimSuffix(strings.TrimSuffix(rel, ".py"), "/__init__")
	return strings.ReplaceAll(rel, "/", ".")
}

// key is the symbol key of a def.
func (r *pyResolver) key(m *pyMod, i int) string {
	return symKey(ingest.LangPython, m.name+"."+m.facts.defs[i].qual)
}

// markTests finds the test code of a module: test* functions of a test
// file, and the methods of its Test* classes and of unittest classes
// (a base named …TestCase, or a test class of the tree).
func (r *pyResolver) markTests(m *pyMod) {
	testFile := isPyTestFile(m.file.Rel)
	for i, d := range m.facts.defs {
		switch {
		case d.kind == ingest.KindFunc && testFile && strings.HasPrefix(d.name, "test"):
			m.tests[i] = true
		case d.kind == ingest.KindClass && r.isTestClass(m, i, 0):
			m.tests[i] = true
		case d.parent >= 0 && m.tests[d.parent]:
			m.tests[i] = true
		}
	}
}

func (r *pyResolver) isTestClass(m *pyMod, i, depth int) bool {
	d := m.facts.defs[i]
	if isPyTestFile(m.file.Rel) && strings.HasPrefix(d.name, "Test") {
		return true
	}
	for _, b := range d.bases {
		if strings.HasSuffix(b[len(b)-1], "TestCase") {
			return true
		}
	}
	if depth < 8 {
		for _, t := range r.bases(m, i) {
			if t.kind == pyTSymbol && t.mod.facts.defs[t.def].kind == ingest.KindClass && r.isTestClass(t.mod, t.def, depth+1) {
				return true
			}
		}
	}
	return false
}

// bases resolves the base classes of class i of m (at module scope).
func (r *pyResolver) bases(m *pyMod, i int) []pyTarget {
	if m.facts.defs[i].kind != ingest.KindClass {
		return nil
	}
	if r.classes[m] == nil {
		r.classes[m] = make(map[int][]pyTarget)
	}
	if ts, ok := r.classes[m][i]; ok {
		return ts
	}
	r.classes[m][i] = nil // cycle guard
	var out []pyTarget
	for _, chain := range m.facts.defs[i].bases {
		t := r.chain(m, -1, chain)
		if t.kind == pyTSymbol && t.mod.facts.defs[t.def].kind == ingest.KindClass && !(t.mod == m && t.def == i) {
			out = append(out, t)
		} else if t.kind == pyTExternal {
			out = append(out, t)
		}
	}
	r.classes[m][i] = out
	return out
}

// lookup resolves a module-level name of m: its defs first, then its
// imports, then what it star-imports.
func (r *pyResolver) lookup(m *pyMod, name string) pyTarget {
	if t, ok := m.cache[name]; ok {
		return t
	}
	if m.busy[name] {
		return pyTarget{}
	}
	m.busy[name] = true
	defer delete(m.busy, name)
	t := r.lookupUncached(m, name, -1)
	m.cache[name] = t
	return t
}

func (r *pyResolver) lookupUncached(m *pyMod, name string, scope int) pyTarget {
	if scope < 0 {
		if i, ok := m.byQual[name]; ok {
			return pyTarget{kind: pyTSymbol, mod: m, def: i}
		}
	}
	found, t := false, pyTarget{}
	for _, imp := range m.facts.imports {
		if imp.scope != scope || imp.star {
			continue
		}
		for _, n := range imp.names {
			if bt, ok := r.importBinding(m, imp, n, name); ok {
				found, t = true, bt // the last binding wins, as in Python
			}
		}
	}
	if found {
		return t
	}
	for _, imp := range m.facts.imports {
		if imp.scope != scope || !imp.star || strings.HasPrefix(name, "_") {
			continue
		}
		src := r.fromModule(m, imp)
		if src == nil {
			continue
		}
		if t := r.lookup(src, name); t.kind != pyTUnknown {
			return t
		}
		if sub := r.mods[src.name+"."+name]; sub != nil && src.isInit {
			return pyTarget{kind: pyTModule, mod: sub}
		}
	}
	return pyTarget{}
}

// importBinding resolves what name n of import imp binds to, if it binds
// name.
func (r *pyResolver) importBinding(m *pyMod, imp pyImport, n pyName, name string) (pyTarget, bool) {
	if !imp.from {
		if n.alias != "" {
			if n.alias != name {
				return pyTarget{}, false
			}
			return r.moduleTarget(n.name), true
		}
		root, _, _ := strings.Cut(n.name, ".")
		if root != name {
			return pyTarget{}, false
		}
		return r.moduleTarget(root), true
	}
	bound := n.name
	if n.alias != "" {
		bound = n.alias
	}
	if bound != name {
		return pyTarget{}, false
	}
	base := r.fromModuleName(m, imp)
	if base == "" && imp.level > 0 {
		return pyTarget{}, true
	}
	if sub := r.mods[joinDotted(base, n.name)]; sub != nil {
		return pyTarget{kind: pyTModule, mod: sub}, true
	}
	if src := r.mods[base]; src != nil {
		return r.lookup(src, n.name), true
	}
	if imp.level > 0 {
		return pyTarget{}, true
	}
	return r.moduleTarget(base), true
}

// moduleTarget is the module named dotted, or the external package it
// belongs to.
// The longest prefix of dotted that is a module of the tree wins (the rest
// may be a compiled extension).
func (r *pyResolver) moduleTarget(dotted string) pyTarget {
	for d := dotted; d != ""; d = parentDotted(d) {
		if m := r.mods[d]; m != nil {
			return pyTarget{kind: pyTModule, mod: m}
		}
	}
	root, _, _ := strings.Cut(dotted, ".")
	return pyTarget{kind: pyTExternal, ext: root}
}

// fromModuleName is the absolute dotted name of a from-import's module
// ("" when a relative import climbs above the tree's top package).
func (r *pyResolver) fromModuleName(m *pyMod, imp pyImport) string {
	if imp.level == 0 {
		return imp.module
	}
	pkg := m.name
	if !m.isInit {
		pkg = parentDotted(pkg)
	}
	for i := 1; i < imp.level; i++ {
		if pkg == "" {
			return ""
		}
		pkg = parentDotted(pkg)
	}
	if pkg == "" && imp.module == "" {
		return ""
	}
	return joinDotted(pkg, imp.module)
}

func (r *pyResolver) fromModule(m *pyMod, imp pyImport) *pyMod {
	return r.mods[r.fromModuleName(m, imp)]
}

func parentDotted(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[:i]
	}
	return ""
}

func joinDotted(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// imports adds the imports edges of a module: to the file of a module of
// the tree, or to the package node of an external one.
func (r *pyResolver) imports(m *pyMod) {
	fileKey := ingest.FileKey(m.file.Rel)
	for _, imp := range m.facts.imports {
		var targets []pyTarget
		if !imp.from {
			for _, n := range imp.names {
				targets = append(targets, r.moduleTarget(n.name))
			}
		} else {
			base := r.fromModuleName(m, imp)
			if base == "" {
				continue
			}
			for _, n := range imp.names {
				if sub := r.mods[joinDotted(base, n.name)]; sub != nil {
					targets = append(targets, pyTarget{kind: pyTModule, mod: sub})
				} else {
					targets = append(targets, r.moduleTarget(base))
				}
			}
			if imp.star {
				targets = append(targets, r.moduleTarget(base))
			}
		}
		for _, t := range targets {
			switch {
			case t.kind == pyTModule:
				r.b.edge(fileKey, ingest.RelImports, ingest.FileKey(t.mod.file.Rel))
			case t.kind == pyTExternal && imp.level == 0 && t.ext != "__future__":
				key := pkgKey(ingest.LangPython, t.ext)
				r.b.addPackage(ingest.LangPython, key, t.ext, t.ext, "")
				r.b.edge(fileKey, ingest.RelImports, key)
			}
		}
	}
}

// calls adds the calls and references edges of a module's calls.
func (r *pyResolver) calls(m *pyMod) {
	for _, c := range m.facts.calls {
		src := ingest.FileKey(m.file.Rel)
		if c.scope >= 0 {
			src = r.key(m, m.byQual[m.facts.defs[c.scope].qual])
		}
		if c.chain == nil {
			r.b.unresolved[ingest.LangPython]++
			continue
		}
		t := r.resolveCall(m, c.scope, c.chain)
		switch {
		case t.kind == pyTExternal:
			continue
		case t.kind != pyTSymbol:
			r.b.unresolved[ingest.LangPython]++
			continue
		}
		rel := ingest.RelCalls
		if t.mod.facts.defs[t.def].kind == ingest.KindClass {
			rel = ingest.RelReferences // an instantiation
		}
		dst := r.key(t.mod, t.def)
		r.b.edge(src, rel, dst)
		if c.scope >= 0 && m.tests[c.scope] {
			r.b.test(src, m.file.Rel, dst)
		}
	}
}

// resolveCall resolves a callee chain used inside def scope of m.
func (r *pyResolver) resolveCall(m *pyMod, scope int, chain []string) pyTarget {
	defs := m.facts.defs
	// The enclosing function and class.
	fn, cls := -1, -1
	for s := scope; s >= 0; s = defs[s].parent {
		if defs[s].kind == ingest.KindClass {
			if fn >= 0 && cls < 0 {
				cls = s
			}
			if fn < 0 {
				break // class-body code: no self, no locals
			}
		} else if fn < 0 {
			fn = s
		}
	}
	root := chain[0]
	if fn >= 0 && defs[fn].kind == ingest.KindMethod && cls >= 0 {
		switch {
		case root == "super()" && len(chain) == 2:
			for _, b := range r.bases(m, cls) {
				if b.kind == pyTSymbol {
					if t := r.member(b.mod, b.def, chain[1], 0); t.kind == pyTSymbol {
						return t
					}
				}
			}
			return pyTarget{}
		case root == defs[fn].selfName && defs[fn].selfName != "":
			if len(chain) != 2 {
				return pyTarget{}
			}
			return r.member(m, cls, chain[1], 0)
		}
	}
	return r.chain(m, fn, chain)
}

// chain resolves a name chain at module scope, or inside function fn
// (whose imports come first and whose other locals are not followed).
func (r *pyResolver) chain(m *pyMod, fn int, chain []string) pyTarget {
	root := chain[0]
	var t pyTarget
	switch {
	case root == "super()":
		return pyTarget{}
	case fn >= 0 && r.hasLocalImport(m, fn, root):
		t = r.lookupUncached(m, root, fn)
	case fn >= 0 && m.facts.locals[fn][root] && !m.facts.globals[fn][root]:
		return pyTarget{} // a local value
	default:
		t = r.lookup(m, root)
		if t.kind == pyTUnknown && pyBuiltins[root] {
			return pyTarget{kind: pyTExternal, ext: "builtins"}
		}
	}
	for _, name := range chain[1:] {
		switch t.kind {
		case pyTModule:
			if sub := r.mods[t.mod.name+"."+name]; sub != nil {
				t = pyTarget{kind: pyTModule, mod: sub}
			} else {
				t = r.lookup(t.mod, name)
			}
		case pyTSymbol:
			if t.mod.facts.defs[t.def].kind != ingest.KindClass {
				return pyTarget{}
			}
			t = r.member(t.mod, t.def, name, 0)
		case pyTExternal:
			return t
		default:
			return pyTarget{}
		}
	}
	return t
}

func (r *pyResolver) hasLocalImport(m *pyMod, fn int, name string) bool {
	for _, imp := range m.facts.imports {
		if imp.scope != fn {
			continue
		}
		for _, n := range imp.names {
			if _, ok := r.importBinding(m, imp, n, name); ok {
				return true
			}
		}
	}
	return false
}

// member finds a method or nested class of class i of m, or of its bases.
func (r *pyResolver) member(m *pyMod, i int, name string, depth int) pyTarget {
	if j, ok := m.byQual[m.facts.defs[i].qual+"."+name]; ok {
		return pyTarget{kind: pyTSymbol, mod: m, def: j}
	}
	if depth > 16 {
		return pyTarget{}
	}
	for _, b := range r.bases(m, i) {
		if b.kind == pyTSymbol {
			if t := r.member(b.mod, b.def, name, depth+1); t.kind == pyTSymbol {
				return t
			}
		}
	}
	return pyTarget{}
}

// pyBuiltins are the names of Python's builtins module: calls to them are
// calls outside the tree, not unresolved ones.
var pyBuiltins = func() map[string]bool {
	m := make(map[string]bool)
	for _, n := range strings.Fields(`abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr
		classmethod compile complex delattr dict dir divmod enumerate eval exec filter float format frozenset
		getattr globals hasattr hash help hex id input int isinstance issubclass iter len list locals map max
		memoryview min next object oct open ord pow print property range repr reversed round set setattr slice
		sorted staticmethod str sum super tuple type vars zip __import__
		BaseException Exception ArithmeticError AssertionError AttributeError BlockingIOError BrokenPipeError
		BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError
		ConnectionResetError DeprecationWarning EOFError EnvironmentError FileExistsError FileNotFoundError
		FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError
		IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError
		ModuleNotFoundError NameError NotADirectoryError NotImplementedError OSError OverflowError
		PendingDeprecationWarning PermissionError ProcessLookupError RecursionError ReferenceError ResourceWarning
		RuntimeError RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError
		SystemExit TabError TimeoutError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError
		UnicodeError UnicodeTranslateError UnicodeWarning UserWarning ValueError Warning ZeroDivisionError
		ExceptionGroup BaseExceptionGroup EncodingWarning`) {
		m[n] = true
	}
	return m
}()
