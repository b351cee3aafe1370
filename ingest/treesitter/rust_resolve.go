package treesitter

import (
	"bufio"
	"bytes"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// rsPkg is a Cargo package of the tree (a directory with Cargo.toml), or
// the tree itself when it has none.
type rsPkg struct {
	dir, name string
	lib       string          // the library crate's name ([lib] name, else the package name with _)
	externs   map[string]bool // dependency crate names
}

type rsCrate struct {
	id   string
	pkg  *rsPkg
	root *rsScope
	test bool // a tests/ or benches/ crate: test code throughout
}

// rsScope is a module: a crate root, a file module or an inline one.
type rsScope struct {
	crate    *rsCrate
	name     string // "crate_id::a::b"
	key      string
	parent   *rsScope
	children map[string]*rsScope
	items    map[string]rsTarget
	uses     []rsUse // scope field unused here
	mod      *rsMod
	inline   int // item of mod that is this inline module, -1 for a file module
	test     bool
}

// rsMod is one Rust file of the tree.
type rsMod struct {
	file      *parsedFile
	facts     *rsFile
	scope     *rsScope   // the file's module
	itemScope []*rsScope // item → module it sits in
	keys      []string   // item → symbol key ("" for impls)
	selfKey   []string   // impl or trait item → key of its self type or trait ("" if not in the tree)
}

// rsTarget is what a path resolves to.
type rsTarget struct {
	kind  int
	scope *rsScope // rsTModule
	key   string   // rsTItem
	item  string   // rsTItem: its kind
	ext   string   // rsTExternal: the crate's name
}

const (
	rsTUnknown = iota
	rsTModule
	rsTItem
	rsTExternal
)

type rsResolver struct {
	b        *builder
	crates   []*rsCrate
	libs     map[string]*rsCrate // library crate name → crate
	mods     map[string]*rsMod   // by rel
	inherent map[string]map[string]string
	traitImp map[string]map[string][]string
	traitFns map[string]map[string]string // trait key → method → key
	impls    map[string][]string          // type key → trait keys
	itemKind map[string]string
	itemMod  map[string]*rsScope // item key → module declaring it
	testKeys map[string]bool
	busy     map[*rsScope]map[string]bool
}

// rsStd are the crates every crate can name without a dependency.
var rsStd = map[string]bool{"std": true, "core": true, "alloc": true, "proc_macro": true, "test": true}

// rsPrelude are names of the standard prelude (and common macros' helpers)
// a call may use without importing them.
var rsPrelude = map[string]bool{"Some": true, "None": true, "Ok": true, "Err": true, "Box": true, "Vec": true,
	"String": true, "Option": true, "Result": true, "drop": true, "Default": true, "From": true, "Into": true,
	"ToString": true, "Clone": true, "Iterator": true, "IntoIterator": true, "ToOwned": true}

func resolveRust(b *builder, run *runCtx, files []*parsedFile) {
	r := &rsResolver{b: b, libs: make(map[string]*rsCrate), mods: make(map[string]*rsMod),
		inherent: make(map[string]map[string]string), traitImp: make(map[string]map[string][]string),
		traitFns: make(map[string]map[string]string), impls: make(map[string][]string),
		itemKind: make(map[string]string), itemMod: make(map[string]*rsScope), testKeys: make(map[string]bool), busy: make(map[*rsScope]map[string]bool)}
	for _, f := range files {
		facts, _ := f.facts.(*rsFile)
		if facts == nil {
			facts = &rsFile{}
		}
		r.mods[f.Rel] = &rsMod{file: f, facts: facts, itemScope: make([]*rsScope, len(facts.items)),
			keys: make([]string, len(facts.items)), selfKey: make([]string, len(facts.items))}
	}
	pkgs := r.packages(run)
	pkgOf := func(rel string) *rsPkg {
		var best *rsPkg
		for _, p := range pkgs {
			if (p.dir == "." || rel == p.dir || strings.HasPrefix(rel, p.dir+"/")) && (best == nil || len(p.dir) > len(best.dir)) {
				best = p
			}
		}
		return best
	}
	// Crate roots, by Cargo's conventions, then every file not reached
	// through mod declarations as a root of its own.
	for _, p := range pkgs {
		base := func(rel string) string {
			if p.dir == "." {
				return rel
			}
			return p.dir + "/" + rel
		}
		hasLib := r.mods[base("src/lib.rs")] != nil
		var roots []string
		for _, f := range files {
			if pkgOf(f.Rel) != p {
				continue
			}
			rel := strings.TrimPrefix(f.Rel, base(""))
			switch {
			case rel == "src/lib.rs", rel == "src/main.rs", rel == "build.rs",
				path.Dir(rel) == "src/bin", strings.HasPrefix(rel, "src/bin/") && path.Base(rel) == "main.rs" && strings.Count(rel, "/") == 3,
				isCargoTargetDir(rel, "tests"), isCargoTargetDir(rel, "examples"), isCargoTargetDir(rel, "benches"):
				roots = append(roots, rel)
			}
		}
		slices.SortFunc(roots, func(a, b string) int {
			rank := func(s string) int {
				switch s {
				case "src/lib.rs":
					return 0
				case "src/main.rs":
					return 1
				}
				return 2
			}
			if ra, rb := rank(a), rank(b); ra != rb {
				return ra - rb
			}
			return strings.Compare(a, b)
		})
		for _, rel := range roots {
			id := p.lib + "@" + strings.TrimSuffix(rel, ".rs")
			switch {
			case rel == "src/lib.rs":
				id = p.lib
			case rel == "src/main.rs" && !hasLib:
				id = p.lib
			}
			c := r.newCrate(id, p, r.mods[base(rel)])
			c.test = strings.HasPrefix(rel, "tests/") || strings.HasPrefix(rel, "benches/")
			if rel == "src/lib.rs" {
				r.libs[p.lib] = c
			}
		}
	}
	for _, f := range files {
		if m := r.mods[f.Rel]; m.scope == nil {
			p := pkgOf(f.Rel)
			rel := f.Rel
			if p.dir != "." {
				rel = strings.TrimPrefix(rel, p.dir+"/")
			}
			r.newCrate(p.lib+"@"+strings.TrimSuffix(rel, ".rs"), p, m)
		}
	}
	r.emit(files)
	for _, f := range files {
		r.implsOf(r.mods[f.Rel])
	}
	for _, f := range files {
		r.imports(r.mods[f.Rel])
		r.uses(r.mods[f.Rel])
	}
}

// imports adds an imports edge from a file to each module its use
// declarations name (or that declares the item they name) whose body is
// in another file, and to the package node of an external crate.
func (r *rsResolver) imports(m *rsMod) {
	fileKey := ingest.FileKey(m.file.Rel)
	for _, u := range m.facts.uses {
		sc := m.scope
		if u.scope >= 0 {
			sc = m.itemScope[u.scope]
			if m.facts.items[u.scope].kind == ingest.KindModule {
				sc = sc.children[m.facts.items[u.scope].name]
			}
		}
		if len(u.path) == 0 {
			continue
		}
		var target *rsScope
		switch t := r.path(sc, u.path, 0); t.kind {
		case rsTModule:
			target = t.scope
		case rsTItem:
			target = r.itemMod[t.key]
		case rsTExternal:
			if name := t.ext; !rsPrelude[name] {
				key := pkgKey(ingest.LangRust, name)
				r.b.addPackage(ingest.LangRust, key, name, name, "")
				r.b.edge(fileKey, ingest.RelImports, key)
			}
		}
		if target != nil && target.mod != m {
			r.b.edge(fileKey, ingest.RelImports, target.key)
		}
	}
}

func isCargoTargetDir(rel, dir string) bool {
	if path.Dir(rel) == dir {
		return true
	}
	parts := strings.Split(rel, "/")
	return len(parts) == 3 && parts[0] == dir && parts[2] == "main.rs"
}

// packages reads the Cargo.toml files of the tree; files outside every
// package belong to one named after the root directory.
func (r *rsResolver) packages(run *runCtx) []*rsPkg {
	var out []*rsPkg
	hasRoot := false
	for rel, content := range run.configs {
		if path.Base(rel) != "Cargo.toml" {
			continue
		}
		p := parseCargo(content)
		p.dir = path.Dir(rel)
		if p.name == "" {
			p.name = path.Base(filepath.ToSlash(filepath.Join(run.root, p.dir)))
		}
		if p.lib == "" {
			p.lib = strings.ReplaceAll(p.name, "-", "_")
		}
		hasRoot = hasRoot || p.dir == "."
		out = append(out, p)
	}
	if !hasRoot {
		name := filepath.Base(run.root)
		out = append(out, &rsPkg{dir: ".", name: name, lib: strings.ReplaceAll(name, "-", "_"), externs: map[string]bool{}})
	}
	slices.SortFunc(out, func(a, b *rsPkg) int { return strings.Compare(a.dir, b.dir) })
	return out
}

// parseCargo reads the package name, the [lib] name and the dependency
// names of a Cargo.toml (a line-based reading of the few keys it needs).
func parseCargo(b []byte) *rsPkg {
	p := &rsPkg{externs: make(map[string]bool)}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[] ")
			if dep, ok := cargoDepSection(section); ok && dep != "" {
				p.externs[strings.ReplaceAll(dep, "-", "_")] = true
			}
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.Trim(strings.TrimSpace(val), `"'`)
		switch {
		case section == "package" && key == "name":
			p.name = val
		case section == "lib" && key == "name":
			p.lib = val
		default:
			if dep, ok := cargoDepSection(section); ok && dep == "" && !strings.Contains(key, ".") {
				p.externs[strings.ReplaceAll(strings.Trim(key, `"`), "-", "_")] = true
			}
		}
	}
	return p
}

// cargoDepSection reports whether a section lists dependencies
// ([dependencies], [target.'cfg(…)'.dev-dependencies]…); for a
// [dependencies.name] section it returns name.
func cargoDepSection(section string) (string, bool) {
	for _, d := range []string{"dependencies", "dev-dependencies", "build-dependencies"} {
		if section == d || strings.HasSuffix(section, "."+d) {
			return "", true
		}
		if i := strings.Index(section, d+"."); i >= 0 && (i == 0 || section[i-1] == '.') {
			return section[i+len(d)+1:], true
		}
	}
	return "", false
}

// newCrate makes a crate rooted at m and walks its module tree.
func (r *rsResolver) newCrate(id string, p *rsPkg, m *rsMod) *rsCrate {
	c := &rsCrate{id: id, pkg: p}
	c.root = r.newScope(c, nil, "", m, -1)
	r.crates = append(r.crates, c)
	r.fileModule(c.root, m, true)
	return c
}

func (r *rsResolver) newScope(c *rsCrate, parent *rsScope, name string, m *rsMod, inline int) *rsScope {
	sc := &rsScope{crate: c, parent: parent, children: make(map[string]*rsScope), items: make(map[string]rsTarget),
		mod: m, inline: inline}
	if parent == nil {
		sc.name, sc.key = c.id, pkgKey(ingest.LangRust, c.id)
	} else {
		sc.name = parent.name + "::" + name
		sc.key = symKey(ingest.LangRust, sc.name)
		parent.children[name] = sc
		sc.test = parent.test
	}
	return sc
}

// fileModule fills the module scope sc with the items of file m, its
// inline modules, and the files its mod declarations name.
func (r *rsResolver) fileModule(sc *rsScope, m *rsMod, crateRoot bool) {
	m.scope = sc
	facts := m.facts
	scopes := make(map[int]*rsScope) // inline module item → scope
	scopeOf := func(parent int) *rsScope {
		for p := parent; p >= 0; p = facts.items[p].parent {
			if s, ok := scopes[p]; ok {
				return s
			}
		}
		return sc
	}
	dirOf := make(map[int]string) // inline module item → directory of its mod files
	fileDir := path.Dir(m.file.Rel)
	base := fileDir
	if !crateRoot && path.Base(m.file.Rel) != "mod.rs" {
		base = path.Join(fileDir, strings.TrimSuffix(path.Base(m.file.Rel), ".rs"))
	}
	for i, it := range facts.items {
		parentScope := scopeOf(it.parent)
		m.itemScope[i] = parentScope
		if it.kind == ingest.KindModule {
			child := r.newScope(sc.crate, parentScope, it.name, m, i)
			child.test = child.test || it.cfgTest
			scopes[i] = child
			pd := base
			if it.parent >= 0 {
				pd = dirOf[it.parent]
			}
			dirOf[i] = path.Join(pd, it.name)
		}
	}
	for _, u := range facts.uses {
		if u.scope < 0 || facts.items[u.scope].kind == ingest.KindModule {
			s := scopeOf(u.scope)
			s.uses = append(s.uses, u)
		}
	}
	for _, md := range facts.mods {
		parent := scopeOf(md.scope)
		dir := base
		if md.scope >= 0 {
			dir = dirOf[md.scope]
		}
		var cands []string
		if md.path != "" {
			cands = []string{path.Join(fileDir, md.path)}
		} else {
			cands = []string{path.Join(dir, md.name+".rs"), path.Join(dir, md.name, "mod.rs")}
		}
		for _, c := range cands {
			if cm := r.mods[c]; cm != nil && cm.scope == nil {
				child := r.newScope(sc.crate, parent, md.name, cm, -1)
				child.test = child.test || md.cfgTst
				r.fileModule(child, cm, false)
				break
			}
		}
	}
}

// emit adds the crate, module and item nodes and their structure edges.
func (r *rsResolver) emit(files []*parsedFile) {
	b := r.b
	for _, c := range r.crates {
		b.addPackage(ingest.LangRust, c.root.key, c.id, c.pkg.name, c.pkg.dir)
	}
	for _, f := range files {
		m := r.mods[f.Rel]
		sc := m.scope
		test := sc.test || sc.crate.test
		b.addFile(f, sc.name, sc.crate.root.key, test)
		if sc.parent != nil && sc.inline < 0 {
			b.addSymbol(sc.key, f.Rel, ingest.SymbolPayload{Package: sc.parent.name, Name: sc.name[strings.LastIndex(sc.name, "::")+2:],
				Kind: ingest.KindModule, LineStart: 1, LineEnd: max(f.Lines, 1), Test: test})
			b.edge(sc.parent.key, ingest.RelContains, sc.key)
		}
		for i, it := range m.facts.items {
			isc := m.itemScope[i]
			itest := r.itemTest(m, i)
			switch it.kind {
			case "impl":
				continue
			case ingest.KindModule:
				child := isc.children[it.name]
				m.keys[i] = child.key
				b.addSymbol(child.key, f.Rel, ingest.SymbolPayload{Package: isc.name, Name: it.name, Kind: ingest.KindModule,
					LineStart: it.line0, LineEnd: it.line1, Exported: it.pub, Test: itest})
				b.edge(isc.key, ingest.RelContains, child.key)
				continue
			case ingest.KindMethod:
				continue // keyed once impls and traits resolve
			}
			if it.parent >= 0 && m.facts.items[it.parent].kind != ingest.KindModule {
				continue // an associated type or const of an impl or trait
			}
			key := symKey(ingest.LangRust, isc.name+"::"+it.name)
			m.keys[i] = key
			r.itemKind[key] = it.kind
			r.itemMod[key] = isc
			if _, ok := isc.items[it.name]; !ok {
				isc.items[it.name] = rsTarget{kind: rsTItem, key: key, item: it.kind}
			}
			r.symbol(m, i, key, isc.name, "", itest)
		}
	}
}

func (r *rsResolver) symbol(m *rsMod, i int, key, pkg, recv string, test bool) {
	it := m.facts.items[i]
	if test {
		r.testKeys[key] = true
	}
	r.b.addSymbol(key, m.file.Rel, ingest.SymbolPayload{Package: pkg, Name: it.name, Recv: recv, Kind: it.kind,
		LineStart: it.line0, LineEnd: it.line1, Exported: it.pub, Test: test})
}

// itemTest: #[test], inside a #[cfg(test)] module, or in a test crate.
func (r *rsResolver) itemTest(m *rsMod, i int) bool {
	if m.scope.crate.test {
		return true
	}
	for p := i; p >= 0; p = m.facts.items[p].parent {
		if m.facts.items[p].test || m.facts.items[p].cfgTest {
			return true
		}
	}
	return m.itemScope[i].test
}

// implsOf keys the methods of a file's traits and impls, and adds the
// implements edges.
func (r *rsResolver) implsOf(m *rsMod) {
	for i, it := range m.facts.items {
		sc := m.itemScope[i]
		switch it.kind {
		case ingest.KindTrait:
			key := m.keys[i]
			m.selfKey[i] = key
			for _, bnd := range it.bounds {
				if t := r.path(sc, bnd, 0); t.kind == rsTItem && t.item == ingest.KindTrait {
					r.b.edge(key, ingest.RelImplements, t.key)
					r.impls[key] = append(r.impls[key], t.key)
				}
			}
		case "impl":
			t := r.path(sc, it.implType, 0)
			if t.kind == rsTItem && isRsType(t.item) {
				m.selfKey[i] = t.key
			}
			if len(it.implTrait) > 0 {
				if tr := r.path(sc, it.implTrait, 0); tr.kind == rsTItem && tr.item == ingest.KindTrait && m.selfKey[i] != "" {
					r.b.edge(m.selfKey[i], ingest.RelImplements, tr.key)
					r.impls[m.selfKey[i]] = append(r.impls[m.selfKey[i]], tr.key)
				}
			}
		}
	}
	for i, it := range m.facts.items {
		if it.kind != ingest.KindMethod {
			continue
		}
		p := it.parent
		owner := m.facts.items[p]
		sc := m.itemScope[i]
		var prefix, recv string
		switch {
		case owner.kind == ingest.KindTrait:
			prefix, recv = m.keys[p], owner.name
		case m.selfKey[p] != "":
			prefix, recv = m.selfKey[p], owner.typeText
		default:
			prefix, recv = symKey(ingest.LangRust, sc.name+"::"+owner.typeText), owner.typeText
		}
		if owner.kind == "impl" && owner.traitText != "" {
			prefix += "::" + owner.traitText
		}
		key := prefix + "::" + it.name
		m.keys[i] = key
		r.itemKind[key] = ingest.KindMethod
		switch {
		case owner.kind == ingest.KindTrait:
			addTo(r.traitFns, prefix, it.name, key)
		case m.selfKey[p] != "" && owner.traitText == "":
			if _, ok := r.inherent[m.selfKey[p]][it.name]; !ok {
				addTo(r.inherent, m.selfKey[p], it.name, key)
			}
		case m.selfKey[p] != "":
			if r.traitImp[m.selfKey[p]] == nil {
				r.traitImp[m.selfKey[p]] = make(map[string][]string)
			}
			if !slices.Contains(r.traitImp[m.selfKey[p]][it.name], key) {
				r.traitImp[m.selfKey[p]][it.name] = append(r.traitImp[m.selfKey[p]][it.name], key)
			}
		}
		r.symbol(m, i, key, sc.name, recv, r.itemTest(m, i))
		if owner.kind == ingest.KindTrait {
			r.b.edge(m.keys[p], ingest.RelContains, key)
		} else if m.selfKey[p] != "" {
			r.b.edge(m.selfKey[p], ingest.RelContains, key)
		}
	}
}

func addTo(m map[string]map[string]string, a, b, v string) {
	if m[a] == nil {
		m[a] = make(map[string]string)
	}
	m[a][b] = v
}

func isRsType(kind string) bool {
	switch kind {
	case ingest.KindStruct, ingest.KindEnum, ingest.KindUnion, ingest.KindTrait, ingest.KindType:
		return true
	}
	return false
}

// lookup resolves a name in a module: its items and child modules, its
// use declarations, then its glob imports.
func (r *rsResolver) lookup(sc *rsScope, name string, depth int) rsTarget {
	if t, ok := sc.items[name]; ok {
		return t
	}
	if c, ok := sc.children[name]; ok {
		return rsTarget{kind: rsTModule, scope: c}
	}
	if depth > 16 {
		return rsTarget{}
	}
	if r.busy[sc] == nil {
		r.busy[sc] = make(map[string]bool)
	}
	if r.busy[sc][name] {
		return rsTarget{}
	}
	r.busy[sc][name] = true
	defer delete(r.busy[sc], name)
	for _, u := range sc.uses {
		if !u.glob && u.alias == name {
			return r.path(sc, u.path, depth+1)
		}
	}
	for _, u := range sc.uses {
		if !u.glob {
			continue
		}
		if t := r.path(sc, u.path, depth+1); t.kind == rsTModule {
			if t2 := r.lookup(t.scope, name, depth+1); t2.kind != rsTUnknown {
				return t2
			}
		}
	}
	return rsTarget{}
}

// path resolves a path used in module sc.
func (r *rsResolver) path(sc *rsScope, segs []string, depth int) rsTarget {
	if len(segs) == 0 || depth > 16 {
		return rsTarget{}
	}
	var t rsTarget
	first := segs[0]
	switch first {
	case "crate":
		t = rsTarget{kind: rsTModule, scope: sc.crate.root}
	case "self":
		t = rsTarget{kind: rsTModule, scope: sc}
	case "super":
		if sc.parent == nil {
			return rsTarget{}
		}
		t = rsTarget{kind: rsTModule, scope: sc.parent}
	case "Self":
		return rsTarget{}
	default:
		t = r.lookup(sc, first, depth)
		if t.kind == rsTUnknown && sc != sc.crate.root {
			t = r.lookup(sc.crate.root, first, depth) // 2015 paths start at the crate root
		}
		if t.kind == rsTUnknown {
			switch c := r.libs[first]; {
			case c != nil && c != sc.crate:
				t = rsTarget{kind: rsTModule, scope: c.root}
			case rsStd[first] || sc.crate.pkg.externs[first] || rsPrelude[first]:
				return rsTarget{kind: rsTExternal, ext: first}
			}
		}
	}
	for _, seg := range segs[1:] {
		switch t.kind {
		case rsTModule:
			if seg == "super" {
				if t.scope.parent == nil {
					return rsTarget{}
				}
				t = rsTarget{kind: rsTModule, scope: t.scope.parent}
				continue
			}
			t = r.lookup(t.scope, seg, depth+1)
		case rsTItem:
			t = r.assoc(t, seg)
		case rsTExternal:
			return t
		default:
			return rsTarget{}
		}
	}
	return t
}

// assoc resolves an associated item of a type or trait: an inherent
// method, the one trait method of that name it implements, a trait's
// method; for an enum, a variant names the enum.
func (r *rsResolver) assoc(t rsTarget, name string) rsTarget {
	item := func(key string) rsTarget { return rsTarget{kind: rsTItem, key: key, item: r.itemKind[key]} }
	if k, ok := r.inherent[t.key][name]; ok {
		return item(k)
	}
	if ks := r.traitImp[t.key][name]; len(ks) == 1 {
		return item(ks[0])
	} else if len(ks) > 1 {
		return rsTarget{}
	}
	if k, ok := r.traitFns[t.key][name]; ok {
		return item(k)
	}
	var found []string
	for _, tr := range r.impls[t.key] {
		if k, ok := r.traitFns[tr][name]; ok && !slices.Contains(found, k) {
			found = append(found, k)
		}
	}
	if len(found) == 1 {
		return item(found[0])
	}
	if t.item == ingest.KindEnum && len(found) == 0 && name != "" && name[0] >= 'A' && name[0] <= 'Z' {
		return t // a variant: the enum
	}
	return rsTarget{}
}

// uses adds the calls and references edges of a file.
func (r *rsResolver) uses(m *rsMod) {
	facts := m.facts
	// The item a use is attributed to: the innermost one with a key that is
	// not a container (module, impl, trait).
	src := func(scope int) int {
		for p := scope; p >= 0; p = facts.items[p].parent {
			switch facts.items[p].kind {
			case ingest.KindModule, "impl", ingest.KindTrait:
				return -1
			}
			if m.keys[p] != "" {
				return p
			}
		}
		return -1
	}
	for _, c := range facts.calls {
		s := src(c.scope)
		if s < 0 {
			continue
		}
		if c.path == nil {
			r.b.unresolvedIn(m.file.Rel)
			continue
		}
		t := r.resolveIn(m, s, c.path, true)
		switch {
		case t.kind == rsTExternal:
			continue
		case t.kind != rsTItem:
			r.b.unresolvedIn(m.file.Rel)
			continue
		}
		rel := ingest.RelCalls
		switch t.item {
		case ingest.KindFunc, ingest.KindMethod:
		case ingest.KindStruct, ingest.KindEnum, ingest.KindUnion:
			rel = ingest.RelReferences // a tuple struct or variant built
		default:
			r.b.unresolvedIn(m.file.Rel)
			continue
		}
		r.b.edge(m.keys[s], rel, t.key)
		if r.testKeys[m.keys[s]] {
			r.b.test(m.keys[s], m.file.Rel, t.key)
		}
	}
	for _, u := range facts.types {
		s := src(u.scope)
		if s < 0 || u.path[0] == "Self" {
			continue
		}
		if len(u.path) == 1 && r.typeParam(m, u.scope, u.path[0]) {
			continue
		}
		if t := r.resolveIn(m, s, u.path, false); t.kind == rsTItem && isRsType(t.item) {
			r.b.edge(m.keys[s], ingest.RelReferences, t.key)
		}
	}
}

func (r *rsResolver) typeParam(m *rsMod, scope int, name string) bool {
	for p := scope; p >= 0; p = m.facts.items[p].parent {
		if m.facts.tlocals[p][name] {
			return true
		}
	}
	return false
}

// resolveIn resolves a path used inside item s of m: self.x and Self::x
// through the enclosing impl or trait, locals (for a call's single name)
// not at all, the fn's own use declarations, then the module's names.
func (r *rsResolver) resolveIn(m *rsMod, s int, p []string, call bool) rsTarget {
	facts := m.facts
	owner := ""
	for q := facts.items[s].parent; q >= 0; q = facts.items[q].parent {
		if k := facts.items[q].kind; k == "impl" || k == ingest.KindTrait {
			owner = m.selfKey[q]
			break
		}
	}
	switch {
	case p[0] == "self" && len(p) == 2:
		if owner == "" {
			return rsTarget{}
		}
		return r.assoc(rsTarget{kind: rsTItem, key: owner, item: r.itemKind[owner]}, p[1])
	case p[0] == "Self":
		if owner == "" || len(p) < 2 {
			return rsTarget{}
		}
		t := rsTarget{kind: rsTItem, key: owner, item: r.itemKind[owner]}
		for _, seg := range p[1:] {
			if t = r.assoc(t, seg); t.kind != rsTItem {
				return rsTarget{}
			}
		}
		return t
	}
	if call && len(p) == 1 && facts.locals[s][p[0]] {
		return rsTarget{} // a closure or fn pointer held in a local
	}
	for _, u := range facts.uses {
		if u.scope == s && !u.glob && u.alias == p[0] {
			t := r.path(m.itemScope[s], u.path, 0)
			for _, seg := range p[1:] {
				switch t.kind {
				case rsTModule:
					t = r.lookup(t.scope, seg, 0)
				case rsTItem:
					t = r.assoc(t, seg)
				}
			}
			return t
		}
	}
	return r.path(m.itemScope[s], p, 0)
}
