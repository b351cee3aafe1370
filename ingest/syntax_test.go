package ingest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// extractSyntaxWhole is extractSyntax as it was before it streamed (main
// at dc710c8): every file parsed whole and held, the declarations of every
// package recorded from the whole trees, then every package extracted
// with them, and the fragments merged at the end. Kept as a second
// implementation: the two passes of extractSyntax, which keep only
// declarations between them and parse each package again, must give the
// same graph.
func (x *extractor) extractSyntaxWhole() {
	type wholeFile struct {
		src *srcFile
		ast *ast.File
		err error
	}
	fset := token.NewFileSet()
	var todo []*wholeFile
	for i, f := range x.t.Files {
		if b, _ := x.source(f); !x.claimed[i] && !neverBuilt(b) {
			todo = append(todo, &wholeFile{src: f})
		}
	}
	var wg sync.WaitGroup
	next := make(chan *wholeFile)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sf := range next {
				b, _ := x.source(sf.src)
				f, err := parser.ParseFile(fset, x.t.abs(sf.src), b, 0)
				if f != nil && f.Name != nil && f.Name.Name != "" && f.Name.Name != "_" {
					sf.ast = f
				}
				sf.err = err
				if sf.ast == nil && sf.err == nil {
					sf.err = errNoPackage
				}
			}
		}()
	}
	for _, sf := range todo {
		next <- sf
	}
	close(next)
	wg.Wait()

	var named []fileName
	for _, sf := range todo {
		if sf.ast != nil {
			named = append(named, fileName{sf.src.Rel, sf.ast.Name.Name})
		}
	}
	ipOf := x.syntaxImportPaths(named, nil)
	importPathFor := func(sf *wholeFile) string { return ipOf(sf.src.Rel, sf.ast.Name.Name) }
	units := make(map[string][]*wholeFile)
	for _, sf := range todo {
		if sf.ast == nil {
			continue
		}
		ip := importPathFor(sf)
		x.table(ip, sf.ast.Name.Name)
		units[ip] = append(units[ip], sf)
	}
	ctxs := make(map[*ast.File]*declCtx, len(todo))
	for _, sf := range todo {
		if sf.ast != nil {
			named, _ := fileImports(sf.ast, x.packageName)
			ctxs[sf.ast] = x.tables[importPathFor(sf)].addDecls(sf.ast, named, true)
		}
	}
	ips := sortedKeys(units)
	frags := make([]*fragment, len(ips))
	parallel(len(ips), func(i int) {
		fr := newFragment()
		for _, sf := range units[ips[i]] {
			_, dots := fileImports(sf.ast, x.packageName)
			r := &syntaxResolver{x: x, declCtx: ctxs[sf.ast]}
			for _, d := range dots {
				if t := x.tables[d]; t != nil {
					r.dots = append(r.dots, t)
				}
			}
			uf := &unitFile{src: sf.src, ast: sf.ast, fset: fset, res: r, mode: ModeSyntax}
			if sf.err != nil {
				uf.parseErr = parseErrorText(x.t.Root, sf.src, sf.err)
			}
			b, _ := x.source(sf.src)
			fr.extractFile(ips[i], uf, b)
		}
		frags[i] = fr
	})
	for i, ip := range ips {
		x.addPackage(ip, x.tables[ip].name, path.Dir(units[ip][0].src.Rel), ModeSyntax)
		x.merge(frags[i])
	}
	for _, sf := range todo {
		if sf.ast == nil {
			x.addUnparsed(sf.src, parseErrorText(x.t.Root, sf.src, sf.err))
		}
	}
}

// extractWith runs ExtractGo's phases on dir with syntax as the
// syntax-only phase, and returns the graph.
func extractWith(t *testing.T, dir string, opts GoOptions, syntax func(*extractor)) *Graph {
	t.Helper()
	tr, err := walkTree(dir, opts.WalkOptions, func(name string) bool { return strings.HasSuffix(name, ".go") }, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	x := newExtractor(tr, opts)
	if !opts.SyntaxOnly {
		for _, m := range tr.Modules {
			if err := x.loadTyped(m); err != nil {
				t.Logf("%s: %v", m.Path, err)
			}
		}
		x.checked, x.parseCache, x.ifacesOf = nil, nil, nil
	}
	syntax(x)
	x.finish()
	return x.g
}

// streamFixture is a module of syntax-only packages that resolve names in
// each other's declarations: vars initialised by calls into another
// package, fields and results of types declared elsewhere, promoted
// methods, embedded interfaces across packages, a dot import (which the
// declarations of the file holding it see, and those of its package's
// other files do not), a type switch inside a var's func literal, an
// external test package, generics, a file that does not parse and one
// without a package clause.
var streamFixture = map[string]string{
	"go.mod": "module example.com/s\n\ngo 1.22\n",
	// chain/a reaches chain/c's declarations only through chain/b's: in
	// import-path order a comes first, so c's must be parsed for it.
	"chain/a/a.go": `package a

import "example.com/s/chain/b"

func Use() { b.Get().Next().Close() }
`,
	"chain/b/b.go": `package b

import "example.com/s/chain/c"

func Get() *c.T { return nil }
`,
	"chain/c/c.go": `package c

type T struct{}

type U struct{}

func (t *T) Next() *U { return nil }

func (u *U) Close() {}
`,
	"store/store.go": `package store

type Reader interface{ Read() []byte }

type Log struct{ entries [][]byte }

func NewLog() *Log { return &Log{} }

func (l *Log) Append(b []byte) { l.entries = append(l.entries, b) }

func (l *Log) Read() []byte { return nil }

func First[T any](xs []T) T { return xs[0] }

var Default = NewLog()
`,
	"peer/peer.go": `package peer

import "example.com/s/store"

type ReadCloser interface {
	store.Reader
	Close() error
}

type Peer struct {
	*store.Log
	id  string
	out map[string][]*store.Log
}

func New(id string) *Peer { return &Peer{id: id, Log: store.NewLog()} }

func (p *Peer) Close() error { return nil }

func (p *Peer) Logs() []*store.Log { return p.out[p.id] }

var All = []*Peer{New("a")}

var byName = func() *Peer {
	var x any = All[0]
	switch v := x.(type) {
	case *Peer:
		return v
	}
	return nil
}()

func Named() *Peer { return byName }
`,
	"raft/raft.go": `package raft

import (
	"example.com/s/peer"
	"example.com/s/store"
)

var log = store.Default

type Raft struct {
	peers []*peer.Peer
	rc    peer.ReadCloser
}

func (r *Raft) Run() {
	for _, p := range r.peers {
		p.Logs()[0].Append(nil)
	}
	_ = r.rc.Read()
	_ = peer.All[0].Close()
	_ = store.First(r.peers).Close()
}

func (r *Raft) Follow() { peer.Named().Append(nil) }

func (r *Raft) Tail() { log.Append(nil) }
`,
	"raft/dot.go": `package raft

import . "example.com/s/peer"

var leader = New("l")

func (r *Raft) Lead() { leader.Append(nil) }
`,
	"raft/other.go": `package raft

func (r *Raft) Step() { leader.Append(nil) }
`,
	"raft/raft_test.go": `package raft_test

import (
	"testing"

	"example.com/s/raft"
	"example.com/s/store"
)

func TestRun(t *testing.T) {
	var r raft.Raft
	r.Run()
	store.Default.Append(nil)
}
`,
	// Conn implements peer.ReadCloser and, through what peer imports,
	// store.Reader: impl sorts before both, whose tables must stay until
	// impl's implements edges are added.
	"impl/impl.go": `package impl

import "example.com/s/peer"

var _ peer.ReadCloser = (*Conn)(nil)

type Conn struct{}

func (c *Conn) Read() []byte { return nil }

func (c *Conn) Close() error { return nil }
`,
	"raft/broken.go": "package raft\n\nfunc (r *Raft) Broken( {\n\tleader.Append(nil)\n",
	"raft/nopkg.go":  "hello\n",
}

// The streamed syntax-only extraction gives the graph the old one did,
// on a fixture whose packages resolve names in each other's declarations
// and on the basic tree, typed and not; on real trees in
// TestExtractSyntaxStreamsSameGraphLarge.
func TestExtractSyntaxStreamsSameGraph(t *testing.T) {
	checkSyntaxStreams(t, "fixture", writeTree(t, streamFixture))
	checkSyntaxStreams(t, "basic", filepath.Join(testdataDir, "basic"))
}

// TestExtractSyntaxStreamsSameGraphLarge is TestExtractSyntaxStreamsSameGraph
// on real trees: this repository, and the standard library with
// MEMCTL_INGEST_STD=1. Skipped under -race, where the repository took
// 40% of the time of the test it was part of (57 s); make test's non-race
// pass runs both trees.
func TestExtractSyntaxStreamsSameGraphLarge(t *testing.T) {
	if raceEnabled {
		t.Skip("real trees under -race: make test's non-race pass runs them")
	}
	checkSyntaxStreams(t, "the repository", "..")
	if os.Getenv("MEMCTL_INGEST_STD") != "" {
		checkSyntaxStreams(t, "std", filepath.Join(goroot(t), "src"))
	}
}

// checkSyntaxStreams compares the streamed syntax-only extraction of dir,
// in batches and one package at a time, with the whole one.
func checkSyntaxStreams(t *testing.T, name, dir string) {
	t.Helper()
	modes := []GoOptions{{SyntaxOnly: true}}
	if name == "fixture" || name == "basic" {
		modes = append(modes, GoOptions{}) // typed packages beside syntax-only ones
	}
	for _, opts := range modes {
		whole := renderGraph(extractWith(t, dir, opts, (*extractor).extractSyntaxWhole))
		streamed := extractWith(t, dir, opts, func(x *extractor) { x.extractSyntax(nil) })
		if diff := cmp.Diff(whole, renderGraph(streamed)); diff != "" {
			t.Errorf("%s, syntax-only %t: streamed graph differs (-whole +streamed):\n%s", name, opts.SyntaxOnly, diff)
		}
		// One package at a time: every package's declarations parsed
		// just before the first that reads them, released after the last.
		one := extractWith(t, dir, opts, func(x *extractor) { x.syntaxBatch = 1; x.extractSyntax(nil) })
		if diff := cmp.Diff(whole, renderGraph(one)); diff != "" {
			t.Errorf("%s, syntax-only %t: graph in batches of one package differs (-whole +streamed):\n%s", name, opts.SyntaxOnly, diff)
		}
		if name == "fixture" && opts.SyntaxOnly {
			checkStreamFixture(t, streamed)
			checkStreamFixture(t, one)
		}
	}
}

// checkStreamFixture checks, by hand, the calls of the fixture that
// resolve only through another package's declarations.
func checkStreamFixture(t *testing.T, g *Graph) {
	t.Helper()
	const (
		raftT   = "references sym:example.com/s/raft.Raft"
		appendM = "calls sym:example.com/s/store.Log.Append"
	)
	want := map[string][]string{
		"sym:example.com/s/raft.Raft.Run": {
			raftT,
			"calls sym:example.com/s/peer.Peer.Logs", // p ranges over r.peers, a []*peer.Peer
			appendM,                                  // Logs' result is a []*store.Log
			"calls sym:example.com/s/store.Reader.Read", // r.rc is a peer.ReadCloser, which embeds store.Reader
			"calls sym:example.com/s/peer.Peer.Close",   // peer.All is a []*Peer
			"calls sym:example.com/s/store.First",       // its result is a type parameter: no method
		},
		// Append is promoted from the *store.Log that peer.Peer embeds.
		"sym:example.com/s/raft.Raft.Follow": {raftT, "calls sym:example.com/s/peer.Named", appendM},
		// var log = store.Default, and var Default = NewLog().
		"sym:example.com/s/raft.Raft.Tail": {raftT, appendM},
		// var leader = New("l") resolves New through its file's dot import.
		"sym:example.com/s/raft.Raft.Lead": {raftT, appendM},
		// From another file, whose resolver does not have that import,
		// leader's type is unknown (both implementations' rule).
		"sym:example.com/s/raft.Raft.Step": {raftT},
		// b.Get's result is a *c.T, whose Next returns a *c.U.
		"sym:example.com/s/chain/a.Use": {
			"calls sym:example.com/s/chain/b.Get", "calls sym:example.com/s/chain/c.T.Next", "calls sym:example.com/s/chain/c.U.Close",
		},
	}
	got := callEdges(g, want)
	if diff := cmp.Diff(want, got, sortStrings); diff != "" {
		t.Errorf("fixture calls (-want +got):\n%s", diff)
	}
	var impls []string
	for _, e := range g.Edges() {
		if e.Rel == RelImplements {
			impls = append(impls, e.Src+" "+e.Dst)
		}
	}
	wantImpls := []string{
		"sym:example.com/s/impl.Conn sym:example.com/s/peer.ReadCloser", // Read through the embedded store.Reader
		"sym:example.com/s/impl.Conn sym:example.com/s/store.Reader",    // an interface of what peer imports
		"sym:example.com/s/store.Log sym:example.com/s/store.Reader",
	}
	if diff := cmp.Diff(wantImpls, impls, sortStrings); diff != "" {
		t.Errorf("fixture implements edges (-want +got):\n%s", diff)
	}
}

// TestSyntaxTablesReleased: extracting in batches lets a package's table
// go once no later package reaches it, keeping the tables of the packages
// finish adds implements edges for (and what they reach), and keeps
// every table when a package parsed once is reached from an earlier one.
func TestSyntaxTablesReleased(t *testing.T) {
	dir := writeTree(t, streamFixture)
	var x *extractor
	extractWith(t, dir, GoOptions{SyntaxOnly: true}, func(e *extractor) { x = e; e.syntaxBatch = 1; e.extractSyntax(nil) })
	var kept []string
	for p, tab := range x.tables {
		if !tab.released {
			kept = append(kept, p)
		}
	}
	if len(kept) != 0 {
		t.Errorf("tables kept after a syntax-only extraction in batches of one: %v, want none", kept)
	}

	// A package parsed once ("late") that an earlier one reaches through a
	// type-checked package's imports: every table stays.
	x = &extractor{tables: map[string]*table{
		"a": {imports: map[string]bool{"typed": true}}, "typed": {imports: map[string]bool{"z": true}}, "z": {},
	}}
	ips := []string{"a", "z"}
	at := map[string]int{"a": 0, "z": 1}
	imports := func(p string) []string { return sortedKeys(x.tables[p].imports) }
	spans := declSpans(ips, imports)
	if got := x.tableReleases(at, map[string]bool{}, spans, imports); got != nil {
		t.Errorf("tables released with a package parsed once reached before it: %v", got.ends)
	}
	// The same, z read twice (its declarations parsed before a's batch):
	// a's table and typed's go after a, z's after z.
	got := x.tableReleases(at, map[string]bool{"z": true}, spans, imports)
	if want := map[int][]string{0: {"a", "typed"}, 1: {"z"}}; got == nil || !reflect.DeepEqual(got.ends, want) {
		t.Errorf("table releases %v, want %v", got, want)
	}
	// A package not extracted here with a type read from syntax (finish
	// adds its implements edges): it and what it reaches stay.
	x.tables["mixed"] = &table{imports: map[string]bool{"z": true}}
	x.tables["mixed"].methods.set("T.M", 0)
	x.syntaxTypes.put(SymbolKey("mixed", "T"), 0)
	got = x.tableReleases(at, map[string]bool{"z": true}, spans, imports)
	if want := map[int][]string{0: {"a", "typed"}}; got == nil || !reflect.DeepEqual(got.ends, want) {
		t.Errorf("table releases with mixed kept %v, want %v", got, want)
	}
}

// The heads parseHeads keeps of every file read from syntax, until its
// package is extracted, share their package names and import paths: one
// copy of "fmt" for all the files that import it, not one a file (std×80:
// some 1.5 million imports).
func TestParseHeadsShareStrings(t *testing.T) {
	files := map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n"}
	for i := range 4 {
		files[fmt.Sprintf("p%d/f.go", i)] = "package p\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/q\"\n)\n\nvar _ = fmt.Sprint(q.X)\n"
	}
	tr, err := walkTree(writeTree(t, files), WalkOptions{}, func(name string) bool { return strings.HasSuffix(name, ".go") }, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	x := newExtractor(tr, GoOptions{})
	var sfs []*syntaxFile
	for _, f := range tr.Files {
		sfs = append(sfs, &syntaxFile{src: f})
	}
	x.parseHeads(sfs)
	if err := x.failedRead(); err != nil {
		t.Fatal(err)
	}
	first := sfs[0]
	for _, sf := range sfs {
		if sf.name != "p" || !slices.Equal(sf.imports, []string{"fmt", "example.com/m/q"}) {
			t.Fatalf("%s: head %q %q", sf.src.Rel, sf.name, sf.imports)
		}
		if unsafe.StringData(sf.name) != unsafe.StringData(first.name) {
			t.Errorf("%s: its package name is a copy of its own", sf.src.Rel)
		}
		for i, p := range sf.imports {
			if unsafe.StringData(p) != unsafe.StringData(first.imports[i]) {
				t.Errorf("%s: import %q is a copy of its own", sf.src.Rel, p)
			}
		}
	}
}
