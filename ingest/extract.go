package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/token"
	"go/types"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// GoOptions configures ExtractGo.
type GoOptions struct {
	WalkOptions
	// SyntaxOnly skips type-checking: every package is extracted from its
	// syntax alone.
	SyntaxOnly bool
	// Offline forbids the go command to download anything (GOPROXY=off,
	// GOTOOLCHAIN=local): packages whose dependencies are not in the
	// module cache are then extracted from syntax. Without it the user's
	// settings apply, and missing modules are downloaded when they allow.
	Offline bool
	// LoadEnv is appended to the environment of the go command that
	// go/packages runs.
	LoadEnv []string
	// Progress, when set, is called as work advances, possibly from
	// several goroutines at once.
	Progress func(Progress)
	// SkipIfTreeHash, when it equals the tree hash of the tree (see
	// StoredTreeHash), makes ExtractGo return at once with Unchanged set
	// and no graph.
	SkipIfTreeHash string
	// Known maps files (slash paths relative to the root) to their
	// content hash when the caller knows it without reading them (a stat
	// unchanged since they were hashed): with Cache, a file whose known
	// hash is the one the cache read is not read again.
	Known map[string]string
	// Cache, kept between extractions of one tree by a long-lived
	// process, lets an extraction after a small edit re-check only the
	// packages it affects (gocache.go). Nil: every extraction lists and
	// checks the whole tree.
	Cache *GoCache
	// Stream, when set, receives the graph as packages are merged (a first
	// ingest: write_stream.go), and GoResult.Graph is nil; the extractor
	// keeps only the node keys. Not with Cache.
	Stream *GoStream

	// oneSyntaxPass (tests) reads every module's files read from syntax
	// in one pass after every check, standing alone or not: the graph is
	// the same.
	oneSyntaxPass bool
	// afterModule (tests) is called as each module of the tree is done
	// with.
	afterModule func(x *extractor, i int)
}

// Progress reports how far a phase has come. Total 0 means unknown.
type Progress struct {
	Phase       string // "reading", "loading", "extracting", PhaseWriting
	Done, Total int
}

// PhaseWriting is the last phase of an ingest: the graph is extracted and
// only written from then on.
const PhaseWriting = "writing"

// Extraction modes, per package and for a whole ingest.
const (
	ModeTyped  = "typed"  // type-checked with go/packages
	ModeSyntax = "syntax" // parsed only, names resolved by scope rules
	ModeMixed  = "mixed"  // some packages of each
)

// GoResult is an extracted Go tree.
type GoResult struct {
	Graph    *Graph
	Module   string // module path of the root
	Files    int    // Go files read
	Packages int    // packages found in the tree
	// TypedPackages were type-checked; SyntaxPackages were not (the module
	// did not load, the files are excluded by build constraints for this
	// platform, or SyntaxOnly was set).
	TypedPackages, SyntaxPackages int
	// PackagesWithTypeErrors were type-checked but had errors (their type
	// information is partial).
	PackagesWithTypeErrors int
	Mode                   string
	// LoadErrors say why a module fell back to syntax-only extraction.
	LoadErrors []string
	// Fallbacks name the packages extracted from syntax although
	// type-checking was asked for, with the reason and the fix; sorted by
	// package. Empty with SyntaxOnly.
	Fallbacks []Fallback
	// Unresolved counts the calls syntax-only extraction could not resolve
	// (the sum of the file payloads' unresolved).
	Unresolved int
	// TreeHash identifies the inputs: every Go, go.mod and go.sum file's
	// content hash, the toolchain and the options.
	TreeHash string
	// Unchanged: the tree hash equals GoOptions.SkipIfTreeHash; nothing
	// was extracted and Graph is nil.
	Unchanged bool
	Elapsed   time.Duration
}

// ExtractGo reads the Go tree under root and returns its graph.
func ExtractGo(root string, opts GoOptions) (*GoResult, error) {
	start := time.Now()
	report := func(p Progress) {
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	report(Progress{Phase: "reading"})
	defer func() { debugf("ExtractGo in %v", time.Since(start)) }()
	defer watchHeapHighs()()
	t, err := walkTree(root, opts.WalkOptions, func(name string) bool { return strings.HasSuffix(name, ".go") },
		opts.Cache.known(opts.Known), opts.Cache != nil)
	if err != nil {
		return nil, err
	}
	toolchain, cacheKey := "", ""
	if opts.Cache != nil && !opts.SyntaxOnly {
		cacheKey = goCacheKey(t.Root, opts, t.ModFiles)
	}
	if !opts.SyntaxOnly {
		toolchain = opts.Cache.toolchain(cacheKey, t, opts)
	}
	res := &GoResult{
		Module:   t.Modules[0].Path,
		Files:    len(t.Files),
		TreeHash: treeHash(t, opts, toolchain),
	}
	if opts.SkipIfTreeHash != "" && opts.SkipIfTreeHash == res.TreeHash {
		res.Unchanged = true
		res.Elapsed = time.Since(start)
		return res, nil
	}
	if opts.Stream != nil && opts.Cache != nil {
		return nil, errors.New("ingest: a Go extraction streams or keeps a cache, not both")
	}
	x := newExtractor(t, opts)
	if x.stream != nil && x.stream.dir != "" {
		x.g.parkAt(x.stream.dir)
		defer func() {
			if x.g.park != nil {
				x.stream.parked = x.g.park.parked
			}
			x.g.closePark()
		}()
	}
	if cacheKey != "" {
		x.startCache(opts.Cache, cacheKey, toolchain)
	}
	if t.Links != nil {
		n := 0
		for i := range t.Modules {
			if x.alone(i) {
				n++
			}
		}
		debugf("%d modules, %d of them extracted alone", len(t.Modules), n)
	}
	for i, m := range t.Modules {
		var others *heldApart // a module standing alone is extracted whole, now (modlinks.go)
		if x.alone(i) {
			others = x.holdApart()
		}
		if !opts.SyntaxOnly {
			report(Progress{Phase: "loading", Done: i, Total: len(t.Modules)})
			if err := x.loadTyped(m); err != nil {
				msg := fmt.Sprintf("%s: %v", m.Path, firstLine(err.Error()))
				res.LoadErrors = append(res.LoadErrors, msg)
				x.moduleErrs[m.Dir] = msg
			}
		}
		if others != nil {
			if err := x.endAlone(i, others); err != nil {
				return nil, err
			}
		}
		if opts.afterModule != nil {
			opts.afterModule(x, i)
		}
	}
	if !opts.SyntaxOnly {
		debugHeap("type-checking done")
		// What type-checking kept for the modules to come goes now (the
		// packages, syntax trees and the line tables of every file it
		// parsed), with the source of the files it extracted when a
		// GoCache keeps it.
		x.checked, x.parseCache, x.ifacesOf, x.typedFset = nil, nil, nil, nil
		for i, f := range t.Files {
			if x.claimed[i] && x.next == nil {
				f.Content = nil
			}
		}
		debugHeap("after type-checking")
		if err := x.failedRead(); err != nil {
			return nil, err
		}
	}
	report(Progress{Phase: "extracting"})
	t0 := time.Now()
	var rest func(j int) bool // the files of the modules not extracted yet
	if t.Links != nil {
		rest = func(j int) bool { return !x.alone(int(t.Links.fileMod[j])) }
	}
	x.extractSyntax(rest)
	if x.next != nil {
		x.endCache(opts.Cache, len(res.LoadErrors))
	}
	debugHeap("after syntax")
	if err := x.failedRead(); err != nil {
		return nil, err
	}
	x.finish()
	if err := x.g.parkErr(); err != nil {
		return nil, err
	}
	debugf("syntax and finish in %v", time.Since(t0))
	debugHeap("after finish")
	res.Graph = x.g
	res.Packages = len(x.pkgModes)
	for _, m := range x.pkgModes {
		if m == ModeTyped {
			res.TypedPackages++
		} else {
			res.SyntaxPackages++
		}
	}
	res.PackagesWithTypeErrors = len(x.typeErrors)
	if !opts.SyntaxOnly {
		res.Fallbacks = x.fallbackList(root)
	}
	res.Unresolved = x.unresolved
	switch {
	case res.SyntaxPackages == 0:
		res.Mode = ModeTyped
	case res.TypedPackages == 0:
		res.Mode = ModeSyntax
	default:
		res.Mode = ModeMixed
	}
	res.Graph.AddNode(Node{Key: IngestGoKey, Type: TypeIngest, Payload: mustJSON(IngestPayload{
		Module: res.Module, GoVersion: toolchain, Mode: res.Mode, Files: res.Files, Fallbacks: len(res.Fallbacks),
		TreeHash: res.TreeHash,
	})})
	if x.stream != nil {
		x.flushRest()
		res.Graph = nil
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// goToolchain describes the go command that type-checking would use: its
// version and target. It is part of the tree hash because it changes what
// type-checking sees.
func goToolchain(dir string, offline bool, env []string) string {
	cmd := exec.Command("go", "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS")
	cmd.Dir = dir
	cmd.Env = loadEnv(offline, env)
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// goRules is the version of Go's extraction rules, the first line of its
// tree hash (SPEC.md §9.3): bump it whenever the graph built from the same
// files changes, so `ingest go` reads the tree again. 2: function values
// are references, var _ initialisers keep their calls, syntax-only types
// from the module's declarations, unresolved counts.
const goRules = 2

// treeHash is the hash of everything extraction depends on.
func treeHash(t *tree, opts GoOptions, toolchain string) string {
	h := sha256.New()
	fmt.Fprintf(h, "ingest-go %d\ntoolchain %s\nvendor %t testdata %t hidden %t syntax-only %t offline %t\n", goRules,
		toolchain, opts.IncludeVendor, opts.IncludeTestdata, opts.IncludeHidden, opts.SyntaxOnly, opts.Offline)
	for _, fs := range [][]*srcFile{t.ModFiles, t.Files} {
		for _, f := range fs {
			fmt.Fprintf(h, "%s\x00%s\n", f.Rel, f.Hash)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// target is what an identifier resolves to: a package-level symbol.
type target struct {
	key  string
	kind string
	pkg  string // import path of the symbol's package
}

// resolver resolves the identifiers of one file.
type resolver interface {
	// ident resolves an identifier used as an operand.
	ident(id *ast.Ident) (target, bool)
	// selector resolves x.Sel; skipX reports that x needs no resolution
	// (it names an imported package).
	selector(sel *ast.SelectorExpr) (t target, ok, skipX bool)
	// importPath is the import path an import spec resolves to.
	importPath(spec *ast.ImportSpec) string
	// unresolved reports whether a call that resolved to no symbol counts
	// as unresolved (it may call code of the tree; SPEC §9.3).
	unresolved(c *ast.CallExpr) bool
}

// extractor accumulates the graph of one tree.
type extractor struct {
	t    *tree
	opts GoOptions
	g    *Graph
	// typedFset holds the files of type-checked packages; checked are
	// the type-checked packages by go/packages ID, across modules.
	typedFset *token.FileSet
	checked   map[string]*types.Package
	seenUnits map[string]bool // units checked, by ID (checked drops some)
	// neededUntil: by module directory, the index of the last module
	// whose check may import its packages; moduleAt: a module's index
	// (releaseModule).
	neededUntil, moduleAt map[string]int
	parseMu               sync.Mutex
	parseCache            map[string]*parseEntry
	parseRefs             map[string]int // compiled file → units left to check that compile it
	// Type-checked units are extracted on the checking goroutines: tabMu
	// guards tables, ifaceMu ifacesOf (implementsTyped's cache).
	tabMu        sync.Mutex
	ifaceMu      sync.Mutex
	ifacesOf     map[*types.Package][]*types.TypeName
	extractDone  atomic.Int64
	extractTotal int

	claimed  []bool            // by index in t.Files: extracted by a typed package
	treePkgs map[string]bool   // import paths of directories in the tree
	tables   map[string]*table // import path → declarations
	pkgModes map[string]string // import path → mode
	// typeErrors are import paths of packages type-checked with errors.
	typeErrors map[string]bool

	// syms: symbol key → the file it is first declared in, an index of
	// declFiles (4 bytes an entry: there is one per symbol of the tree).
	// Streaming, a symbol's index goes with its key when it is sent
	// (Graph.markSent's tag, + 1) instead: one map entry a symbol, not two.
	syms      map[string]uint32
	declFiles []string          // by index
	declFile  map[string]uint32 // file → its index in declFiles
	// syntaxTypes are the types declared in files extracted without
	// type information; implementsSyntax handles them.
	syntaxTypes hashSet // tag 0
	// syntaxBatch is syntaxspans.go's syntaxBatch unless a test sets it.
	syntaxBatch int
	imported    map[string]bool       // import paths imported by some file
	tests       map[string][]testEdge // by the package under test: calls waiting for their callee (merge)

	// prev is the last extraction through GoOptions.Cache when this one
	// starts from it; next is the state this one leaves (gocache.go).
	prev, next *goState
	// readErr is the first file that could not be read again as the walk
	// hashed it (srcFile.read); the extraction fails with it.
	readMu  sync.Mutex
	readErr error
	// published and affected: the incremental check's, across modules.
	published, affected map[string]bool

	// fallbacks say why a package of the tree was not type-checked;
	// moduleErrs why a module (by directory) did not load at all.
	fallbacks  map[string]fallbackNote
	moduleErrs map[string]string
	pkgDirs    map[string]string // import path → directory (rel)
	unresolved int               // calls syntax-only extraction left unresolved

	// stream receives the graph merge by merge (GoOptions.Stream); g then
	// keeps the nodes it was sent without payload.
	stream *GoStream
	pend   streamPending

	// listings are the modules' listings made ahead (typed.go).
	listings *listings
}

type testEdge struct {
	file, fn, target string
	pkg              string // the target's package, the one under test
}

func newExtractor(t *tree, opts GoOptions) *extractor {
	x := &extractor{
		t: t, opts: opts, g: NewGraph(), typedFset: token.NewFileSet(),
		checked:    make(map[string]*types.Package),
		seenUnits:  make(map[string]bool),
		parseCache: make(map[string]*parseEntry),
		parseRefs:  make(map[string]int),
		ifacesOf:   make(map[*types.Package][]*types.TypeName),
		claimed:    make([]bool, len(t.Files)),
		treePkgs:   make(map[string]bool),
		tables:     make(map[string]*table),
		pkgModes:   make(map[string]string),
		typeErrors: make(map[string]bool),
		syms:       make(map[string]uint32),
		declFile:   make(map[string]uint32),
		imported:   make(map[string]bool),
		tests:      make(map[string][]testEdge),
		fallbacks:  make(map[string]fallbackNote),
		moduleErrs: make(map[string]string),
		pkgDirs:    make(map[string]string),
		stream:     opts.Stream,
	}
	for _, f := range t.Files {
		ip := t.importPathOf(path.Dir(f.Rel))
		x.treePkgs[ip] = true
		x.treePkgs[ip+"_test"] = true
	}
	return x
}

// unitFile is one file of a package being extracted.
type unitFile struct {
	src  *srcFile
	ast  *ast.File
	fset *token.FileSet
	res  resolver
	mode string
	// parseErr is the first syntax error of the file ("" if none).
	parseErr string
}

func (f *unitFile) isTest() bool { return strings.HasSuffix(f.src.Rel, "_test.go") }

// line is the line of p in the file. A declaration cut short by a syntax
// error may end past the end of its file: it ends on the file's last
// line, not on a line of whichever file the file set holds next (which
// depends on the order files were parsed in).
func (f *unitFile) line(p token.Pos) int {
	if tf := f.fset.File(f.ast.Package); tf != nil && int(p) > tf.Base()+tf.Size() {
		p = token.Pos(tf.Base() + tf.Size())
	}
	return f.fset.PositionFor(p, false).Line
}

// addPackage records a package node (the first description of an import
// path wins: typed packages are extracted before syntax-only ones).
func (x *extractor) addPackage(importPath, name, dir, mode string) {
	if _, ok := x.pkgModes[importPath]; ok {
		return
	}
	x.pkgModes[importPath] = mode
	x.pkgDirs[importPath] = dir
	x.addNode(Node{Key: PackageKey(importPath), Type: TypePackage, Payload: mustJSON(PackagePayload{
		ImportPath: importPath, Name: name, Dir: dir, Mode: mode,
	})})
}

// fragment collects what the files of one package add to the graph, so
// that packages are extracted in parallel and merged in a fixed order.
type fragment struct {
	nodes    []Node
	symbols  []symbolNode
	edges    []Edge
	files    []string // rel paths whose directories need nodes
	imported []string
	tests    []testEdge
	initSeq  map[string]int // "importpath\x00file" → inits seen
	// unresolved counts the unresolved calls of the file being extracted;
	// total those of every file.
	unresolved, total int
	// w is walk's, reused from declaration to declaration.
	w walker
}

type symbolNode struct {
	node       Node
	file       string // a _test.go file for a test's symbol
	syntaxType bool   // a type declared in a file extracted from syntax
}

// declaredIn is the file that declared symbol key first ("" if none).
func (x *extractor) declaredIn(key string) string {
	if i, ok := x.syms[key]; ok {
		return x.declFiles[i]
	}
	if t, ok := x.g.sentTag(key); ok && t > 0 {
		return x.declFiles[t-1]
	}
	if t := x.pend.decl[key]; t > 0 { // declared by the merge under way
		return x.declFiles[t-1]
	}
	return ""
}

// declare records that file declared symbol key.
func (x *extractor) declare(key, file string) {
	i, ok := x.declFile[file]
	if !ok {
		i = uint32(len(x.declFiles))
		x.declFiles = append(x.declFiles, file)
		x.declFile[file] = i
	}
	if x.stream != nil {
		if x.pend.decl == nil {
			x.pend.decl = make(map[string]uint32)
		}
		x.pend.decl[key] = i + 1 // sent with the node (flushMerged)
		return
	}
	x.syms[key] = i
}

func newFragment() *fragment { return &fragment{initSeq: make(map[string]int)} }

func (fr *fragment) addEdge(e Edge) { fr.edges = append(fr.edges, e) }

// merge adds a fragment to the graph. A symbol declared again (in a file
// for another platform) keeps its first description.
//
// Streaming, the fragment's nodes and edges go to the stream, once merged
// (and, in the extractor, out of reach of the collector's next cycle).
func (x *extractor) merge(fr *fragment) {
	for _, n := range fr.nodes {
		x.addNode(n)
	}
	for _, rel := range fr.files {
		x.addDirs(rel)
	}
	for _, s := range fr.symbols {
		if x.g.HasNode(s.node.Key) {
			continue
		}
		x.addNode(s.node)
		x.declare(s.node.Key, s.file)
		if s.syntaxType {
			x.syntaxTypes.put(s.node.Key, 0)
		}
	}
	if x.stream != nil {
		x.pend.addEdges(fr.edges)
	} else {
		for _, e := range fr.edges {
			x.g.AddEdge(e)
		}
	}
	for _, p := range fr.imported {
		x.imported[p] = true
	}
	for _, te := range fr.tests {
		if !x.g.HasNode(te.target) {
			x.tests[te.pkg] = append(x.tests[te.pkg], te) // declared by a later merge, or never: finish decides
			continue
		}
		if es := x.testsEdges(te); x.stream != nil {
			x.pend.addEdges(es)
		} else {
			for _, e := range es {
				x.g.AddEdge(e)
			}
		}
	}
	x.unresolved += fr.total
	if x.stream != nil {
		x.flushMerged()
	}
}

// parallel runs fn(i) for i in [0, n) on all CPUs.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// parallelInOrder runs work(i) for i in [0, n) on all CPUs and hands the
// results to done in the order of i, each as soon as those before it are
// done, so that results are consumed while later ones are computed. done
// runs on one goroutine at a time. A worker starts work(i) only when i is
// within inOrderWindow of the next result done waits for: behind one large
// unit, the others do not pile up their results (a fragment holds every
// node and edge of its unit until merged).
func parallelInOrder[T any](n int, work func(i int) T, done func(i int, v T)) {
	var mu sync.Mutex
	moved := sync.NewCond(&mu) // next grew
	pending := make(map[int]T)
	next := 0
	window := inOrderWindow * runtime.GOMAXPROCS(0)
	parallel(n, func(i int) {
		mu.Lock()
		for i >= next+window {
			moved.Wait()
		}
		mu.Unlock()
		v := work(i)
		mu.Lock()
		defer mu.Unlock()
		pending[i] = v
		for {
			v, ok := pending[next]
			if !ok {
				return
			}
			delete(pending, next)
			done(next, v)
			next++
			moved.Broadcast()
		}
	})
}

// inOrderWindow is how many results per CPU parallelInOrder lets wait for
// an earlier one.
const inOrderWindow = 8

// source is f's content (srcFile.read); an error (the content nil) fails
// the extraction (failedRead).
func (x *extractor) source(f *srcFile) ([]byte, error) {
	b, err := f.read(x.t.Root)
	if err != nil {
		x.readMu.Lock()
		if x.readErr == nil {
			x.readErr = err
		}
		x.readMu.Unlock()
	}
	return b, err
}

// failedRead is the first error source met.
func (x *extractor) failedRead() error {
	x.readMu.Lock()
	defer x.readMu.Unlock()
	return x.readErr
}

// extractFile adds the nodes and edges of one file of package importPath
// whose content is src.
func (fr *fragment) extractFile(importPath string, f *unitFile, src []byte) {
	rel := f.src.Rel
	fileKey := FileKey(rel)
	payload := FilePayload{
		Path: rel, Package: importPath, Hash: f.src.Hash.String(), Bytes: len(src),
		Lines: countLines(src), Test: f.isTest(), Mode: f.mode, ParseError: f.parseErr,
		Terms: FileTerms(src),
	}
	fr.unresolved = 0
	defer func() {
		payload.Unresolved = fr.unresolved
		fr.total += fr.unresolved
		fr.nodes = append(fr.nodes, Node{Key: fileKey, Type: TypeFile, Payload: mustJSON(payload)})
	}()
	fr.addEdge(Edge{Src: PackageKey(importPath), Rel: RelContains, Dst: fileKey})
	fr.files = append(fr.files, rel)
	for _, imp := range f.ast.Imports {
		p := f.res.importPath(imp)
		if p == "" {
			continue
		}
		fr.imported = append(fr.imported, p)
		fr.addEdge(Edge{Src: fileKey, Rel: RelImports, Dst: PackageKey(p)})
	}
	base := path.Base(rel)
	for _, decl := range f.ast.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == "_" {
				continue
			}
			sym := SymbolPayload{Package: importPath, Name: d.Name.Name, Kind: KindFunc}
			var key string
			switch {
			case d.Recv != nil && len(d.Recv.List) > 0:
				recv := recvTypeName(d.Recv.List[0].Type)
				if recv == "" {
					continue
				}
				sym.Recv, sym.Kind = recv, KindMethod
				key = MethodKey(importPath, recv, d.Name.Name)
			case d.Name.Name == "init":
				seq := importPath + "\x00" + rel
				fr.initSeq[seq]++
				key = InitKey(importPath, base, fr.initSeq[seq])
			default:
				key = SymbolKey(importPath, d.Name.Name)
			}
			fr.addSymbol(key, fileKey, f, sym, d.Pos(), d.End())
			isTestFn := f.isTest() && d.Recv == nil && isTestFuncName(d.Name.Name)
			fr.walk([]string{key}, d, f, isTestFn, strings.TrimSuffix(importPath, "_test"))
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				from, to := spec.Pos(), spec.End()
				if !d.Lparen.IsValid() {
					from, to = d.Pos(), d.End()
				}
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == "_" {
						continue
					}
					kind := KindType
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						kind = KindInterface
						fr.addInterfaceMethods(importPath, s.Name.Name, it, fileKey, f)
					}
					key := SymbolKey(importPath, s.Name.Name)
					fr.addSymbol(key, fileKey, f, SymbolPayload{Package: importPath, Name: s.Name.Name, Kind: kind}, from, to)
					fr.walk([]string{key}, s, f, false, "")
				case *ast.ValueSpec:
					kind := KindVar
					if d.Tok == token.CONST {
						kind = KindConst
					}
					var keys []string
					for _, n := range s.Names {
						if n.Name == "_" {
							continue
						}
						key := SymbolKey(importPath, n.Name)
						fr.addSymbol(key, fileKey, f, SymbolPayload{Package: importPath, Name: n.Name, Kind: kind}, from, to)
						keys = append(keys, key)
					}
					if len(keys) == 0 {
						// var _ = f(): the file is what runs the
						// initialiser (as module-level code elsewhere).
						keys = []string{fileKey}
					}
					fr.walk(keys, s, f, false, "")
				}
			}
		}
	}
}

func (fr *fragment) addInterfaceMethods(importPath, iface string, it *ast.InterfaceType, fileKey string, f *unitFile) {
	if it.Methods == nil {
		return
	}
	for _, m := range it.Methods.List {
		for _, n := range m.Names {
			if n.Name == "_" {
				continue
			}
			key := MethodKey(importPath, iface, n.Name)
			fr.addSymbol(key, fileKey, f, SymbolPayload{Package: importPath, Name: n.Name, Recv: iface, Kind: KindMethod}, m.Pos(), m.End())
		}
	}
}

func (fr *fragment) addSymbol(key, fileKey string, f *unitFile, p SymbolPayload, from, to token.Pos) {
	fr.addEdge(Edge{Src: fileKey, Rel: RelDefines, Dst: key})
	fr.addEdge(Edge{Src: fileKey, Rel: RelContains, Dst: key})
	p.Path = f.src.Rel
	p.LineStart, p.LineEnd = f.line(from), f.line(to)
	p.Exported = token.IsExported(p.Name)
	p.Test = f.isTest()
	fr.symbols = append(fr.symbols, symbolNode{
		node:       Node{Key: key, Type: TypeSymbol, Payload: mustJSON(p)},
		file:       f.src.Rel,
		syntaxType: f.mode == ModeSyntax && p.Kind == KindType,
	})
}

// addDirs adds the directory nodes above file rel and their contains edges.
func (x *extractor) addDirs(rel string) {
	AddDirs(x.g, rel)
	if x.stream != nil {
		x.pend.dirsAdded(x.g, rel)
	}
}

// walk adds the calls and references edges of one declaration. srcs are the
// symbols it declares. For a test function, calls into the package under
// test are also recorded as tests edges.
func (fr *fragment) walk(srcs []string, decl ast.Node, f *unitFile, testFn bool, underTest string) {
	w := &fr.w
	*w = walker{fr: fr, f: f, srcs: srcs, testFn: testFn, underTest: underTest, visitFn: w.visitFn}
	if w.visitFn == nil {
		w.visitFn = w.visit
	}
	w.inspect(decl)
	w.fr, w.f, w.srcs, w.callee = nil, nil, nil, nil // no trees held past the declaration
}

// walker is walk's state for one declaration. Names that declare
// something (of funcs, types, values, fields, labels) and the keys of
// composite literals are not uses: the walker steps around them rather
// than mark them in a map of flags per identifier (a map access for every
// identifier, and a clear per declaration). callee is the identifier the innermost call being
// walked calls (calleeIdent): the walk reaches it through the call's Fun
// before any other call, so one slot, saved around nested calls, is
// enough; calleeResolved records that it resolved to a symbol.
type walker struct {
	fr             *fragment
	f              *unitFile
	srcs           []string
	testFn         bool
	underTest      string
	callee         *ast.Ident
	calleeResolved bool
	visitFn        func(ast.Node) bool // w.visit, made once per fragment
}

// inspect walks n unless it is nil: the caller passes an optional
// field of pointer type (Recv, Body, TypeParams, Tag) only when it is set.
func (w *walker) inspect(n ast.Node) {
	if n != nil {
		ast.Inspect(n, w.visitFn)
	}
}

func (w *walker) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.CallExpr:
		prev, prevResolved := w.callee, w.calleeResolved
		w.callee, w.calleeResolved = calleeIdent(n), false
		w.inspect(n.Fun)
		if (w.callee == nil || !w.calleeResolved) && w.f.res.unresolved(n) {
			w.fr.unresolved++
		}
		w.callee, w.calleeResolved = prev, prevResolved
		for _, a := range n.Args {
			w.inspect(a)
		}
		return false
	case *ast.SelectorExpr:
		t, ok, skipX := w.f.res.selector(n)
		if ok {
			w.emit(t, n.Sel)
		}
		if !skipX {
			w.inspect(n.X)
		}
		return false // n.Sel is resolved
	case *ast.Ident:
		if t, ok := w.f.res.ident(n); ok {
			w.emit(t, n)
		}
	case *ast.FuncDecl:
		if n.Recv != nil {
			w.inspect(n.Recv)
		}
		w.inspect(n.Type)
		if n.Body != nil {
			w.inspect(n.Body)
		}
		return false
	case *ast.TypeSpec:
		if n.TypeParams != nil {
			w.inspect(n.TypeParams)
		}
		w.inspect(n.Type)
		return false
	case *ast.ValueSpec:
		w.inspect(n.Type)
		for _, v := range n.Values {
			w.inspect(v)
		}
		return false
	case *ast.Field:
		w.inspect(n.Type)
		if n.Tag != nil {
			w.inspect(n.Tag)
		}
		return false
	case *ast.CompositeLit:
		w.inspect(n.Type)
		for _, e := range n.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if _, ok := kv.Key.(*ast.Ident); ok {
					w.inspect(kv.Value) // a field name (or a constant index): no use
					continue
				}
			}
			w.inspect(e)
		}
		return false
	case *ast.LabeledStmt:
		w.inspect(n.Stmt)
		return false
	case *ast.BranchStmt:
		return false
	}
	return true
}

// emit adds the edges of a use of symbol t by identifier id.
func (w *walker) emit(t target, id *ast.Ident) {
	called := id == w.callee
	if called {
		w.calleeResolved = true
	}
	var rel string
	switch t.kind {
	case KindFunc, KindMethod:
		// Called, or mentioned as a value (passed, stored, assigned):
		// a function value is a reference (SPEC §9.4).
		rel = RelReferences
		if called {
			rel = RelCalls
		}
	case KindType, KindInterface:
		rel = RelReferences
	default:
		return
	}
	for _, src := range w.srcs {
		if src == t.key {
			continue
		}
		w.fr.addEdge(Edge{Src: src, Rel: rel, Dst: t.key})
		if w.testFn && rel == RelCalls && t.pkg == w.underTest {
			w.fr.tests = append(w.fr.tests, testEdge{file: w.f.src.Rel, fn: src, target: t.key, pkg: t.pkg})
		}
	}
}

// calleeIdent is the identifier naming the function call c calls, or nil.
func calleeIdent(c *ast.CallExpr) *ast.Ident {
	switch e := calledExpr(c).(type) {
	case *ast.SelectorExpr:
		return e.Sel
	case *ast.Ident:
		return e
	}
	return nil
}

// recvTypeName is the type name of a receiver expression: T, *T, T[P], *T[P].
func recvTypeName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// isTestFuncName reports whether a top-level function of a _test.go file
// is run by go test: TestX, BenchmarkX, FuzzX, ExampleX (X not lowercase).
func isTestFuncName(name string) bool {
	for _, prefix := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if rest == "" {
			return true
		}
		r, _ := utf8.DecodeRuneInString(rest)
		if !unicode.IsLower(r) {
			return true
		}
	}
	return false
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// neverBuilt reports whether a file's //go:build line excludes it from
// every build (as "//go:build ignore" does): false whether every tag is
// set (except "ignore") or none is.
func neverBuilt(src []byte) bool {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "//") && !constraint.IsGoBuild(s) {
			continue
		}
		if !constraint.IsGoBuild(s) {
			return false // past the header
		}
		expr, err := constraint.Parse(s)
		if err != nil {
			return false
		}
		all := expr.Eval(func(tag string) bool { return tag != "ignore" })
		none := expr.Eval(func(string) bool { return false })
		return !all && !none
	}
	return false
}

// testsEdges are the tests edges of a test's call to te.target, a node of
// the graph: the test function → the target and its file → the target's
// file, none when the target is declared in a test file. Nodes are never
// removed and a symbol is declared once (by the merge that first adds
// it), so a call whose target is a node already gets the edges finish
// would give it: merge adds them at once, and finish only those of the
// calls whose targets a later merge declared.
func (x *extractor) testsEdges(te testEdge) []Edge {
	tf := x.declaredIn(te.target)
	if strings.HasSuffix(tf, "_test.go") {
		return nil
	}
	es := []Edge{{Src: te.fn, Rel: RelTests, Dst: te.target}}
	if tf != "" {
		es = append(es, Edge{Src: FileKey(te.file), Rel: RelTests, Dst: FileKey(tf)})
	}
	return es
}

// finish adds what needs every package: external package nodes, tests
// edges into non-test code, test file → file edges, and drops edges to
// symbols outside the tree.
func (x *extractor) finish() {
	x.implementsSyntax()
	for p := range x.imported {
		if _, ok := x.pkgModes[p]; !ok && !x.g.HasNode(PackageKey(p)) {
			x.g.AddNode(Node{Key: PackageKey(p), Type: TypePackage, Payload: mustJSON(PackagePayload{ImportPath: p, External: true})})
		}
	}
	for _, p := range sortedKeys(x.tests) {
		x.testsOf(p)
	}
	for _, f := range x.t.Files {
		if base, ok := strings.CutSuffix(f.Rel, "_test.go"); ok {
			if x.t.file(base+".go") != nil && x.g.HasNode(FileKey(f.Rel)) {
				x.g.AddEdge(Edge{Src: FileKey(f.Rel), Rel: RelTests, Dst: FileKey(base + ".go")})
			}
		}
	}
	if x.stream == nil {
		// Streaming, the load drops them (GoStream): the symbols of a
		// package merged from syntax alone are no longer known here
		// (Graph.dropScope).
		x.g.dropDangling()
	}
}

// testsOf adds the tests edges of the calls into package p that wait for
// their callee (merge), if it is a node now, and forgets them: called
// once no later merge declares p's symbols.
func (x *extractor) testsOf(p string) {
	for _, te := range x.tests[p] {
		if x.g.HasNode(te.target) {
			for _, e := range x.testsEdges(te) {
				x.g.AddEdge(e)
			}
		}
	}
	delete(x.tests, p)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Fallback names a package of the tree extracted from syntax alone
// although type-checking was asked for (SPEC.md §9.6).
type Fallback struct {
	Package string `json:"package"`
	// Reason is the first failure the package depends on: "<package>:
	// <go list error>", "<module>: <error>" when the module did not load,
	// or that no file of it is built for this platform.
	Reason string `json:"reason"`
	// Fix is the command that fixes it, when ingest knows one: `go -C
	// <module dir> mod download` when a dependency outside the tree did
	// not load (it is missing from the module cache). Empty otherwise.
	Fix string `json:"fix,omitempty"`
}

// notBuiltHere is the reason of a package no file of which is built for
// this platform (f_windows.go on Linux): type-checking cannot include it.
const notBuiltHere = "no file is built for this platform (build constraints)"

// fallbackList names the packages extracted from syntax and why; root is
// the directory as the caller named it, for the fix.
func (x *extractor) fallbackList(root string) []Fallback {
	var out []Fallback
	for _, ip := range sortedKeys(x.pkgModes) {
		if x.pkgModes[ip] != ModeSyntax {
			continue
		}
		fb := Fallback{Package: ip, Reason: notBuiltHere}
		m := x.t.moduleOf(x.pkgDirs[ip])
		switch n, ok := x.fallbacks[ip]; {
		case ok:
			fb.Reason = n.cause.pkg + ": " + n.cause.msg
			if n.cause.dependency {
				fb.Fix = "go -C " + filepath.Join(root, filepath.FromSlash(n.module.Dir)) + " mod download"
			}
		case x.moduleErrs[m.Dir] != "":
			fb.Reason = x.moduleErrs[m.Dir]
		}
		out = append(out, fb)
	}
	return out
}
