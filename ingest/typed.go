package ingest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/tools/go/packages"
)

// loadEnv is the environment of the go command run by go/packages. It is
// the user's: modules missing from the cache are downloaded when GOPROXY
// allows it (a fresh machine or CI then type-checks instead of falling
// back to syntax). offline forbids any download, of modules (GOPROXY=off)
// and of toolchains (GOTOOLCHAIN=local). GOFLAGS is left alone: -mod=mod
// would let the go command rewrite go.mod and go.sum, which an ingest
// only reads.
func loadEnv(offline bool, extra []string) []string {
	env := os.Environ()
	if offline {
		env = append(env, "GOPROXY=off", "GOTOOLCHAIN=local")
	}
	return append(env, extra...)
}

// listMode is what ingest asks of go/packages: the package graph and file
// lists only. Type-checking is done here (checkAll), not by go/packages,
// because ingest needs less than go/packages computes: only the packages
// it extracts are checked with function bodies (everything they import,
// and the plain package under a test variant, is checked without), only
// types.Info.Uses is recorded, and the copies of packages that the go
// command recompiles for another package's external tests ("q [p.test]")
// are not made: an external test imports the plain packages. That trade
// is deliberate: it cuts the units of the standard library from 2247 to
// 725, and costs the few calls an external test makes on values that
// cross between its package's test build and such a copy (2 of 217,527
// calls edges in std), which go/types then reports as type errors.
const listMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
	packages.NeedImports | packages.NeedDeps

// checkUnit is one package to type-check, as go/packages lists it (test
// variants are units of their own, as the go command compiles them).
type checkUnit struct {
	id      string // go/packages ID, e.g. "net/http [net/http.test]"
	path    string // package path; an external test package ends in _test
	name    string
	files   []string          // compiled Go files, absolute
	imports map[string]string // import path as written → unit ID
	extract bool              // in the tree, checked with bodies and extracted
	inTree  bool              // a package of the tree (releaseModule)
	// tokFiles are the files of typedFset the unit's check added (its
	// parsed files'), dropped with the unit when its module is released.
	tokFiles []*token.File
	// claims are the tree files (rel paths by compiled file name) this
	// unit extracts: its files no unit before it (in ID order) claimed.
	claims  map[string]string
	deps    []*checkUnit
	waiting int          // deps not checked yet
	users   []*checkUnit // units that import this one
	// unfinished counts the users not yet checked and extracted: a unit
	// checked with function bodies is released when it reaches 0.
	unfinished int

	pkg      *types.Package
	typeErrs int
	// declOnly: checked without function bodies and not extracted
	// although extract is set (an incremental check that only needs the
	// unit's package for the units importing it, gocache.go).
	declOnly bool
	usesC    bool
	// frag is what the unit adds to the graph, extracted as soon as it
	// is checked (its syntax and types.Info are dropped then).
	frag *fragment
}

// loadTyped lists module m with go/packages, type-checks it and extracts
// every package whose files are in the tree and not claimed yet. An error
// means the module did not load; its files are left to extractSyntax.
func (x *extractor) loadTyped(m module) error {
	all, err := x.listModule(m)
	if err != nil {
		return err
	}
	var listErrs []string
	for _, p := range all {
		for _, e := range p.Errors {
			if e.Kind == packages.ListError {
				listErrs = append(listErrs, e.Msg)
			}
		}
	}

	// Which units are extracted: an in-tree package's own test variant
	// (its files plus in-package tests) rather than the package itself,
	// and external test packages. Generated test mains are left out.
	hasTestVariant := make(map[string]bool)
	for _, p := range all {
		if p.ID == p.PkgPath+" ["+p.PkgPath+".test]" {
			hasTestVariant[p.PkgPath] = true
		}
	}
	// A package whose own listing or any dependency's failed cannot be
	// type-checked completely: it is extracted from syntax instead, and
	// the first failure it depends on is why.
	broken := make(map[string]*fallbackCause)
	for _, p := range all { // Visit lists dependencies first
		if msg := listError(p); msg != "" {
			broken[p.ID] = &fallbackCause{pkg: p.PkgPath, msg: msg, dependency: !x.inTree(p)}
			continue
		}
		for _, ip := range sortedImports(p) {
			if c := broken[ip.ID]; c != nil {
				broken[p.ID] = c
				break
			}
		}
	}
	// Foreign test variants are replaced by their plain package, when the
	// listing has one (a dependency only tests reach exists only as one).
	listed := make(map[string]bool, len(all))
	for _, p := range all {
		listed[p.ID] = true
	}
	replaced := func(p *packages.Package) bool { return isForeignVariant(p) && listed[p.PkgPath] }
	units := make(map[string]*checkUnit)
	for _, p := range all {
		if strings.HasSuffix(p.ID, ".test") || p.PkgPath == "unsafe" || x.seenUnits[p.ID] {
			continue
		}
		inTree := x.inTree(p)
		if c := broken[p.ID]; inTree && c != nil {
			x.noteFallback(p.PkgPath, m, c)
			continue // left to syntax-only extraction
		}
		extract := false
		if inTree {
			switch {
			case p.ID == p.PkgPath+" ["+p.PkgPath+".test]":
				extract = true
			case p.ID == p.PkgPath:
				// The plain package stands in for a test variant that
				// cannot be checked (a test-only dependency is missing):
				// its _test.go files are then left to syntax.
				extract = !hasTestVariant[p.PkgPath] || broken[p.PkgPath+" ["+p.PkgPath+".test]"] != nil
			case strings.HasSuffix(p.PkgPath, "_test") && strings.HasSuffix(p.ID, ".test]"):
				extract = true
			}
		}
		u := &checkUnit{id: p.ID, path: p.PkgPath, name: p.Name, files: p.CompiledGoFiles, extract: extract,
			inTree: inTree, imports: make(map[string]string, len(p.Imports))}
		for imp, ip := range p.Imports {
			id := ip.ID
			if replaced(ip) {
				id = ip.PkgPath
			}
			u.imports[imp] = id
		}
		if replaced(p) {
			continue
		}
		units[p.ID] = u
	}
	for _, u := range units {
		for _, dep := range u.imports {
			if d := units[dep]; d != nil && d != u {
				u.deps = append(u.deps, d)
			}
		}
	}
	// Which files each extracted unit extracts is decided up front, in ID
	// order (the first unit to compile a tree file claims it), so that
	// units can be extracted as they are checked, in any order.
	var extracting []*checkUnit
	for _, id := range sortedKeys(units) {
		u := units[id]
		if !u.extract {
			continue
		}
		for _, name := range u.files {
			rel, i := x.treeFile(name)
			if i < 0 || x.claimed[i] {
				continue
			}
			x.claimed[i] = true
			if u.claims == nil {
				u.claims = make(map[string]string)
			}
			u.claims[name] = rel
		}
		if len(u.claims) > 0 {
			extracting = append(extracting, u)
		}
	}
	x.extractTotal += len(extracting)
	t0 := time.Now()
	if x.prev == nil || !x.checkAgain(units) {
		x.checkAll(units)
	}
	debugf("%s: %d units checked and extracted in %v", m.Path, len(units), time.Since(t0))

	if x.next != nil {
		x.settle(units)
	}
	var extracted int
	for _, u := range extracting {
		if u.frag == nil {
			if x.next != nil {
				x.next.base = false
			}
			continue // not checked (an import cycle)
		}
		x.addPackage(u.path, u.name, path.Dir(u.frag.files[0]), ModeTyped)
		if u.typeErrs > 0 {
			x.typeErrors[u.path] = true
		}
		if x.stream != nil {
			x.g.setScope(u.path)
		}
		x.merge(u.frag)
		if x.stream != nil {
			x.g.setScope("")
		}
		if x.next != nil {
			x.next.units[u.id].frag = u.frag
		}
		u.frag = nil
		extracted++
	}
	if x.next == nil {
		x.releaseModule(m, units)
	}
	if x.stream != nil {
		// Every merge that may ask about the symbols of this module's
		// packages is done but the syntax-only merges of their files
		// for other platforms and their tests waiting for a callee: to
		// the park file until then (sentpark.go).
		for _, u := range extracting {
			if x.t.moduleOf(u.treeDir(x)).Dir == m.Dir {
				x.g.parkScope(u.path)
			}
		}
	}
	if extracted == 0 && len(listErrs) > 0 {
		return errors.New(listErrs[0])
	}
	return nil
}

// treeDir is the directory (rel) of the unit's first file in the tree.
func (u *checkUnit) treeDir(x *extractor) string {
	for _, name := range u.files {
		if rel, i := x.treeFile(name); i >= 0 {
			return path.Dir(rel)
		}
	}
	return "."
}

// releaseModule forgets the packages of the tree that module m's check
// kept and no later check may import (neededUntil): a package checked with
// function bodies holds every local object of its functions, and every
// file parsed holds its line table (about 20 MB for a copy of the standard
// library). A later check that lists one all the same checks it again (it
// is no longer seen), so a wrong guess costs time, not answers. Packages
// outside the tree stay: later modules share them.
func (x *extractor) releaseModule(m module, units map[string]*checkUnit) {
	if x.neededUntil == nil {
		x.neededUntil = neededUntil(x.t, loadEnv(x.opts.Offline, x.opts.LoadEnv))
	}
	if x.moduleAt == nil {
		x.moduleAt = make(map[string]int, len(x.t.Modules))
		for i, m := range x.t.Modules {
			x.moduleAt[m.Dir] = i
		}
	}
	at, ok := x.moduleAt[m.Dir]
	if !ok {
		return
	}
	for _, u := range units {
		if !u.inTree || x.neededUntil[x.t.moduleOf(u.treeDir(x)).Dir] > at {
			continue
		}
		if u.pkg != nil {
			x.release(u)
		}
		delete(x.seenUnits, u.id)
		for _, f := range u.tokFiles {
			x.typedFset.RemoveFile(f)
		}
		u.tokFiles = nil
	}
}

// listModule lists the packages of module m and their dependencies,
// dependencies first, with go/packages (the go command).
func (x *extractor) listModule(m module) ([]*packages.Package, error) {
	if x.prev != nil {
		if all := x.prev.listing[m.Dir]; len(all) > 0 {
			return all, nil // still valid (gocache.go)
		}
		return nil, errors.New("no packages")
	}
	if x.listings == nil {
		root, env := x.t.Root, loadEnv(x.opts.Offline, x.opts.LoadEnv)
		x.listings = startListings(x.t.Modules, func(m module) ([]*packages.Package, error) {
			cfg := &packages.Config{Mode: listMode, Dir: filepath.Join(root, filepath.FromSlash(m.Dir)), Env: env, Tests: true}
			roots, err := packages.Load(cfg, "./...")
			if err != nil {
				return nil, err
			}
			var all []*packages.Package
			packages.Visit(roots, nil, func(p *packages.Package) { all = append(all, p) })
			return all, nil
		})
	}
	l := x.listings.take(m.Dir)
	if l.err != nil {
		return nil, l.err
	}
	debugf("%s: listed in %v", m.Path, l.took)
	if x.next != nil {
		x.next.listing[m.Dir] = l.all
	}
	return l.all, nil
}

// listing is the go command's listing of one module, made in the
// background.
type listing struct {
	done chan struct{} // closed when all and err are set
	all  []*packages.Package
	err  error
	took time.Duration
}

// maxListings is how many listings are made ahead of the type-checking
// that takes them: listed, or being listed, and not taken yet.
const maxListings = 2

// listings are the modules' listings made in the background, in the
// order of modules: the go command lists the next module while one is
// type-checked, instead of keeping a core idle between them (std then
// cmd: 0.6–0.9 s). A listing holds one of maxListings slots from its
// start until take hands it over, so the listings held wait for the
// next two modules, not the tree's: listing runs ahead of type-checking,
// and listings kept past their module were 330 MB of std×80's live heap
// at minute 12.
type listings struct {
	byDir map[string]*listing // deleted as taken
	slots chan struct{}
}

// startListings lists every module of the tree with list, at most
// maxListings ahead of take.
func startListings(modules []module, list func(module) ([]*packages.Package, error)) *listings {
	ls := &listings{byDir: make(map[string]*listing, len(modules)), slots: make(chan struct{}, maxListings)}
	each := make([]*listing, len(modules)) // the goroutines' own: take deletes from byDir
	for i, m := range modules {
		each[i] = &listing{done: make(chan struct{})}
		ls.byDir[m.Dir] = each[i]
	}
	go func() {
		for i, m := range modules {
			ls.slots <- struct{}{} // given back by take
			l := each[i]
			each[i] = nil // not held past take: this goroutine runs until the last module starts
			go func(l *listing) {
				defer close(l.done)
				t0 := time.Now()
				l.all, l.err = list(m)
				l.took = time.Since(t0)
				if l.err == nil && len(l.all) == 0 {
					l.err = errors.New("no packages")
				}
			}(l)
		}
	}()
	return ls
}

// take waits for module dir's listing, forgets it and frees its slot.
// Every module is taken once, in the order of modules.
func (ls *listings) take(dir string) *listing {
	l := ls.byDir[dir]
	delete(ls.byDir, dir)
	<-l.done
	<-ls.slots
	return l
}

// isForeignVariant reports whether p is a package recompiled for another
// package's tests ("q [p.test]").
func isForeignVariant(p *packages.Package) bool {
	return strings.Contains(p.ID, " [") && p.ID != p.PkgPath+" ["+p.PkgPath+".test]" &&
		!(strings.HasSuffix(p.PkgPath, "_test") && p.ID == p.PkgPath+" ["+strings.TrimSuffix(p.PkgPath, "_test")+".test]")
}

// inTree reports whether a listed package's files are in the tree.
func (x *extractor) inTree(p *packages.Package) bool {
	for _, f := range p.GoFiles {
		rel, err := filepath.Rel(x.t.Root, f)
		if err == nil && !strings.HasPrefix(rel, "..") {
			if x.t.file(filepath.ToSlash(rel)) != nil {
				return true
			}
		}
	}
	return false
}

// listError is the first listing error of p ("" if none).
func listError(p *packages.Package) string {
	for _, e := range p.Errors {
		if e.Kind == packages.ListError {
			return firstLine(e.Msg)
		}
	}
	return ""
}

// sortedImports are the packages p imports, by import path, so that the
// cause reported for a broken package does not depend on map order.
func sortedImports(p *packages.Package) []*packages.Package {
	out := make([]*packages.Package, 0, len(p.Imports))
	for _, imp := range sortedKeys(p.Imports) {
		out = append(out, p.Imports[imp])
	}
	return out
}

// fallbackCause is why a package of the tree could not be type-checked:
// the listing of pkg (itself or a package it depends on) failed with msg.
// dependency: pkg is outside the tree, so downloading the module's
// requirements is what fixes it.
type fallbackCause struct {
	pkg        string
	msg        string
	dependency bool
}

// noteFallback records why the package importPath of module m is left
// to syntax-only extraction (the first cause found wins).
func (x *extractor) noteFallback(importPath string, m module, c *fallbackCause) {
	if _, ok := x.fallbacks[importPath]; ok {
		return
	}
	x.fallbacks[importPath] = fallbackNote{module: m, cause: c}
}

type fallbackNote struct {
	module module
	cause  *fallbackCause
}

// checkAll parses and type-checks units on all CPUs, each after the units
// it imports. A unit whose imports form a cycle (never in a valid tree)
// is checked with the imports that are ready; the others fail to import.
func (x *extractor) checkAll(units map[string]*checkUnit) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var ready []*checkUnit
	pending := 0
	for _, u := range units {
		u.waiting = len(u.deps)
		for _, d := range u.deps {
			d.users = append(d.users, u)
			d.unfinished++
		}
		for _, name := range u.files {
			x.parseRefs[name]++
		}
	}
	for _, path := range sortedKeys(units) {
		u := units[path]
		pending++
		if u.waiting == 0 {
			ready = append(ready, u)
		}
	}
	running := 0
	worker := func() {
		mu.Lock()
		defer mu.Unlock()
		for {
			for len(ready) == 0 && pending > 0 {
				if running == 0 {
					// A cycle: release the first unit still waiting.
					for _, path := range sortedKeys(units) {
						if u := units[path]; u.waiting > 0 {
							u.waiting = 0
							ready = append(ready, u)
							break
						}
					}
					continue
				}
				cond.Wait()
			}
			if pending == 0 {
				cond.Broadcast()
				return
			}
			u := ready[0]
			ready = ready[1:]
			running++
			mu.Unlock()
			x.check(u, &mu)
			mu.Lock()
			running--
			pending--
			// A test variant checked with bodies holds every local object
			// of its functions: it goes once the units importing it are
			// done. (A plain package stays: another module may import it.)
			for _, d := range u.deps {
				if d.unfinished--; d.unfinished == 0 && d.releasable() {
					x.release(d)
				}
			}
			if u.unfinished == 0 && u.releasable() {
				x.release(u)
			}
			for _, v := range u.users {
				if v.waiting > 0 {
					v.waiting--
					if v.waiting == 0 {
						ready = append(ready, v)
					}
				}
			}
			cond.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() { defer wg.Done(); worker() }()
	}
	wg.Wait()
}

// check parses and type-checks one unit and, when it is extracted,
// extracts it at once: only its fragment is kept. mu guards x.checked.
func (x *extractor) check(u *checkUnit, mu *sync.Mutex) {
	usesC := false
	var asts []*ast.File
	var files []typedFile
	for _, name := range u.files {
		f, src := x.parsed(name)
		if f == nil {
			continue
		}
		for _, imp := range f.Imports {
			usesC = usesC || imp.Path.Value == `"C"`
		}
		asts = append(asts, f)
		if u.inTree {
			u.tokFiles = append(u.tokFiles, x.typedFset.File(f.FileStart))
		}
		if rel, ok := u.claims[name]; ok {
			files = append(files, typedFile{rel: rel, ast: f, src: src})
		}
	}
	lookup := func(id string) *types.Package {
		mu.Lock()
		defer mu.Unlock()
		return x.checked[id]
	}
	conf := types.Config{
		Importer: importerFunc(func(p string) (*types.Package, error) {
			if p == "unsafe" {
				return types.Unsafe, nil
			}
			if id := u.imports[p]; id != "" {
				p = id
			}
			pkg := lookup(p)
			if pkg == nil {
				return nil, fmt.Errorf("package %s not checked", p)
			}
			return pkg, nil
		}),
		IgnoreFuncBodies: !u.extract || u.declOnly,
		FakeImportC:      usesC,
		Error: func(err error) {
			if u.typeErrs == 0 && os.Getenv("MEMCTL_INGEST_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "typeerr %s: %v\n", u.path, err)
			}
			u.typeErrs++
		},
		Sizes: types.SizesFor("gc", runtime.GOARCH),
	}
	var info *types.Info
	if u.extract && !u.declOnly {
		info = &types.Info{Uses: make(map[*ast.Ident]types.Object, usesHint(x.typedFset, asts))}
	}
	pkg, _ := conf.Check(u.path, x.typedFset, asts, info)
	x.unparsed(u.files)
	u.pkg, u.usesC = pkg, usesC
	mu.Lock()
	x.checked[u.id] = pkg
	x.seenUnits[u.id] = true
	mu.Unlock()
	if x.next != nil {
		x.remember(u, mu)
	}
	if len(files) == 0 || pkg == nil || u.declOnly {
		return
	}
	slices.SortFunc(files, func(a, b typedFile) int { return strings.Compare(a.rel, b.rel) })
	t := x.lockedTable(u.path, u.name)
	for _, f := range files {
		named, _ := fileImports(f.ast, func(p string) string {
			if d := lookup(u.imports[p]); d != nil {
				return d.Name()
			}
			return guessPackageName(p)
		})
		x.tabMu.Lock()
		t.addDecls(f.ast, named, false)
		x.tabMu.Unlock()
	}
	x.tabMu.Lock()
	t.seal()
	x.tabMu.Unlock()
	if x.next != nil {
		x.rememberTable(u, t, mu)
	}
	fr := newFragment()
	res := &typedResolver{imports: u.imports, info: info}
	for _, f := range files {
		fr.extractFile(u.path, &unitFile{src: x.t.file(f.rel), ast: f.ast, fset: x.typedFset, res: res, mode: ModeTyped}, f.src)
	}
	x.implementsTyped(u, fr)
	u.frag = fr
	if x.opts.Progress != nil {
		x.opts.Progress(Progress{Phase: "extracting", Done: int(x.extractDone.Add(1)), Total: x.extractTotal})
	}
}

// bytesPerUse is about the fewest bytes of source per identifier use
// (types.Info.Uses) of the units of std and cmd: 15–40, 25 for net/http,
// 17 for cmd/compile/internal/ssa.
const bytesPerUse = 20

// usesHint is the room to make in types.Info.Uses for checking files:
// grown from empty, the map of a large unit (600K uses) is copied as it
// grows, about twice its final size allocated.
func usesHint(fset *token.FileSet, files []*ast.File) int {
	n := 0
	for _, f := range files {
		if tf := fset.File(f.FileStart); tf != nil {
			n += tf.Size()
		}
	}
	return n / bytesPerUse
}

// releasable: the unit is a test variant checked with function bodies,
// which no other module imports.
func (u *checkUnit) releasable() bool { return u.extract && u.id != u.path }

// release forgets a unit checked with function bodies once no unit needs
// to import it (the caller holds the lock of x.checked).
func (x *extractor) release(u *checkUnit) {
	delete(x.checked, u.id)
	x.ifaceMu.Lock()
	delete(x.ifacesOf, u.pkg)
	x.ifaceMu.Unlock()
	u.pkg = nil
}

// lockedTable is x.table under the tables' lock.
func (x *extractor) lockedTable(importPath, name string) *table {
	x.tabMu.Lock()
	defer x.tabMu.Unlock()
	return x.table(importPath, name)
}

// parsed returns the syntax tree of a compiled Go file, parsing it on
// first use, and the source it parsed (kept with the tree for the file
// node's fields, so that the file is not read again). Trees are shared by
// every unit that compiles the file (test variants): go/types only reads
// them.
func (x *extractor) parsed(name string) (*ast.File, []byte) {
	x.parseMu.Lock()
	e := x.parseCache[name]
	if e == nil {
		e = &parseEntry{}
		x.parseCache[name] = e
	}
	x.parseMu.Unlock()
	e.once.Do(func() {
		src, err := x.readSource(name)
		if err != nil {
			return
		}
		e.f, _ = parser.ParseFile(x.typedFset, name, src, parser.SkipObjectResolution)
		e.src = src
	})
	return e.f, e.src
}

// unparsed drops the cached syntax trees of files no unit left to check
// compiles.
func (x *extractor) unparsed(names []string) {
	x.parseMu.Lock()
	defer x.parseMu.Unlock()
	for _, name := range names {
		if x.parseRefs[name]--; x.parseRefs[name] <= 0 {
			delete(x.parseRefs, name)
			delete(x.parseCache, name)
		}
	}
}

type parseEntry struct {
	once sync.Once
	f    *ast.File
	src  []byte
}

// readSource reads a file of the tree as the walk hashed it (source),
// others from disk (or from the Go cache's copy, gocache.go).
func (x *extractor) readSource(name string) ([]byte, error) {
	if rel, err := filepath.Rel(x.t.Root, name); err == nil {
		if f := x.t.file(filepath.ToSlash(rel)); f != nil {
			return x.source(f)
		}
	}
	if x.prev != nil {
		if b, ok := x.prev.outside[name]; ok {
			if b == nil {
				return nil, os.ErrNotExist
			}
			return b, nil
		}
	}
	return os.ReadFile(name)
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

type typedFile struct {
	rel string
	ast *ast.File
	src []byte // the source it was parsed from
}

// treeFile maps a compiled Go file to the tree file it is: its rel path
// and its index in the tree's files, -1 for a file outside the tree
// (cgo-processed files, generated outside it).
func (x *extractor) treeFile(name string) (string, int) {
	rel, err := filepath.Rel(x.t.Root, name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", -1
	}
	rel = filepath.ToSlash(rel)
	return rel, x.t.fileIndex(rel)
}

// typedResolver resolves names with go/types.
type typedResolver struct {
	imports map[string]string // the unit's: import path as written → unit ID
	info    *types.Info
	// targets caches objectTarget by func and type name: a unit uses the
	// same few many times, and each target's key is a new string.
	targets map[types.Object]cachedTarget
}

type cachedTarget struct {
	t  target
	ok bool
}

// target is objectTarget(obj), computed once per func or type name (the
// only objects that can be targets; most uses are of variables).
func (r *typedResolver) target(obj types.Object) (target, bool) {
	switch obj.(type) {
	case *types.Func, *types.TypeName:
	default:
		return target{}, false
	}
	if c, ok := r.targets[obj]; ok {
		return c.t, c.ok
	}
	if r.targets == nil {
		r.targets = make(map[types.Object]cachedTarget)
	}
	t, ok := objectTarget(obj)
	r.targets[obj] = cachedTarget{t, ok}
	return t, ok
}

func (r *typedResolver) importPath(spec *ast.ImportSpec) string {
	p, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return ""
	}
	if id := r.imports[p]; id != "" {
		path, _, _ := strings.Cut(id, " ")
		return path
	}
	return p
}

func (r *typedResolver) ident(id *ast.Ident) (target, bool) {
	return r.target(r.info.Uses[id])
}

// unresolved is always false: go/types resolves every static call, and
// the others call function values.
func (r *typedResolver) unresolved(*ast.CallExpr) bool { return false }

func (r *typedResolver) selector(sel *ast.SelectorExpr) (target, bool, bool) {
	t, ok := r.target(r.info.Uses[sel.Sel])
	return t, ok, false
}

// objectTarget is the symbol an object denotes, if it is a package-level
// func, method (concrete or abstract, of a named type) or type.
func objectTarget(obj types.Object) (target, bool) {
	if obj == nil || obj.Pkg() == nil {
		return target{}, false
	}
	switch o := obj.(type) {
	case *types.Func:
		o = o.Origin()
		sig, ok := o.Type().(*types.Signature)
		if !ok {
			return target{}, false
		}
		if recv := sig.Recv(); recv != nil {
			named := namedOf(recv.Type())
			if named == nil || named.Obj().Pkg() == nil {
				return target{}, false
			}
			p := named.Obj().Pkg().Path()
			return target{key: MethodKey(p, named.Obj().Name(), o.Name()), kind: KindMethod, pkg: p}, true
		}
		if o.Name() == "init" || o.Parent() != o.Pkg().Scope() {
			return target{}, false
		}
		p := o.Pkg().Path()
		return target{key: SymbolKey(p, o.Name()), kind: KindFunc, pkg: p}, true
	case *types.TypeName:
		if o.Parent() != o.Pkg().Scope() {
			return target{}, false
		}
		kind := KindType
		if _, ok := o.Type().Underlying().(*types.Interface); ok && !o.IsAlias() {
			kind = KindInterface
		}
		p := o.Pkg().Path()
		return target{key: SymbolKey(p, o.Name()), kind: kind, pkg: p}, true
	}
	return target{}, false
}

// namedOf is the named type of a receiver type (T or *T), or nil.
func namedOf(t types.Type) *types.Named {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	n, _ := t.(*types.Named)
	return n
}

// implementsTyped adds the implements edges of unit u to fr: a named
// non-interface type of the unit implements an interface (with at least
// one method) of its own package or of a package in the tree it imports,
// directly or not, when it or a pointer to it does, as go/types decides.
// Every package u imports is checked by then.
func (x *extractor) implementsTyped(u *checkUnit, fr *fragment) {
	// Interfaces visible from the unit, indexed by their first method.
	byMethod := make(map[string][]*types.TypeName)
	seen := map[*types.Package]bool{}
	var visit func(p *types.Package)
	visit = func(p *types.Package) {
		if seen[p] || !x.treePkgs[p.Path()] {
			return
		}
		seen[p] = true
		for _, tn := range x.ifaces(p) {
			it := tn.Type().Underlying().(*types.Interface)
			first := it.Method(0).Name() // methods are sorted
			byMethod[first] = append(byMethod[first], tn)
		}
		for _, q := range p.Imports() {
			visit(q)
		}
	}
	visit(u.pkg)
	scope := u.pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok || named.TypeParams().Len() > 0 {
			continue
		}
		if _, isIface := named.Underlying().(*types.Interface); isIface {
			continue
		}
		ptr := types.NewPointer(named)
		ms := types.NewMethodSet(ptr)
		done := make(map[*types.TypeName]bool)
		for i := 0; i < ms.Len(); i++ {
			for _, iface := range byMethod[ms.At(i).Obj().Name()] {
				if done[iface] {
					continue
				}
				done[iface] = true
				it := iface.Type().Underlying().(*types.Interface)
				if types.Implements(named, it) || types.Implements(ptr, it) {
					fr.addEdge(Edge{
						Src: SymbolKey(u.path, name), Rel: RelImplements,
						Dst: SymbolKey(iface.Pkg().Path(), iface.Name()),
					})
				}
			}
		}
	}
}

// ifaces are the interfaces with methods a package of the tree declares
// at package level, cached per package (release drops a released
// package's entry).
func (x *extractor) ifaces(p *types.Package) []*types.TypeName {
	x.ifaceMu.Lock()
	l, ok := x.ifacesOf[p]
	x.ifaceMu.Unlock()
	if ok {
		return l
	}
	if x.treePkgs[p.Path()] {
		scope := p.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			named, ok := tn.Type().(*types.Named)
			if !ok || named.TypeParams().Len() > 0 {
				continue
			}
			it, ok := named.Underlying().(*types.Interface)
			if !ok || it.NumMethods() == 0 || !it.IsMethodSet() {
				continue
			}
			l = append(l, tn)
		}
	}
	x.ifaceMu.Lock()
	x.ifacesOf[p] = l
	x.ifaceMu.Unlock()
	return l
}

func debugf(format string, args ...any) {
	if os.Getenv("MEMCTL_INGEST_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}

// watchHeapHighs, with MEMCTL_INGEST_HEAPDIR=DIR, writes a heap profile
// DIR/high-N.prof each time the live heap (as the last collection marked
// it) passes the last profiled by a tenth, until stop is called: where a
// peak comes from, between the phases debugHeap sees.
func watchHeapHighs() (stop func()) {
	dir := os.Getenv("MEMCTL_INGEST_HEAPDIR")
	if dir == "" {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var high uint64
		for n := 1; ; {
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			if live := sample[0].Value.Uint64(); live > high+high/10 {
				high = live
				if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("high-%d.prof", n))); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
					fmt.Fprintf(os.Stderr, "heap high %d: live %d MB at %.0fs\n", n, live>>20, time.Since(start).Seconds())
					n++
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// debugHeap reports, with MEMCTL_INGEST_DEBUG=2, the live heap after a
// collection and the heap the process has taken from the system so far.
func debugHeap(at string) {
	if os.Getenv("MEMCTL_INGEST_DEBUG") != "2" {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	runtime.GC()
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "heap %s: in use %d MB before GC, live %d MB, heap sys %d MB\n", at, before>>20, ms.HeapAlloc>>20, ms.HeapSys>>20)
	// MEMCTL_INGEST_HEAPDIR=DIR: a heap profile of each phase, DIR/PHASE.prof.
	if dir := os.Getenv("MEMCTL_INGEST_HEAPDIR"); dir != "" {
		name := strings.NewReplacer(" ", "_", ":", "").Replace(at) + ".prof"
		if f, err := os.Create(filepath.Join(dir, name)); err == nil {
			pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
}
