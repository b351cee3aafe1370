package treesitter

import (
	"path"
	"slices"
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
	// cacheDeps are the names each cached lookup read (python_reuse.go).
	cacheDeps map[string][]string
	busy      map[string]bool // names being looked up (import cycles)
}

// pyTarget is what a name resolves to.
type pyTarget struct {
	kind int
	mod  *pyMod
	def  int    // pyTSymbol: index in mod.facts.defs
	ext  string // pyTExternal: top-level module name
	// pyTContainer: the container's name (in ext) and its type
	// arguments, dotted annotations ("" when unknown) joined by NUL, read
	// in scope def of mod.
	args string
}

const (
	pyTUnknown   = iota // bound to something resolution cannot follow
	pyTModule           // a module of the tree
	pyTSymbol           // a class or function of the tree
	pyTExternal         // outside the tree (import of another package, builtin)
	pyTInstance         // an instance of a class of the tree (def: the class)
	pyTSuper            // super() in a method of class def: its bases
	pyTContainer        // a standard container (list[T], dict[K, V], …): ext, args
)

type pyResolver struct {
	b       *builder
	mods    map[string]*pyMod // by dotted name
	byRel   map[string]*pyMod
	classes map[pyDefKey][]pyTarget // resolved bases
	// varCache holds the values of names bound by assignments (a class's
	// members under negative scopes).
	varCache map[pyVarKey]pyTarget
	depth    int // nesting of walk: a bound on chains through values
	// reused are the modules whose last resolution was taken from
	// Options.Previous (python_reuse.go).
	reused map[*pyMod]int
	// What each resolution reads (python_reuse.go): the frames of the
	// resolutions under way, the names read by each cached class's bases,
	// variable value and module's test marking, and each module's
	// resolution.
	frames    [][]string
	classDeps map[pyDefKey][]string
	varDeps   map[pyVarKey][]string
	testDeps  map[*pyMod][]string
	deps      map[string][]string // file key → names its module's resolution read
}

// pyDefKey is def i of module m.
type pyDefKey struct {
	m *pyMod
	i int
}

type pyVarKey struct {
	m     *pyMod
	scope int
	name  string
}

// resolvePython adds the graph of the Python files.
func resolvePython(b *builder, run *runCtx, files []*parsedFile) {
	r := &pyResolver{b: b, mods: make(map[string]*pyMod), byRel: make(map[string]*pyMod),
		classes: make(map[pyDefKey][]pyTarget), varCache: make(map[pyVarKey]pyTarget),
		classDeps: make(map[pyDefKey][]string), varDeps: make(map[pyVarKey][]string),
		testDeps: make(map[*pyMod][]string), deps: make(map[string][]string, len(files))}
	names := pyModuleNames(files, run.pyPrefix)
	for _, f := range files {
		facts, _ := f.facts.(*pyFile)
		if facts == nil {
			facts = &pyFile{}
		}
		m := &pyMod{name: names[f.Rel], file: f, facts: facts, isInit: path.Base(f.Rel) == "__init__.py",
			byQual: make(map[string]int), tests: make(map[int]bool),
			cache: make(map[string]pyTarget), cacheDeps: make(map[string][]string), busy: make(map[string]bool)}
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
		r.begin()
		r.markTests(m)
		r.testDeps[m] = r.end()
		b.addFile(f, m.name, pkgOf[path.Dir(f.Rel)], isPyTestFile(f.Rel))
		for i, d := range m.facts.defs {
			if m.byQual[d.qual] != i {
				b.edge(ingest.FileKey(f.Rel), ingest.RelDefines, r.key(m, m.byQual[d.qual]))
				continue
			}
			p := ingest.SymbolPayload{Package: m.name, Name: d.name, Kind: d.kind, LineStart: d.line0, LineEnd: d.line1,
				Exported: !strings.HasPrefix(d.name, "_") || strings.HasPrefix(d.name, "__") && strings.HasSuffix(d.name, "__"),
				Test:     isPyTestFile(f.Rel) || m.tests[i]}
			if d.parent >= 0 && m.facts.defs[d.parent].kind == ingest.KindClass {
				p.Recv = m.facts.defs[d.parent].qual
			}
			b.addSymbol(r.key(m, i), f.Rel, p)
			if d.parent >= 0 {
				b.edge(r.key(m, d.parent), ingest.RelContains, r.key(m, i))
			}
		}
	}
	pairs := make(map[string]string)
	if reuse := r.reusable(run.opts.Previous, files); reuse != nil {
		reuse.replay(r)
		run.pyReused = len(reuse.reused)
		r.reused = reuse.reused
	}
	for _, f := range files {
		m := r.byRel[f.Rel]
		if _, ok := r.reused[m]; !ok {
			r.begin()
			r.readAll(r.testDeps[m]) // its test code, calls from which are tests edges
			r.imports(m)
			for i := range m.facts.defs {
				for _, base := range r.bases(m, i) {
					if base.kind == pyTSymbol {
						b.edge(r.key(m, i), ingest.RelImplements, r.key(base.mod, base.def))
					}
				}
			}
			r.calls(m)
			r.deps[ingest.FileKey(f.Rel)] = r.end()
		}
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
	b.pyDeps = r.deps
}

// pyModuleNames maps each file to its dotted module name: the directories
// from the topmost package above it (a directory with __init__.py; those
// between without one are namespace packages), joined with its name
// (without .py; an __init__.py is its package). A root that is a package is named
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
		// The topmost package above the file; directories between
		// without __init__.py are namespace packages inside it.
		top := ""
		for d := dir; ; d = path.Dir(d) {
			if initDirs[d] {
				top = d
			}
			if d == "." {
				break
			}
		}
		d := dir
		if top != "" {
			stop := path.Dir(top) // "." for "."
			for d != stop && d != "." {
				parts = append([]string{path.Base(d)}, parts...)
				d = path.Dir(d)
			}
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
	k := pyDefKey{m, i}
	if ts, ok := r.classes[k]; ok {
		r.readAll(r.classDeps[k])
		return ts
	}
	r.classes[k] = nil // cycle guard
	r.begin()
	defer func() { r.classDeps[k] = r.end() }()
	var out []pyTarget
	for _, chain := range m.facts.defs[i].bases {
		t := r.walk(m, m.facts.defs[i].parent, chain)
		if t.kind == pyTSymbol && t.mod.facts.defs[t.def].kind == ingest.KindClass && !(t.mod == m && t.def == i) {
			out = append(out, t)
		} else if t.kind == pyTExternal {
			out = append(out, t)
		}
	}
	r.classes[k] = out
	return out
}

// lookup resolves a module-level name of m: its defs first, then its
// imports, then what it star-imports.
func (r *pyResolver) lookup(m *pyMod, name string) pyTarget {
	if t, ok := m.cache[name]; ok {
		r.readAll(m.cacheDeps[name])
		return t
	}
	if m.busy[name] {
		return pyTarget{}
	}
	m.busy[name] = true
	defer delete(m.busy, name)
	r.begin()
	t := r.lookupUncached(m, name, -1)
	m.cache[name], m.cacheDeps[name] = t, r.end()
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
	if vs := m.facts.vars[-1][name]; vs != nil && scope < 0 {
		return r.values(m, -1, name, vs)
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
		if sub := r.mod(src.name + "." + name); sub != nil && src.isInit {
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
	if sub := r.mod(joinDotted(base, n.name)); sub != nil {
		return pyTarget{kind: pyTModule, mod: sub}, true
	}
	if src := r.mod(base); src != nil {
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
		if m := r.mod(d); m != nil {
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
	return r.mod(r.fromModuleName(m, imp))
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
				if sub := r.mod(joinDotted(base, n.name)); sub != nil {
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

// calls adds the calls and references edges of a module: calls (and
// decorators, which call the decorator) to functions and methods, class
// instantiations and mentions of functions, methods and classes.
func (r *pyResolver) calls(m *pyMod) {
	for _, c := range m.facts.calls {
		src := ingest.FileKey(m.file.Rel)
		if c.scope >= 0 {
			src = r.key(m, m.byQual[m.facts.defs[c.scope].qual])
		}
		if c.chain == nil {
			if !c.ref {
				r.b.unresolvedIn(m.file.Rel)
			}
			continue
		}
		scope := c.scope
		if c.deco {
			scope = m.facts.defs[scope].parent
		}
		t := r.walk(m, scope, c.chain)
		switch {
		case t.kind == pyTExternal:
			continue
		case t.kind != pyTSymbol:
			if !c.ref {
				r.b.unresolvedIn(m.file.Rel)
			}
			continue
		}
		d := &t.mod.facts.defs[t.def]
		rel := ingest.RelCalls
		if d.kind == ingest.KindClass || c.ref && !d.property {
			rel = ingest.RelReferences // an instantiation, a mention
		}
		dst := r.key(t.mod, t.def)
		r.b.edge(src, rel, dst)
		if c.scope >= 0 && m.tests[c.scope] && !c.ref {
			r.b.test(src, m.file.Rel, dst)
			r.readAll(r.testDeps[t.mod]) // a tests edge if dst is not test code
		}
	}
}

// cutCall splits "name()" into "name" and true.
func cutCall(seg string) (string, bool) {
	if s, ok := strings.CutSuffix(seg, "()"); ok && seg != "super()" {
		return s, true
	}
	return seg, false
}

// walk resolves a chain used in scope (a def of m, -1 at module level) to
// what its last name denotes: a module, a class or function of the tree,
// an instance of a class of the tree, something outside the tree, or
// unknown.
func (r *pyResolver) walk(m *pyMod, scope int, chain []string) pyTarget {
	if r.depth > 24 {
		return pyTarget{}
	}
	r.depth++
	defer func() { r.depth-- }()
	root, call := cutCall(chain[0])
	t := r.name(m, scope, root)
	if call {
		t = r.callResult(t, pyTarget{})
	}
	for _, seg := range chain[1:] {
		t = r.valueOf(t)
		if seg == pySub || seg == pyIter {
			t = r.element(t, seg == pyIter)
			continue
		}
		name, call := cutCall(seg)
		if pos, ok := pyContainers[t.ext].methods[name]; ok && call && t.kind == pyTContainer {
			t = r.typeArgOf(t, pos) // d.get(k): a value
			continue
		}
		recv := t
		t = r.attr(t, name)
		if call {
			t = r.callResult(t, recv)
		}
	}
	return t
}

// name resolves a name used in scope by Python's rules: the function's
// own names (a class body's for code directly in it), then those of the
// enclosing functions (not classes), then the module's, then builtins.
func (r *pyResolver) name(m *pyMod, scope int, name string) pyTarget {
	defs := m.facts.defs
	if name == "super()" {
		if scope >= 0 && defs[scope].kind == ingest.KindMethod && defs[scope].selfName != "" {
			return pyTarget{kind: pyTSuper, mod: m, def: defs[scope].parent}
		}
		return pyTarget{}
	}
	for s := scope; s >= 0; s = defs[s].parent {
		d := &defs[s]
		if d.kind == ingest.KindClass {
			if s == scope {
				if j, ok := m.byQual[d.qual+"."+name]; ok {
					return pyTarget{kind: pyTSymbol, mod: m, def: j}
				}
				if vs := m.facts.vars[s][name]; vs != nil {
					return r.values(m, s, name, vs)
				}
			}
			continue
		}
		if m.facts.globals[s][name] {
			break
		}
		if j, ok := m.byQual[d.qual+"."+name]; ok && defs[j].parent == s {
			return pyTarget{kind: pyTSymbol, mod: m, def: j}
		}
		if r.hasLocalImport(m, s, name) {
			return r.lookupUncached(m, name, s)
		}
		if m.facts.locals[s][name] {
			return r.local(m, s, name)
		}
	}
	t := r.lookup(m, name)
	if t.kind == pyTUnknown && pyBuiltins[name] {
		return pyTarget{kind: pyTExternal, ext: "builtins"}
	}
	return t
}

// local is the value of a name bound in function s: self (an instance of
// the class, the class itself in a classmethod), an annotated parameter,
// or what every assignment to it agrees on.
func (r *pyResolver) local(m *pyMod, s int, name string) pyTarget {
	d := &m.facts.defs[s]
	if name == d.selfName && d.selfName != "" {
		if d.classMethod {
			return pyTarget{kind: pyTSymbol, mod: m, def: d.parent}
		}
		return pyTarget{kind: pyTInstance, mod: m, def: d.parent}
	}
	if ann, ok := d.params[name]; ok {
		return r.annotation(m, d.parent, ann)
	}
	if vs := m.facts.vars[s][name]; vs != nil {
		return r.values(m, s, name, vs)
	}
	return pyTarget{}
}

// values is the value of a name (in scope s of m) bound to vs: the one
// every annotation or assignment gives (None aside), else unknown.
func (r *pyResolver) values(m *pyMod, s int, name string, vs []pyValue) pyTarget {
	k := pyVarKey{m, s, name}
	if t, ok := r.varCache[k]; ok {
		r.readAll(r.varDeps[k])
		return t
	}
	r.varCache[k] = pyTarget{} // cycle guard: x = x.parent
	r.begin()
	defer func() { r.varDeps[k] = r.end() }()
	// A name annotated anywhere has the declared type.
	var declared []pyValue
	for _, v := range vs {
		if v.ann != nil {
			declared = append(declared, v)
		}
	}
	if declared != nil {
		vs = declared
	}
	var t pyTarget
	for i, v := range vs {
		var vt pyTarget
		switch {
		case v.ann != nil:
			vt = r.annotation(m, v.scope, v.ann)
		case len(v.expr) == 1 && v.expr[0] == "None":
			continue
		case v.expr != nil:
			vt = r.walk(m, v.scope, v.expr)
		}
		if vt.kind == pyTUnknown || i > 0 && t.kind != pyTUnknown && vt != t {
			t = pyTarget{}
			break
		}
		t = vt
	}
	r.varCache[k] = t
	return t
}

// annotation is the value an annotation declares: an instance of the
// class it names (through aliases), something outside the tree, or
// unknown.
func (r *pyResolver) annotation(m *pyMod, scope int, ann []string) pyTarget {
	if len(ann) == 1 && ann[0] == "None" {
		return pyTarget{}
	}
	if ann[0] == pyContainerMarker {
		if base := strings.Split(ann[1], "."); ann[1] == "" || r.walk(m, scope, base).kind == pyTExternal {
			return pyTarget{kind: pyTContainer, mod: m, def: scope, ext: base[len(base)-1], args: strings.Join(ann[2:], "\x00")}
		}
		ann = strings.Split(ann[1], ".") // a class of the tree of that name
	}
	class := ann[0] == "type[]" // type[C]: the class itself
	if class {
		ann = ann[1:]
	}
	t := r.walk(m, scope, ann)
	switch {
	case class && t.kind == pyTSymbol && t.mod.facts.defs[t.def].kind == ingest.KindClass:
		return t
	case t.kind == pyTSymbol && t.mod.facts.defs[t.def].kind == ingest.KindClass:
		return pyTarget{kind: pyTInstance, mod: t.mod, def: t.def}
	case t.kind == pyTExternal:
		return t
	}
	return pyTarget{}
}

// element is what iterating (iter) or subscripting t gives: an element of
// a standard container as its annotation declares, else what the class's
// __iter__ (an Iterator[T] or other container) or __getitem__ returns,
// else unknown.
func (r *pyResolver) element(t pyTarget, iter bool) pyTarget {
	switch t.kind {
	case pyTContainer:
		pos := pyContainers[t.ext].sub
		if iter {
			pos = pyContainers[t.ext].iter
		}
		return r.typeArgOf(t, pos)
	case pyTInstance:
		if !iter {
			return r.callResult(r.member(t.mod, t.def, "__getitem__", 0), t)
		}
		if it := r.callResult(r.member(t.mod, t.def, "__iter__", 0), t); it.kind == pyTContainer {
			return r.element(it, true)
		}
	}
	// An element of a value outside the tree (a tuple, os.environ) may be
	// anything, a value of the tree too: unknown.
	return pyTarget{}
}

// typeArgOf is the value type argument pos of container t declares.
func (r *pyResolver) typeArgOf(t pyTarget, pos int) pyTarget {
	args := strings.Split(t.args, "\x00")
	if pos < 0 || pos >= len(args) || args[pos] == "" {
		return pyTarget{}
	}
	return r.annotation(t.mod, t.def, strings.Split(args[pos], "."))
}

// valueOf is the value a name denotes when it is read: a property's
// value is what its getter returns.
func (r *pyResolver) valueOf(t pyTarget) pyTarget {
	if t.kind == pyTSymbol && t.mod.facts.defs[t.def].property {
		return r.callResult(t, pyTarget{})
	}
	return t
}

// callResult is the value a call of t returns: an instance of a class,
// or what a function's return annotation declares (Self: the receiver).
func (r *pyResolver) callResult(t, recv pyTarget) pyTarget {
	switch t.kind {
	case pyTExternal:
		return t
	case pyTSymbol:
		d := &t.mod.facts.defs[t.def]
		if d.kind == ingest.KindClass {
			return pyTarget{kind: pyTInstance, mod: t.mod, def: t.def}
		}
		switch {
		case d.ret == nil:
			return pyTarget{}
		case d.ret[len(d.ret)-1] == "Self" && d.ret[0] != pyContainerMarker:
			if recv.kind == pyTInstance {
				return recv
			}
			if d.kind == ingest.KindMethod {
				return pyTarget{kind: pyTInstance, mod: t.mod, def: d.parent}
			}
			return pyTarget{}
		}
		if len(d.ret) == 1 && d.parent >= 0 && r.isTypeVar(t.mod, d.ret[0]) {
			// -> T of a generic class: the type argument the receiver's
			// class gives T (class P(Proxy[App]): App).
			if i := slices.Index(r.typeParams(t.mod, d.parent), d.ret[0]); i >= 0 && recv.kind == pyTInstance {
				return r.typeArg(recv.mod, recv.def, t.mod, d.parent, i, 0)
			}
			return pyTarget{}
		}
		return r.annotation(t.mod, d.parent, d.ret)
	}
	return pyTarget{}
}

// isTypeVar reports whether name is a TypeVar of module m (T =
// TypeVar("T") at module level).
func (r *pyResolver) isTypeVar(m *pyMod, name string) bool {
	for _, v := range m.facts.vars[-1][name] {
		if n := len(v.expr); n > 0 && v.expr[n-1] == "TypeVar()" {
			return true
		}
	}
	return false
}

// typeParams are the type parameters of class i of m: the arguments of
// its Generic[…] or Protocol[…] base, else the type variables its bases'
// arguments name, in order.
func (r *pyResolver) typeParams(m *pyMod, i int) []string {
	d := &m.facts.defs[i]
	var out []string
	for k, b := range d.bases {
		if last := b[len(b)-1]; last == "Generic" || last == "Protocol" {
			return d.baseArgs[k]
		}
	}
	for _, args := range d.baseArgs {
		for _, a := range args {
			if r.isTypeVar(m, a) && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// typeArg is the value of type parameter idx of generic class gi of gm as
// class i of m (or a class it extends) binds it in its bases; unknown
// when a class between passes a type variable on.
func (r *pyResolver) typeArg(m *pyMod, i int, gm *pyMod, gi, idx, depth int) pyTarget {
	d := &m.facts.defs[i]
	if depth > 8 || d.kind != ingest.KindClass {
		return pyTarget{}
	}
	for k, chain := range d.bases {
		b := r.walk(m, d.parent, chain)
		if b.kind != pyTSymbol || b.mod.facts.defs[b.def].kind != ingest.KindClass {
			continue
		}
		if b.mod == gm && b.def == gi {
			if idx < len(d.baseArgs[k]) {
				if a := d.baseArgs[k][idx]; a != "" && !r.isTypeVar(m, a) {
					return r.annotation(m, d.parent, strings.Split(a, "."))
				}
			}
			return pyTarget{}
		}
		if t := r.typeArg(b.mod, b.def, gm, gi, idx, depth+1); t.kind != pyTUnknown {
			return t
		}
	}
	return pyTarget{}
}

// attr resolves name on the value t.
func (r *pyResolver) attr(t pyTarget, name string) pyTarget {
	switch t.kind {
	case pyTModule:
		if sub := r.mod(t.mod.name + "." + name); sub != nil {
			return pyTarget{kind: pyTModule, mod: sub}
		}
		return r.lookup(t.mod, name)
	case pyTSymbol:
		if t.mod.facts.defs[t.def].kind != ingest.KindClass {
			return pyTarget{}
		}
		return r.member(t.mod, t.def, name, 0)
	case pyTInstance:
		return r.member(t.mod, t.def, name, 0)
	case pyTSuper:
		return r.inBases(t.mod, t.def, name, 0)
	case pyTExternal:
		return t
	case pyTContainer:
		return pyTarget{kind: pyTExternal, ext: "builtins"} // list.append, dict.get, …
	}
	return pyTarget{}
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

// member finds name on class i of m as a type checker does: a method or
// nested class declared in the class or its bases (in order), else an
// attribute annotated there (x: T in the body, self.x: T = … in a
// method), else the value every assignment to it there agrees on. A base
// outside the tree (other than object and the typing markers) may declare
// any name: a name not found in the classes before it is unknown (an
// attribute the class itself declares is found: it comes first).
func (r *pyResolver) member(m *pyMod, i int, name string, depth int) pyTarget {
	if t, done := r.memberDef(m, i, name, depth); done && t.kind != pyTUnknown {
		return t
	}
	if t := r.memberAttr(m, i, name, true, depth); t.kind != pyTUnknown {
		return t
	}
	return r.memberAttr(m, i, name, false, depth)
}

// memberDef finds a method or nested class; done is false when no class
// of the hierarchy declares one and none outside the tree may.
func (r *pyResolver) memberDef(m *pyMod, i int, name string, depth int) (pyTarget, bool) {
	if j, ok := m.byQual[m.facts.defs[i].qual+"."+name]; ok {
		return pyTarget{kind: pyTSymbol, mod: m, def: j}, true
	}
	if depth > 16 {
		return pyTarget{}, true
	}
	for _, b := range r.bases(m, i) {
		switch b.kind {
		case pyTSymbol:
			if t, done := r.memberDef(b.mod, b.def, name, depth+1); done {
				return t, true
			}
		case pyTExternal:
			if !pyInertBases[b.ext] {
				return pyTarget{}, true
			}
		}
	}
	return pyTarget{}, false
}

// memberAttr finds an attribute's value: annotated ones only, or (when
// none is annotated) assigned ones.
func (r *pyResolver) memberAttr(m *pyMod, i int, name string, annotated bool, depth int) pyTarget {
	var vs []pyValue
	for _, v := range append(m.facts.vars[i][name], m.facts.attrs[i][name]...) {
		if !annotated || v.ann != nil {
			vs = append(vs, v)
		}
	}
	if len(vs) > 0 {
		key := -2 - 2*i
		if annotated {
			key--
		}
		return r.values(m, key, name, vs)
	}
	if depth > 16 {
		return pyTarget{}
	}
	for _, b := range r.bases(m, i) {
		switch b.kind {
		case pyTSymbol:
			if t := r.memberAttr(b.mod, b.def, name, annotated, depth+1); t.kind != pyTUnknown {
				return t
			}
		case pyTExternal:
			if !pyInertBases[b.ext] {
				return pyTarget{} // the base may declare it
			}
		}
	}
	return pyTarget{}
}

// inBases finds name in the bases of class i (super()).
func (r *pyResolver) inBases(m *pyMod, i int, name string, depth int) pyTarget {
	for _, b := range r.bases(m, i) {
		switch b.kind {
		case pyTSymbol:
			if t := r.member(b.mod, b.def, name, depth+1); t.kind != pyTUnknown {
				return t
			}
		case pyTExternal:
			if !pyInertBases[b.ext] {
				return pyTarget{}
			}
		}
	}
	return pyTarget{}
}

// pyInertBases are external bases that define no methods a class of the
// tree would call: typing's markers and object.
var pyInertBases = map[string]bool{"object": true, "typing": true, "typing_extensions": true, "abc": true}

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
