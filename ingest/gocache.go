package ingest

// The Go refresh cache (SPEC.md §9.10). A long-lived process that
// extracts one tree again and again (the MCP server refreshing before its
// answers) keeps, between extractions, what re-checking a few packages
// needs: the package listing of the go command, and per unit (a package
// or a test variant, as checkUnit) its type-checked package, a
// fingerprint of its declarations and its fragment of the graph.
//
// The next extraction reuses the listing while the inputs of `go list`
// are unchanged: the environment, the go command, go.work, go.mod and
// go.sum, the set of Go files and the header of every changed file
// (package clause, imports, //go: and +build lines). It then re-checks,
// in dependency order, only:
//
//   - a unit whose files changed, with function bodies, re-extracted;
//   - a unit one of whose imports got a new package object (below),
//     without bodies, to bind its declarations to that object; its
//     fragment is reused except for its implements edges, recomputed from
//     the declarations (they depend on every interface it can see), unless
//     the declarations of an import, or of a package the import's
//     declarations name (transitively), changed: then with bodies.
//
// A re-checked unit whose declarations print the same (apiPrint) and
// whose imports kept their objects keeps its old package object: its
// importers see no change and are not re-checked. Otherwise its new
// object replaces the old one, so that no unit is ever checked against
// two objects of one package.
//
// The result is the graph a fresh extraction builds: packages and
// fragments are merged and finished exactly as ExtractGo does; the files
// no unit compiles (build constraints for another platform, cgo sources)
// are read from syntax again, with the declaration tables of the units
// restored from the cache. Anything the incremental check does not handle
// falls back to the full path, which rebuilds the cache: a module that did
// not load or a package read from syntax for want of its dependencies, a
// compiled file that imports "C", an import cycle, a changed listing input
// (a cgo source has no header: any change to one).

import (
	"crypto/sha256"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"
)

// GoCacheMaxBytes bounds the Go source of a tree whose extraction a
// GoCache keeps: the source, the type-checked packages and the fragments
// stay in memory, about 27 times the source (memctl's 3.2 MB: 88 MB).
const GoCacheMaxBytes = 8 << 20

// GoCache is what a long-lived process keeps between extractions of one
// Go tree (GoOptions.Cache). Extractions through one GoCache run one at a
// time.
type GoCache struct {
	mu     sync.Mutex
	state  *goState
	fulls  int
	deltas int
}

// NewGoCache returns an empty cache: the first extraction through it
// takes the full path.
func NewGoCache() *GoCache { return &GoCache{} }

// Deltas is the number of extractions that re-checked only what changed;
// Fulls the number that listed and checked the whole tree.
func (c *GoCache) Deltas() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deltas
}

// Fulls: see Deltas.
func (c *GoCache) Fulls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fulls
}

// goState is one extraction as the next one may start from it.
type goState struct {
	key       string // root, options and what `go env` and `go list` read
	toolchain string
	files     map[string]*srcFile // every Go file read, by rel path
	// outside are the files a unit of the tree compiles from outside it
	// (cgo's output in the build cache), by name: kept, so that a
	// re-check does not depend on the build cache keeping them.
	outside map[string][]byte
	listing map[string][]*packages.Package // module dir → its listing, dependencies first
	units   map[string]*unitState
	// nodes and edges size the graph of the next extraction.
	nodes, edges int
	// syntaxFiles: how many files were read from syntax (the same while
	// the listing stands).
	syntaxFiles int
	// base: an incremental extraction may start from this one (nothing
	// the incremental check does not handle, see the file comment).
	base bool
}

// unitState is one unit as the last extraction left it.
type unitState struct {
	// pkg is the package object importers are checked against; nil for
	// a test variant checked with bodies (released, as checkAll does).
	pkg      *types.Package
	api      [32]byte // SHA-256 of the apiPrint of its declarations
	mentions []string // package paths its declarations name
	hashes   map[string]string
	frag     *fragment // nil unless extracted
	typeErrs int
	// table is what its files declare, for the files read from syntax
	// (nil unless extracted).
	table *table
}

// goCacheKey names what the listing and the toolchain depend on besides
// the tree's files: the root, the options, the environment, the go
// command found on PATH, the go command's configuration file and any
// go.work above the root (stat only: size and mtime).
func goCacheKey(root string, opts GoOptions, modFiles []*srcFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%+v\x00%t\x00%t\x00%q\x00", root, opts.WalkOptions, opts.SyntaxOnly, opts.Offline, opts.LoadEnv)
	for _, e := range os.Environ() {
		b.WriteString(e)
		b.WriteByte(0)
	}
	stat := func(p string) {
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%s %d %d\x00", p, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		stat(goBin)
	}
	if dir, err := os.UserConfigDir(); err == nil {
		stat(filepath.Join(dir, "go", "env"))
	}
	for d := root; ; d = filepath.Dir(d) {
		stat(filepath.Join(d, "go.work"))
		stat(filepath.Join(d, "go.work.sum"))
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, f := range modFiles {
		fmt.Fprintf(&b, "%s %s\x00", f.Rel, f.Hash)
	}
	return b.String()
}

// known returns the files of the last extraction whose content hashes
// are those hashes says they have now (nil when there is nothing to
// reuse).
func (c *GoCache) known(hashes map[string]string) func(rel string) *srcFile {
	if c == nil || len(hashes) == 0 {
		return nil
	}
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	if st == nil {
		return nil
	}
	return func(rel string) *srcFile {
		if f := st.files[rel]; f != nil && f.Hash.String() == hashes[rel] {
			return f
		}
		return nil
	}
}

// toolchain is goToolchain, run again only when the key changed.
func (c *GoCache) toolchain(key string, t *tree, opts GoOptions) string {
	if c != nil {
		c.mu.Lock()
		st := c.state
		c.mu.Unlock()
		if st != nil && st.key == key {
			return st.toolchain
		}
	}
	return goToolchain(t.Root, opts.Offline, opts.LoadEnv)
}

// startCache sets x.prev to the last extraction when the incremental
// check can start from it, and x.next to the state this one builds.
func (x *extractor) startCache(c *GoCache, key, toolchain string) {
	size := 0
	for _, f := range x.t.Files {
		size += len(f.Content)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.state
	c.state = nil
	if size > GoCacheMaxBytes {
		return // too large to keep: every extraction takes the full path
	}
	x.next = &goState{key: key, toolchain: toolchain, files: make(map[string]*srcFile, len(x.t.Files)),
		units: make(map[string]*unitState), listing: make(map[string][]*packages.Package),
		outside: make(map[string][]byte), base: true}
	for _, f := range x.t.Files {
		x.next.files[f.Rel] = f
	}
	if prev.startsFrom(x.t, key) {
		x.prev = prev
		x.next.listing, x.next.outside = prev.listing, prev.outside
		x.g = NewGraphSized(prev.nodes, prev.edges)
	}
}

// startsFrom reports whether an extraction of t with key may reuse the
// listing and the units of st: same key, same Go files, and every file
// whose content changed has the same header.
func (st *goState) startsFrom(t *tree, key string) bool {
	if st == nil || !st.base || st.key != key || len(st.files) != len(t.Files) {
		return false
	}
	for _, m := range t.Modules {
		if len(st.listing[m.Dir]) == 0 {
			return false
		}
	}
	for _, f := range t.Files {
		old := st.files[f.Rel]
		if old == nil {
			return false
		}
		if old.Hash == f.Hash {
			continue
		}
		h0, ok0 := goHeader(old.Content)
		h1, ok1 := goHeader(f.Content)
		if !ok0 || !ok1 || h0 != h1 {
			return false
		}
	}
	return true
}

// goHeader is what `go list` reads of a Go file besides its name: the
// package clause, the //go: and +build lines before it and the import
// paths. A file that imports "C" (cgo) or whose header does not parse
// has none (false).
func goHeader(src []byte) (string, bool) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil || f.Name == nil {
		return "", false
	}
	var b strings.Builder
	b.WriteString(f.Name.Name)
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") || constraint.IsPlusBuild(c.Text) {
				b.WriteString("\n" + c.Text)
			}
		}
	}
	for _, imp := range f.Imports {
		if imp.Path.Value == `"C"` {
			return "", false
		}
		b.WriteString("\n" + imp.Path.Value)
	}
	return b.String(), true
}

// remember records what the check of u found (the caller holds no lock;
// mu guards x.next.units). Its package and fragment are set when the
// extraction is done (endCache, loadTyped).
func (x *extractor) remember(u *checkUnit, mu *sync.Mutex) {
	print, mentions := apiPrint(u.pkg)
	api := sha256.Sum256([]byte(print))
	st := &unitState{api: api, mentions: mentions, typeErrs: u.typeErrs, hashes: x.unitHashes(u)}
	outside := map[string][]byte{}
	for name, h := range st.hashes {
		if h == "" && u.claims != nil {
			b, err := x.readSource(name)
			if err != nil {
				b = nil // checked without it, as it will be again
			}
			outside[name] = b
		}
	}
	mu.Lock()
	x.next.units[u.id] = st
	maps.Copy(x.next.outside, outside)
	mu.Unlock()
}

// rememberTable records the declarations table u's files made. It is
// copied before files read from syntax add to it (keepTables).
func (x *extractor) rememberTable(u *checkUnit, t *table, mu *sync.Mutex) {
	mu.Lock()
	x.next.units[u.id].table = t
	mu.Unlock()
}

// keepTables copies the units' tables before the files read from syntax
// (n of them) add to the tables.
func (x *extractor) keepTables(n int) {
	x.next.syntaxFiles = n
	if n == 0 {
		return // nothing adds to them, nothing reads them
	}
	for _, st := range x.next.units {
		if st.table != nil {
			st.table = st.table.clone()
		}
	}
}

// restoreTable puts back the declarations table of a unit not extracted
// again, when files are read from syntax (the tables are theirs).
func (x *extractor) restoreTable(u *checkUnit, st *unitState) {
	if st.table == nil || x.prev.syntaxFiles == 0 {
		return
	}
	x.tabMu.Lock()
	x.tables[u.path] = st.table.clone()
	x.tabMu.Unlock()
}

// clone copies t so that adding to the copy leaves t as it is (interface
// declarations, never changed once made, are shared).
func (t *table) clone() *table {
	c := &table{importPath: t.importPath, name: t.name,
		names: t.names.clone(), methods: t.methods.clone(),
		ifaces: maps.Clone(t.ifaces), imports: maps.Clone(t.imports),
		typeSpecs: maps.Clone(t.typeSpecs), sigs: maps.Clone(t.sigs), vars: maps.Clone(t.vars)}
	return c
}

// unitHashes maps the compiled files of u that are tree files to their
// content hashes.
func (x *extractor) unitHashes(u *checkUnit) map[string]string {
	out := make(map[string]string, len(u.files))
	for _, name := range u.files {
		if _, i := x.treeFile(name); i >= 0 {
			out[name] = x.t.Files[i].Hash.String()
		} else {
			out[name] = ""
		}
	}
	return out
}

// apiPrint prints what the units importing p can see of it: its name,
// its imports (implementsTyped visits their interfaces) and every
// package-level object with its type (constants with their value, types
// with their underlying type and methods), unexported ones included.
// mentions are the paths of the packages it names.
func apiPrint(p *types.Package) (string, []string) {
	if p == nil {
		return "", nil
	}
	seen := map[string]bool{}
	qual := func(q *types.Package) string {
		seen[q.Path()] = true
		return q.Path()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "package %s %s\n", p.Name(), p.Path())
	for _, q := range p.Imports() {
		fmt.Fprintf(&b, "import %s\n", q.Path())
	}
	scope := p.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		b.WriteString(types.ObjectString(obj, qual))
		switch o := obj.(type) {
		case *types.Const:
			b.WriteString(" = " + o.Val().ExactString())
		case *types.TypeName:
			if o.IsAlias() {
				// The alias and what it stands for, unaliased.
				b.WriteString(" = " + types.TypeString(types.Unalias(o.Type()), qual))
			}
			if named, ok := types.Unalias(o.Type()).(*types.Named); ok && !o.IsAlias() {
				for i := 0; i < named.NumMethods(); i++ {
					b.WriteString("\n\t" + types.ObjectString(named.Method(i), qual))
				}
			}
		}
		b.WriteByte('\n')
	}
	delete(seen, p.Path())
	mentions := make([]string, 0, len(seen))
	for q := range seen {
		mentions = append(mentions, q)
	}
	slices.Sort(mentions)
	return b.String(), mentions
}

// checkAgain checks the units of an unchanged listing incrementally (see
// the file comment) and reports false, having checked nothing, when the
// last extraction's units do not match.
func (x *extractor) checkAgain(units map[string]*checkUnit) bool {
	prev := x.prev.units
	for id := range units {
		if prev[id] == nil {
			return false
		}
	}
	order, ok := topoOrder(units)
	if !ok {
		return false
	}
	for _, u := range order {
		if st := prev[u.id]; st.pkg != nil {
			x.checked[u.id] = st.pkg
		}
	}
	var mu sync.Mutex
	if x.published == nil {
		// Across modules: a unit imports units an earlier module checked.
		x.published, x.affected = make(map[string]bool), make(map[string]bool)
	}
	published := x.published // unit ID → its package object is new
	affected := x.affected   // package path → declarations it can expose changed
	var ensure func(u *checkUnit)
	ensure = func(u *checkUnit) {
		for _, d := range u.deps {
			if x.checked[d.id] == nil {
				ensure(d)
			}
		}
		st := prev[u.id]
		u.declOnly = true
		x.check(u, &mu)
		x.next.units[u.id] = st.with(u.pkg)
		published[u.id] = true
	}
	for _, u := range order {
		st := prev[u.id]
		dirty := !maps.Equal(st.hashes, x.unitHashes(u))
		depNew, depAffected := false, false
		for _, id := range u.imports {
			path, _, _ := strings.Cut(id, " ")
			depNew = depNew || published[id]
			depAffected = depAffected || affected[path]
		}
		if !dirty && !depNew {
			x.next.units[u.id] = st.with(st.pkg)
			u.frag, u.typeErrs = st.frag, st.typeErrs
			x.restoreTable(u, st)
			continue
		}
		for _, d := range u.deps {
			if x.checked[d.id] == nil {
				ensure(d)
			}
		}
		u.declOnly = u.extract && !dirty && !depAffected
		x.check(u, &mu)
		ns := x.next.units[u.id]
		if ns.api != st.api {
			affected[u.path] = true
		}
		for _, q := range ns.mentions {
			if affected[q] {
				affected[u.path] = true
			}
		}
		if ns.api != st.api || depNew || st.pkg == nil {
			published[u.id] = true
		} else {
			x.checked[u.id] = st.pkg // the same declarations: importers keep it
		}
		ns.pkg = x.checked[u.id]
		if u.declOnly && st.frag != nil {
			// The bodies' part of the fragment stands; the implements
			// edges follow the interfaces visible now.
			u.frag, u.typeErrs = st.frag.withoutImplements(), st.typeErrs
			x.implementsTyped(u, u.frag)
			ns.typeErrs, ns.table = st.typeErrs, st.table
			x.restoreTable(u, st)
		}
	}
	return true
}

// with is a copy of st holding pkg.
func (st *unitState) with(pkg *types.Package) *unitState {
	c := *st
	c.pkg = pkg
	return &c
}

// withoutImplements is a copy of fr without its implements edges.
func (fr *fragment) withoutImplements() *fragment {
	c := *fr
	c.edges = make([]Edge, 0, len(fr.edges))
	for _, e := range fr.edges {
		if e.Rel != RelImplements {
			c.edges = append(c.edges, e)
		}
	}
	return &c
}

// topoOrder lists units, each after the units it imports (false: a
// cycle).
func topoOrder(units map[string]*checkUnit) ([]*checkUnit, bool) {
	const visiting, done = 1, 2
	mark := make(map[*checkUnit]int, len(units))
	out := make([]*checkUnit, 0, len(units))
	var visit func(u *checkUnit) bool
	visit = func(u *checkUnit) bool {
		switch mark[u] {
		case visiting:
			return false
		case done:
			return true
		}
		mark[u] = visiting
		for _, d := range u.deps {
			if !visit(d) {
				return false
			}
		}
		mark[u] = done
		out = append(out, u)
		return true
	}
	for _, id := range sortedKeys(units) {
		if !visit(units[id]) {
			return nil, false
		}
	}
	return out, true
}

// settle completes the units' states once the units of the module are
// checked: the package objects importers see (none for a released test
// variant).
func (x *extractor) settle(units map[string]*checkUnit) {
	st := x.next
	for id, u := range units {
		us := st.units[id]
		if us == nil || u.claims != nil && u.usesC { // import "C" left in a compiled file
			st.base = false
			continue
		}
		if u.releasable() {
			us.pkg = nil
		} else if us.pkg == nil {
			us.pkg = u.pkg
		}
	}
}

// endCache keeps the state this extraction built.
func (x *extractor) endCache(c *GoCache, loadErrs int) {
	st := x.next
	st.nodes, st.edges = x.g.NumNodes(), x.g.NumEdges()
	st.base = st.base && loadErrs == 0 && len(x.fallbacks) == 0 && len(x.moduleErrs) == 0
	if !st.base {
		// Nothing an incremental extraction can start from: keep the
		// toolchain only.
		st = &goState{key: st.key, toolchain: st.toolchain}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = st
	if x.prev != nil {
		c.deltas++
	} else {
		c.fulls++
	}
}
