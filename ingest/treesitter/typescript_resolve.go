package treesitter

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// tsMod is one TypeScript or JavaScript file of the tree.
type tsMod struct {
	file   *parsedFile
	facts  *tsFile
	byQual map[string]int
	test   bool
	busy   map[string]bool
}

// tsTarget is what a name resolves to.
type tsTarget struct {
	kind int
	mod  *tsMod
	def  int
}

const (
	tsTUnknown  = iota
	tsTModule   // a file of the tree, as a namespace
	tsTSymbol   // a def of the tree
	tsTExternal // a package outside the tree, or a global
	tsTInstance // a value of class or interface def (of constructor function def: its instances)
	tsTArray    // an array (set, iterable) of instances of class or interface def
)

type tsResolver struct {
	b        *builder
	run      *runCtx
	mods     map[string]*tsMod // by rel path
	configs  map[string]*tsConfig
	packages map[string]string // package.json name → dir
	// inMember marks the member lookups in progress: a heritage chain can
	// lead back to the class it starts from (interface A extends B, B
	// extends A.C), which would otherwise recurse without end.
	inMember map[tsMemberLookup]bool
	depth    int // nesting of value lookups: a bound on chains through values
	// at is the byte offset of the use being resolved in atMod (0:
	// none): the parameters of the callbacks around it are in scope.
	at    uint
	atMod *tsMod
}

// tsMemberLookup is one member lookup: name in def of mod.
type tsMemberLookup struct {
	mod  *tsMod
	def  int
	name string
}

// resolveTS adds the graph of the TypeScript and JavaScript files.
func resolveTS(b *builder, run *runCtx, files []*parsedFile) {
	r := &tsResolver{b: b, run: run, mods: make(map[string]*tsMod), configs: make(map[string]*tsConfig),
		packages: make(map[string]string), inMember: make(map[tsMemberLookup]bool)}
	slices.SortFunc(files, func(a, b *parsedFile) int { return strings.Compare(a.Rel, b.Rel) })
	for _, f := range files {
		facts, _ := f.facts.(*tsFile)
		if facts == nil {
			facts = &tsFile{}
		}
		m := &tsMod{file: f, facts: facts, byQual: make(map[string]int), busy: make(map[string]bool),
			test: isTSTestFile(f.Rel) || facts.testCalls}
		for i, d := range facts.defs {
			if j, ok := m.byQual[d.qual]; !ok || facts.defs[j].sig && !d.sig {
				m.byQual[d.qual] = i
			}
		}
		r.mods[f.Rel] = m
	}
	for rel, content := range run.configs {
		if path.Base(rel) == "package.json" {
			var p struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(content, &p) == nil && p.Name != "" {
				if _, ok := r.packages[p.Name]; !ok || path.Dir(rel) < r.packages[p.Name] {
					r.packages[p.Name] = path.Dir(rel)
				}
			}
		}
	}
	pairs := make(map[string]string)
	for _, f := range files {
		m := r.mods[f.Rel]
		b.addFile(f, "", "", m.test)
		for i, d := range m.facts.defs {
			if m.byQual[d.qual] != i {
				b.edge(ingest.FileKey(f.Rel), ingest.RelDefines, r.key(m, m.byQual[d.qual]))
				continue
			}
			p := ingest.SymbolPayload{Package: f.Rel, Name: d.name, Kind: d.kind, LineStart: d.line0, LineEnd: d.line1,
				Exported: d.exported, Test: m.test}
			if d.parent >= 0 {
				p.Recv = m.facts.defs[d.parent].qual
			}
			b.addSymbol(r.key(m, i), f.Rel, p)
			if d.parent >= 0 {
				b.edge(r.key(m, d.parent), ingest.RelContains, r.key(m, i))
			}
		}
		if m.test {
			if target := r.testedFile(f.Rel); target != "" {
				pairs[f.Rel] = target
			}
		}
	}
	for _, f := range files {
		m := r.mods[f.Rel]
		r.imports(m)
		for i, d := range m.facts.defs {
			for _, h := range d.heritage {
				if t := r.chain(m, -1, h); t.kind == tsTSymbol {
					switch t.mod.facts.defs[t.def].kind {
					case ingest.KindClass, ingest.KindInterface:
						b.edge(r.key(m, i), ingest.RelImplements, r.key(t.mod, t.def))
					}
				}
			}
		}
		r.uses(m)
	}
	b.pairTestFiles(pairs)
}

// key is the symbol key of a def: sym:ts:<path>#<qual> (js for JavaScript).
func (r *tsResolver) key(m *tsMod, i int) string {
	return symKey(m.file.Lang, m.file.Rel+"#"+m.facts.defs[i].qual)
}

// testedFile is the file a test file is named after: x.test.ts → x.ts.
func (r *tsResolver) testedFile(rel string) string {
	dir, base := path.Split(rel)
	for _, marker := range []string{".test.", ".spec."} {
		if i := strings.Index(base, marker); i > 0 {
			if t := r.file(dir + base[:i]); t != "" && t != rel {
				return t
			}
		}
	}
	return ""
}

// Extensions tried, in order, for an import without one.
var tsExts = []string{".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"}

// file resolves a path (without or with extension) to a file of the tree:
// p itself, p with an extension, p/index with one, and p.js naming p.ts.
func (r *tsResolver) file(p string) string {
	p = path.Clean(p)
	if _, ok := r.mods[p]; ok {
		return p
	}
	for _, ext := range tsExts {
		if _, ok := r.mods[p+ext]; ok {
			return p + ext
		}
	}
	for js, tss := range map[string][]string{".js": {".ts", ".tsx"}, ".jsx": {".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}} {
		if base, ok := strings.CutSuffix(p, js); ok {
			for _, ts := range tss {
				if _, ok := r.mods[base+ts]; ok {
					return base + ts
				}
			}
		}
	}
	for _, ext := range tsExts {
		if _, ok := r.mods[p+"/index"+ext]; ok {
			return p + "/index" + ext
		}
	}
	return ""
}

// resolveSpec resolves an import specifier of file from: to a file of the
// tree, or to the name of an external package.
func (r *tsResolver) resolveSpec(from, spec string) (rel, external string) {
	if spec == "" {
		return "", ""
	}
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || spec == "." || spec == ".." {
		return r.file(path.Join(path.Dir(from), spec)), ""
	}
	if strings.HasPrefix(spec, "/") {
		return "", ""
	}
	if c := r.config(path.Dir(from)); c != nil {
		for _, cand := range c.candidates(spec) {
			if f := r.file(cand); f != "" {
				return f, ""
			}
		}
	}
	name := spec
	parts := strings.SplitN(spec, "/", 3)
	switch {
	case strings.HasPrefix(spec, "@") && len(parts) >= 2:
		name = parts[0] + "/" + parts[1]
	default:
		name = parts[0]
	}
	if dir, ok := r.packages[name]; ok {
		rest := strings.TrimPrefix(spec, name)
		for _, cand := range []string{path.Join(dir, rest), path.Join(dir, "src", rest)} {
			if f := r.file(cand); f != "" {
				return f, ""
			}
		}
		return "", ""
	}
	name = strings.TrimPrefix(name, "node:")
	return "", name
}

// imports adds the imports edges of a file.
func (r *tsResolver) imports(m *tsMod) {
	fileKey := ingest.FileKey(m.file.Rel)
	for _, imp := range m.facts.imports {
		rel, ext := r.resolveSpec(m.file.Rel, imp.spec)
		switch {
		case rel != "":
			r.b.edge(fileKey, ingest.RelImports, ingest.FileKey(rel))
		case ext != "":
			key := pkgKey(m.file.Lang, ext)
			r.b.addPackage(m.file.Lang, key, ext, ext, "")
			r.b.edge(fileKey, ingest.RelImports, key)
		}
	}
}

// uses adds the calls and references edges of a file.
func (r *tsResolver) uses(m *tsMod) {
	r.atMod = m
	defer func() { r.at, r.atMod = 0, nil }()
	for _, u := range m.facts.uses {
		r.at = u.at
		src := ingest.FileKey(m.file.Rel)
		if u.scope >= 0 {
			src = r.key(m, m.byQual[m.facts.defs[u.scope].qual])
		}
		if u.kind == 't' {
			if r.typeParam(m, u.scope, u.chain[0]) {
				continue
			}
			if t := r.walk(r.lookup(m, u.chain[0]), u.chain[1:]); t.kind == tsTSymbol {
				switch t.mod.facts.defs[t.def].kind {
				case ingest.KindClass, ingest.KindInterface, ingest.KindType, ingest.KindEnum:
					r.b.edge(src, ingest.RelReferences, r.key(t.mod, t.def))
				}
			}
			continue
		}
		if u.kind == 'r' {
			// A function or class named, not called: never counted.
			if t := r.chain(m, u.scope, u.chain); t.kind == tsTSymbol {
				switch t.mod.facts.defs[t.def].kind {
				case ingest.KindFunc, ingest.KindMethod, ingest.KindClass:
					r.b.edge(src, ingest.RelReferences, r.key(t.mod, t.def))
				}
			}
			continue
		}
		if u.chain == nil {
			r.b.unresolvedIn(m.file.Rel)
			continue
		}
		if n := len(u.chain); n > 1 && u.chain[0] != "this" && u.chain[0] != "super" &&
			!(n == 2 && (u.chain[1] == "call" || u.chain[1] == "apply")) {
			// X.m() names X: a function used as a namespace
			// (User.count()) or a class (C.create()).
			if t := r.chain(m, u.scope, u.chain[:1]); t.kind == tsTSymbol {
				switch t.mod.facts.defs[t.def].kind {
				case ingest.KindFunc, ingest.KindClass:
					r.b.edge(src, ingest.RelReferences, r.key(t.mod, t.def))
				}
			}
		}
		t := r.chain(m, u.scope, u.chain)
		if n := len(u.chain); t.kind == tsTUnknown && n > 1 && (u.chain[n-1] == "call" || u.chain[n-1] == "apply") {
			// f.call(…), f.apply(…) call f (Function.prototype), unless f
			// has a member of that name.
			if ft := r.chain(m, u.scope, u.chain[:n-1]); ft.kind == tsTSymbol {
				switch ft.mod.facts.defs[ft.def].kind {
				case ingest.KindFunc, ingest.KindMethod:
					t = ft
				}
			}
		}
		if t.kind == tsTExternal {
			continue
		}
		if t.kind != tsTSymbol {
			if u.kind != 's' {
				r.b.unresolvedIn(m.file.Rel)
			}
			continue
		}
		rel := ingest.RelCalls
		switch t.mod.facts.defs[t.def].kind {
		case ingest.KindFunc, ingest.KindMethod:
			if u.kind == 'n' {
				rel = ingest.RelReferences
			}
		case ingest.KindClass:
			rel = ingest.RelReferences // new X(), or a call of a class
			// new X() calls X's constructor, its own or inherited.
			if ct := r.member(t.mod, t.def, "constructor", 0); u.kind == 'n' && ct.kind == tsTSymbol {
				r.b.edge(src, ingest.RelCalls, r.key(ct.mod, ct.def))
				if m.test {
					r.b.test(src, m.file.Rel, r.key(ct.mod, ct.def))
				}
			}
		default:
			r.b.unresolvedIn(m.file.Rel)
			continue
		}
		dst := r.key(t.mod, t.def)
		r.b.edge(src, rel, dst)
		if m.test {
			r.b.test(src, m.file.Rel, dst)
		}
	}
}

func (r *tsResolver) typeParam(m *tsMod, scope int, name string) bool {
	for s := scope; s >= 0; s = m.facts.defs[s].parent {
		if m.facts.tlocals[s][name] {
			return true
		}
	}
	return false
}

// chain resolves a name chain used inside def scope of m.
func (r *tsResolver) chain(m *tsMod, scope int, chain []string) tsTarget {
	defs := m.facts.defs
	root := chain[0]
	if name, ok := strings.CutSuffix(root, "()"); ok {
		// f().m: what f returns.
		return r.walkValue(r.callResult(r.chain(m, scope, []string{name})), chain[1:])
	}
	if root == "this" && scope >= 0 && len(chain) == 2 {
		// In a member of a function or object (X.m = function…, the
		// parse checked this is the member's own), this is X, or an
		// instance of X for X.prototype.m; in a top-level function, an
		// instance of it (a constructor function).
		d := defs[scope]
		if p := d.parent; p >= 0 && r.holder(defs[p].kind) {
			return r.ownMember(m, p, chain[1], d.proto)
		}
		if d.parent < 0 && d.kind == ingest.KindFunc {
			return r.ownMember(m, scope, chain[1], true)
		}
	}
	if root == "this" || root == "super" {
		cls := scope
		for cls >= 0 && defs[cls].kind != ingest.KindClass {
			cls = defs[cls].parent
		}
		if cls < 0 || len(chain) < 2 || root == "super" && len(chain) != 2 {
			return tsTarget{}
		}
		if root == "this" {
			return r.walkValue(tsTarget{kind: tsTInstance, mod: m, def: cls}, chain[1:])
		}
		for _, h := range defs[cls].extends {
			if t := r.chain(m, -1, h); t.kind == tsTSymbol && t.mod.facts.defs[t.def].kind == ingest.KindClass {
				return r.member(t.mod, t.def, chain[1], 0)
			}
		}
		return tsTarget{}
	}
	if v, ok := r.callbackVal(m, root); ok {
		return r.walkValue(r.value(m, scope, v), chain[1:])
	}
	for s := scope; s >= 0; s = defs[s].parent {
		if m.facts.locals[s][root] {
			// A local value: what its declaration says it is, else
			// unknown.
			if v, ok := m.facts.vtypes[s][root]; ok {
				return r.walkValue(r.value(m, s, v), chain[1:])
			}
			return tsTarget{}
		}
		if defs[s].kind == ingest.KindNamespace {
			if j, ok := m.byQual[defs[s].qual+"."+root]; ok {
				return r.walk(tsTarget{kind: tsTSymbol, mod: m, def: j}, chain[1:])
			}
		}
	}
	if imp, ok := r.localImport(m, scope, root); ok {
		return r.walk(imp, chain[1:])
	}
	t := r.lookup(m, root)
	if t.kind == tsTUnknown {
		// A name declared at top level (or in a callback there) is that
		// binding, never a global of the same name.
		if v, ok := m.facts.vtypes[-1][root]; ok {
			return r.walkValue(r.value(m, -1, v), chain[1:])
		}
		if jsGlobals[root] {
			return tsTarget{kind: tsTExternal}
		}
	}
	return r.walk(t, chain[1:])
}

// callbackVal is the value of name as a parameter of the innermost
// function passed as an argument around the use being resolved.
func (r *tsResolver) callbackVal(m *tsMod, name string) (tsVal, bool) {
	if m != r.atMod {
		return tsVal{}, false
	}
	var best *tsCallbackVal
	for i, c := range m.facts.cbvals[name] {
		if c.start < r.at && r.at < c.end && (best == nil || c.start >= best.start) {
			best = &m.facts.cbvals[name][i]
		}
	}
	if best == nil {
		return tsVal{}, false
	}
	return best.v, true
}

// value is what a declared value (of a name in def scope of m) is: an
// instance of the class or interface its type names, of the class it
// news, or of what the function it calls declares it returns.
func (r *tsResolver) value(m *tsMod, scope int, v tsVal) tsTarget {
	if v.chain == nil || r.depth > 16 {
		return tsTarget{}
	}
	r.depth++
	defer func() { r.depth-- }()
	var t tsTarget
	switch v.how {
	case 'o':
		if xs := r.chain(m, scope, v.chain); xs.kind == tsTArray {
			return tsTarget{kind: tsTInstance, mod: xs.mod, def: xs.def}
		}
		return tsTarget{}
	case 'i', 'a':
		if r.typeParam(m, scope, v.chain[0]) {
			return tsTarget{}
		}
		t = r.chain(m, scope, v.chain)
	case 'c', 'w':
		fn := r.chain(m, scope, v.chain)
		if fn.kind == tsTExternal {
			return fn // what a function outside the tree returns
		}
		return r.returned(fn, v.how == 'w')
	case 'p', 'q':
		return r.passed(r.chain(m, scope, v.chain), v)
	}
	if t.kind != tsTSymbol {
		return tsTarget{}
	}
	switch t.mod.facts.defs[t.def].kind {
	case ingest.KindClass, ingest.KindInterface:
		if v.how == 'a' {
			return tsTarget{kind: tsTArray, mod: t.mod, def: t.def}
		}
		return tsTarget{kind: tsTInstance, mod: t.mod, def: t.def}
	case ingest.KindFunc:
		if v.how == 'i' {
			return tsTarget{kind: tsTInstance, mod: t.mod, def: t.def} // new F(): a constructor function's instance
		}
	}
	return tsTarget{}
}

// passed is what parameter v.param of a function passed as argument v.arg
// of callee receives (of callee's constructor for new): the type the
// callee declares for it, as for (s: Subscriber<T>) => void.
func (r *tsResolver) passed(callee tsTarget, v tsVal) tsTarget {
	if callee.kind != tsTSymbol {
		return tsTarget{}
	}
	if v.how == 'q' {
		if callee.mod.facts.defs[callee.def].kind != ingest.KindClass {
			return tsTarget{}
		}
		if callee = r.member(callee.mod, callee.def, "constructor", 0); callee.kind != tsTSymbol {
			return tsTarget{}
		}
	}
	d := &callee.mod.facts.defs[callee.def]
	if d.kind != ingest.KindFunc && d.kind != ingest.KindMethod {
		return tsTarget{}
	}
	types := d.cbParams[v.arg]
	if v.param >= len(types) || types[v.param] == nil || r.typeParam(callee.mod, callee.def, types[v.param][0]) {
		return tsTarget{}
	}
	ty := types[v.param]
	t := r.walk(r.lookup(callee.mod, ty[0]), ty[1:])
	if t.kind == tsTSymbol {
		switch t.mod.facts.defs[t.def].kind {
		case ingest.KindClass, ingest.KindInterface:
			return tsTarget{kind: tsTInstance, mod: t.mod, def: t.def}
		}
	}
	return tsTarget{}
}

// callResult is what calling t returns: an instance of the class or
// interface its return annotation names; outside the tree for a call
// outside it; else unknown.
func (r *tsResolver) callResult(t tsTarget) tsTarget {
	if t.kind == tsTExternal {
		return t
	}
	return r.returned(t, false)
}

// returned is the value a call of function or method fn returns, as its
// return annotation declares it (awaited: T of Promise<T>).
func (r *tsResolver) returned(fn tsTarget, awaited bool) tsTarget {
	if fn.kind != tsTSymbol {
		return tsTarget{}
	}
	d := &fn.mod.facts.defs[fn.def]
	ret := d.ret
	if awaited {
		ret = d.retAwait
	}
	if ret == nil || d.kind != ingest.KindFunc && d.kind != ingest.KindMethod || r.typeParam(fn.mod, fn.def, ret[0]) {
		return tsTarget{}
	}
	t := r.walk(r.lookup(fn.mod, ret[0]), ret[1:])
	if t.kind != tsTSymbol {
		return tsTarget{}
	}
	switch t.mod.facts.defs[t.def].kind {
	case ingest.KindClass, ingest.KindInterface:
		return tsTarget{kind: tsTInstance, mod: t.mod, def: t.def}
	}
	return tsTarget{}
}

// walkValue follows a chain of member names (and calls, "m()") from a
// value: methods of its class (or interface, or what they extend), and
// fields whose declared value is known.
func (r *tsResolver) walkValue(t tsTarget, rest []string) tsTarget {
	for i, seg := range rest {
		name, call := strings.CutSuffix(seg, "()")
		if t.kind == tsTArray {
			if seg != tsElem {
				return tsTarget{kind: tsTExternal} // xs.push(), xs.map(): the array's own methods
			}
			t.kind = tsTInstance
			continue
		}
		if t.kind != tsTInstance {
			return r.walk(t, rest[i:])
		}
		var mt tsTarget
		if t.mod.facts.defs[t.def].kind == ingest.KindFunc {
			mt = r.ownMember(t.mod, t.def, name, true)
		} else if mt = r.member(t.mod, t.def, name, 0); mt.kind != tsTSymbol {
			if call {
				return tsTarget{} // a field's function value: not followed
			}
			t = r.field(t.mod, t.def, name, 0)
			continue
		}
		if call {
			t = r.callResult(mt)
			continue
		}
		return r.walk(mt, rest[i+1:])
	}
	return t
}

// field is the declared value of field name of class or interface i of
// m, or of what it extends.
func (r *tsResolver) field(m *tsMod, i int, name string, depth int) tsTarget {
	if v, ok := m.facts.ftypes[i][name]; ok {
		return r.value(m, i, v)
	}
	if depth > 16 {
		return tsTarget{}
	}
	for _, h := range m.facts.defs[i].extends {
		if t := r.chain(m, -1, h); t.kind == tsTSymbol {
			if k := t.mod.facts.defs[t.def].kind; k == ingest.KindClass || k == ingest.KindInterface {
				if ft := r.field(t.mod, t.def, name, depth+1); ft.kind != tsTUnknown {
					return ft
				}
			}
		}
	}
	return tsTarget{}
}

// walk follows the rest of a chain from a resolved root.
func (r *tsResolver) walk(t tsTarget, rest []string) tsTarget {
	for i, seg := range rest {
		name, call := strings.CutSuffix(seg, "()")
		switch t.kind {
		case tsTModule:
			t = r.export(t.mod, name, 0)
		case tsTSymbol:
			d := t.mod.facts.defs[t.def]
			switch d.kind {
			case ingest.KindClass, ingest.KindInterface:
				t = r.member(t.mod, t.def, name, 0)
			case ingest.KindNamespace:
				j, ok := t.mod.byQual[d.qual+"."+name]
				if !ok {
					return tsTarget{}
				}
				t = tsTarget{kind: tsTSymbol, mod: t.mod, def: j}
			case ingest.KindFunc:
				t = r.ownMember(t.mod, t.def, name, false)
			case ingest.KindVar, ingest.KindConst:
				// An object's own member, else a member of the value
				// its declaration gives it.
				if om := r.ownMember(t.mod, t.def, name, false); om.kind == tsTSymbol {
					t = om
				} else if v, ok := t.mod.facts.vtypes[d.parent][d.name]; ok {
					t = r.walkValue(r.value(t.mod, d.parent, v), []string{name})
				} else {
					return tsTarget{}
				}
			default:
				return tsTarget{}
			}
		case tsTExternal:
			return t
		case tsTInstance, tsTArray:
			return r.walkValue(t, rest[i:])
		default:
			return tsTarget{}
		}
		if call {
			// m(): what m returns.
			return r.walkValue(r.callResult(t), rest[i+1:])
		}
	}
	return t
}

// localImport resolves a name bound by a require() or import() inside a
// def enclosing scope.
func (r *tsResolver) localImport(m *tsMod, scope int, name string) (tsTarget, bool) {
	for _, imp := range m.facts.imports {
		if imp.scope < 0 || imp.reexport {
			continue
		}
		inside := false
		for s := scope; s >= 0; s = m.facts.defs[s].parent {
			if s == imp.scope {
				inside = true
			}
		}
		if !inside {
			continue
		}
		for _, bd := range imp.bindings {
			if bd.local == name {
				return r.importTarget(m, imp, bd.imported), true
			}
		}
	}
	return tsTarget{}, false
}

// lookup resolves a top-level name of m: its defs, then its imports.
func (r *tsResolver) lookup(m *tsMod, name string) tsTarget {
	if i, ok := m.byQual[name]; ok && m.facts.defs[i].parent < 0 {
		return tsTarget{kind: tsTSymbol, mod: m, def: i}
	}
	for _, imp := range m.facts.imports {
		if imp.scope >= 0 || imp.reexport {
			continue
		}
		for _, bd := range imp.bindings {
			if bd.local == name {
				return r.importTarget(m, imp, bd.imported)
			}
		}
	}
	return tsTarget{}
}

// importTarget is what an imported name refers to.
func (r *tsResolver) importTarget(m *tsMod, imp tsImport, imported string) tsTarget {
	rel, ext := r.resolveSpec(m.file.Rel, imp.spec)
	if rel == "" {
		if ext != "" {
			return tsTarget{kind: tsTExternal}
		}
		return tsTarget{}
	}
	src := r.mods[rel]
	if imported == "*" {
		// require() returns module.exports.
		if imp.require && src.facts.main != "" && !src.busy["\x00main"] {
			src.busy["\x00main"] = true
			defer delete(src.busy, "\x00main")
			return r.lookup(src, src.facts.main)
		}
		return tsTarget{kind: tsTModule, mod: src}
	}
	return r.export(src, imported, 0)
}

// holder reports whether a def of kind may hold CommonJS members
// (X.m = function…).
func (r *tsResolver) holder(kind string) bool {
	return kind == ingest.KindFunc || kind == ingest.KindVar || kind == ingest.KindConst
}

// ownMember finds the member name of function or object i of m assigned
// to X itself (proto false: X.m = …) or to its instances (proto true:
// X.prototype.m = …).
func (r *tsResolver) ownMember(m *tsMod, i int, name string, proto bool) tsTarget {
	if j, ok := m.byQual[m.facts.defs[i].qual+"."+name]; ok && m.facts.defs[j].proto == proto && m.facts.defs[j].parent == i {
		return tsTarget{kind: tsTSymbol, mod: m, def: j}
	}
	return tsTarget{}
}

// export resolves what module m exports as name.
func (r *tsResolver) export(m *tsMod, name string, depth int) tsTarget {
	if depth > 16 || m.busy[name] {
		return tsTarget{}
	}
	m.busy[name] = true
	defer delete(m.busy, name)
	for i, d := range m.facts.defs {
		if d.parent < 0 && d.exported && d.name == name && m.byQual[d.qual] == i {
			return tsTarget{kind: tsTSymbol, mod: m, def: i}
		}
	}
	for _, e := range m.facts.exports {
		if e.imported == name {
			return r.lookup(m, e.local)
		}
	}
	for _, imp := range m.facts.imports {
		if !imp.reexport {
			continue
		}
		for _, bd := range imp.bindings {
			if bd.local == name {
				return r.importTarget(m, imp, bd.imported)
			}
		}
	}
	for _, imp := range m.facts.imports {
		if !imp.reexport || len(imp.bindings) != 1 || imp.bindings[0].local != "*" || name == "default" {
			continue
		}
		if rel, _ := r.resolveSpec(m.file.Rel, imp.spec); rel != "" {
			if t := r.export(r.mods[rel], name, depth+1); t.kind != tsTUnknown {
				return t
			}
		}
	}
	// CommonJS: a property of module.exports (const { use } =
	// require('./app') where module.exports = app).
	if m.facts.main != "" && name != "default" {
		if t := r.lookup(m, m.facts.main); t.kind == tsTSymbol {
			return r.walk(t, []string{name})
		}
	}
	return tsTarget{}
}

// member finds a method of class (or interface) i of m, or of what it
// extends (not what it implements: a class's members are its own or its
// base's); a field of that name declared first hides any method.
func (r *tsResolver) member(m *tsMod, i int, name string, depth int) tsTarget {
	if j, ok := m.byQual[m.facts.defs[i].qual+"."+name]; ok {
		return tsTarget{kind: tsTSymbol, mod: m, def: j}
	}
	if _, ok := m.facts.ftypes[i][name]; ok {
		return tsTarget{}
	}
	lk := tsMemberLookup{m, i, name}
	if depth > 16 || r.inMember[lk] {
		return tsTarget{}
	}
	r.inMember[lk] = true
	defer delete(r.inMember, lk)
	for _, h := range m.facts.defs[i].extends {
		if t := r.chain(m, -1, h); t.kind == tsTSymbol {
			if k := t.mod.facts.defs[t.def].kind; k == ingest.KindClass || k == ingest.KindInterface {
				if mt := r.member(t.mod, t.def, name, depth+1); mt.kind == tsTSymbol {
					return mt
				}
			}
		}
	}
	return tsTarget{}
}

// tsConfig is the part of a tsconfig.json (or jsconfig.json) that
// resolution uses.
type tsConfig struct {
	dir     string // of the file
	baseURL string // relative to the tree root
	paths   [][2]string
	hasBase bool
}

// config is the tsconfig.json or jsconfig.json nearest above dir (nil if
// none), with what it extends inside the tree.
func (r *tsResolver) config(dir string) *tsConfig {
	for d := dir; ; d = path.Dir(d) {
		if c, ok := r.configs[d]; ok {
			if c != nil {
				return c
			}
		} else {
			c := r.readConfig(d)
			r.configs[d] = c
			if c != nil {
				return c
			}
		}
		if d == "." {
			return nil
		}
	}
}

func (r *tsResolver) readConfig(dir string) *tsConfig {
	for _, name := range []string{"tsconfig.json", "jsconfig.json"} {
		rel := path.Join(dir, name)
		if _, ok := r.run.configs[rel]; ok {
			c := &tsConfig{dir: dir}
			r.mergeConfig(c, rel, 0)
			return c
		}
	}
	return nil
}

// mergeConfig reads rel and what it extends (inside the tree); the
// extending file wins.
func (r *tsResolver) mergeConfig(c *tsConfig, rel string, depth int) {
	content, ok := r.run.configs[rel]
	if !ok || depth > 8 {
		return
	}
	var raw struct {
		Extends         any `json:"extends"`
		CompilerOptions struct {
			BaseURL *string             `json:"baseUrl"`
			Paths   map[string][]string `json:"paths"`
		} `json:"compilerOptions"`
	}
	if json.Unmarshal(jsonc(content), &raw) != nil {
		return
	}
	if ext, ok := raw.Extends.(string); ok && (strings.HasPrefix(ext, "./") || strings.HasPrefix(ext, "../")) {
		target := path.Join(path.Dir(rel), ext)
		if !strings.HasSuffix(target, ".json") {
			target += ".json"
		}
		r.mergeConfig(c, target, depth+1)
	}
	if raw.CompilerOptions.BaseURL != nil {
		c.baseURL = path.Join(path.Dir(rel), *raw.CompilerOptions.BaseURL)
		c.hasBase = true
	}
	if raw.CompilerOptions.Paths != nil {
		base := c.baseURL
		if !c.hasBase {
			base = path.Dir(rel)
		}
		c.paths = nil
		keys := make([]string, 0, len(raw.CompilerOptions.Paths))
		for k := range raw.CompilerOptions.Paths {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, v := range raw.CompilerOptions.Paths[k] {
				c.paths = append(c.paths, [2]string{k, path.Join(base, v)})
			}
		}
	}
}

// candidates are the paths a non-relative specifier may name: through
// "paths" patterns (exact, or with one "*"), then under baseUrl.
func (c *tsConfig) candidates(spec string) []string {
	var out []string
	for _, p := range c.paths {
		pattern, target := p[0], p[1]
		if prefix, suffix, ok := strings.Cut(pattern, "*"); ok {
			if strings.HasPrefix(spec, prefix) && strings.HasSuffix(spec, suffix) && len(spec) >= len(prefix)+len(suffix) {
				out = append(out, strings.Replace(target, "*", spec[len(prefix):len(spec)-len(suffix)], 1))
			}
		} else if pattern == spec {
			out = append(out, target)
		}
	}
	if c.hasBase {
		out = append(out, path.Join(c.baseURL, spec))
	}
	return out
}

var (
	jsoncComment = regexp.MustCompile(`(?s)"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/`)
	jsoncComma   = regexp.MustCompile(`,(\s*[}\]])`)
)

// jsonc turns the JSON-with-comments of tsconfig files into JSON: comments
// and trailing commas go, strings stay.
func jsonc(b []byte) []byte {
	b = jsoncComment.ReplaceAllFunc(b, func(m []byte) []byte {
		if m[0] == '"' {
			return m
		}
		return nil
	})
	return jsoncComma.ReplaceAll(b, []byte("$1"))
}

// jsGlobals are the globals of JavaScript runtimes: calls through them
// are calls outside the tree, not unresolved ones.
var jsGlobals = func() map[string]bool {
	m := make(map[string]bool)
	for _, n := range strings.Fields(`Array ArrayBuffer Atomics BigInt BigInt64Array Boolean DataView Date Error
		EvalError Float32Array Float64Array Function Int8Array Int16Array Int32Array Intl JSON Map Math Number
		Object Promise Proxy RangeError ReferenceError Reflect RegExp Set SharedArrayBuffer String Symbol
		SyntaxError TypeError URIError Uint8Array Uint8ClampedArray Uint16Array Uint32Array WeakMap WeakRef WeakSet
		console decodeURI decodeURIComponent encodeURI encodeURIComponent escape eval globalThis isFinite isNaN
		parseFloat parseInt unescape setTimeout clearTimeout setInterval clearInterval setImmediate clearImmediate
		queueMicrotask structuredClone fetch URL URLSearchParams TextEncoder TextDecoder AbortController
		window document navigator process Buffer require module exports __dirname __filename global
		describe it test expect beforeEach afterEach beforeAll afterAll jest vi suite`) {
		m[n] = true
	}
	return m
}()
