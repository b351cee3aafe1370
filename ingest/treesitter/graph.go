package treesitter

import (
	"runtime"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// builder adds the nodes and edges of the front-ends to one graph and
// keeps what the tests edges and the summary need.
type builder struct {
	g          *ingest.Graph
	unresolved map[string]int    // language → calls dropped
	fileMissed map[string]int    // file key → calls dropped in it
	fileLang   map[string]string // file key → language
	symTest    map[string]bool   // symbol key → test code
	symFile    map[string]string // symbol key → declaring file (first)
	tests      []testEdge
	// pending are file and symbol nodes whose payloads finish marshals
	// (on all CPUs: canonical JSON is a large part of the serial work).
	pending     []pendingNode
	pendingKeys map[string]bool
	// cache, when set, holds the payloads of the last extraction with
	// their JSON: an equal payload is not marshalled again.
	cache *Cache
	// pyDeps are the names each Python module's resolution read, by file
	// key (python_reuse.go), kept with the payloads.
	pyDeps map[string][]string
}

type pendingNode struct {
	key, typ string
	payload  any
}

// testEdge is a call made by test code: a tests edge once the target is
// known to be non-test code of the tree.
type testEdge struct {
	src    string // the test symbol, or the test file for module-level test code
	file   string // rel path of the test file
	target string // key of the called symbol
}

func newBuilder(g *ingest.Graph) *builder {
	return &builder{g: g, unresolved: make(map[string]int), fileMissed: make(map[string]int), fileLang: make(map[string]string),
		symTest: make(map[string]bool), symFile: make(map[string]string), pendingKeys: make(map[string]bool)}
}

// tag is the key tag of a language ("py", "ts", …).
func tag(lang string) string { return ingest.LangTags[lang] }

// symKey is "sym:<tag>:<name>".
func symKey(lang, name string) string { return "sym:" + tag(lang) + ":" + name }

// pkgKey is "pkg:<tag>:<name>".
func pkgKey(lang, name string) string { return "pkg:" + tag(lang) + ":" + name }

// addFile adds the node of a source file, its directories, and the
// package → file edge when pkg is not "".
func (b *builder) addFile(f *parsedFile, module, pkg string, test bool) {
	key := ingest.FileKey(f.Rel)
	b.fileLang[key] = f.Lang
	b.add(key, ingest.TypeFile, ingest.FilePayload{
		Path: f.Rel, Lang: f.Lang, Package: module, Hash: f.Hash, Bytes: f.Bytes, Lines: f.Lines,
		Test: test, ParseError: f.ParseErr, Terms: f.Terms,
	})
	ingest.AddDirs(b.g, f.Rel)
	if pkg != "" {
		b.edge(pkg, ingest.RelContains, key)
	}
}

// addPackage adds a package node of the tree (or an external one when
// dir is "").
func (b *builder) addPackage(lang, key, importPath, name, dir string) {
	if b.g.HasNode(key) {
		return
	}
	b.g.AddNode(ingest.Node{Key: key, Type: ingest.TypePackage, Payload: ingest.MustJSON(ingest.PackagePayload{
		ImportPath: importPath, Name: name, Dir: dir, External: dir == "", Lang: lang,
	})})
}

// addSymbol adds a symbol declared in file rel with its defines and
// contains edges. A symbol declared again keeps its first payload; the
// second file still defines it.
func (b *builder) addSymbol(key, rel string, p ingest.SymbolPayload) {
	fileKey := ingest.FileKey(rel)
	b.edge(fileKey, ingest.RelDefines, key)
	b.edge(fileKey, ingest.RelContains, key)
	if b.pendingKeys[key] || b.g.HasNode(key) {
		return
	}
	p.Path = rel
	b.add(key, ingest.TypeSymbol, p)
	b.symTest[key] = p.Test
	b.symFile[key] = rel
}

// add queues a node whose payload flush marshals.
func (b *builder) add(key, typ string, payload any) {
	b.pending = append(b.pending, pendingNode{key: key, typ: typ, payload: payload})
	b.pendingKeys[key] = true
}

// flush marshals the queued payloads in parallel and adds their nodes; a
// file's payload gets its unresolved count then, once resolution is done.
func (b *builder) flush() {
	nodes := make([]ingest.Node, len(b.pending))
	last := b.cache.lastPayloads()
	workers := runtime.GOMAXPROCS(0)
	scratch := make([][]byte, workers)
	parallel(workers, len(nodes), func(w, i int) {
		p := &b.pending[i]
		if fp, ok := p.payload.(ingest.FilePayload); ok {
			fp.Unresolved = b.fileMissed[p.key]
			p.payload = fp
		}
		// An equal payload marshals to the same JSON (a file's terms are
		// the cached parse's map: equal at once when the file is).
		if m, ok := last[p.key]; ok && m.equal(p.payload, &scratch[w]) {
			nodes[i] = ingest.Node{Key: p.key, Type: p.typ, Payload: m.json}
			return
		}
		nodes[i] = ingest.Node{Key: p.key, Type: p.typ, Payload: ingest.MustJSON(p.payload)}
	})
	b.cache.keepPayloads(b.pending, nodes, b.pyDeps)
	for _, n := range nodes {
		b.g.AddNode(n)
	}
	b.pending, b.pendingKeys = nil, make(map[string]bool)
}

// edge adds an edge of the relation's weight; self-loops are left out.
func (b *builder) edge(src, rel, dst string) {
	if src == dst || src == "" || dst == "" {
		return
	}
	b.g.AddEdge(ingest.Edge{Src: src, Rel: rel, Dst: dst})
}

// unresolvedIn counts a call of file rel that resolved to nothing: in the
// file's payload (SPEC §9.3 unresolved) and in its language's summary,
// which is the sum over its files.
func (b *builder) unresolvedIn(rel string) {
	key := ingest.FileKey(rel)
	b.fileMissed[key]++
	b.unresolved[b.fileLang[key]]++
}

// test records a call made by test code.
func (b *builder) test(src, file, target string) {
	b.tests = append(b.tests, testEdge{src: src, file: file, target: target})
}

// finish adds the tests edges into non-test code (test symbol or file →
// symbol, test file → the file declaring the symbol) and drops edges
// whose endpoints are not nodes.
func (b *builder) finish() {
	b.flush()
	for _, te := range b.tests {
		if !b.g.HasNode(te.target) || b.symTest[te.target] {
			continue
		}
		b.edge(te.src, ingest.RelTests, te.target)
		if tf := b.symFile[te.target]; tf != "" && tf != te.file {
			b.edge(ingest.FileKey(te.file), ingest.RelTests, ingest.FileKey(tf))
		}
	}
	b.g.DropDangling()
}

// ownerOf is the language of a node key this builder added ("" for
// directories and ingest: nodes).
func (b *builder) ownerOf(key string) string {
	if l, ok := b.fileLang[key]; ok {
		return l
	}
	for _, prefix := range []string{"sym:", "pkg:"} {
		if rest, ok := strings.CutPrefix(key, prefix); ok {
			if i := strings.IndexByte(rest, ':'); i > 0 {
				for _, l := range TreeSitterLanguages {
					if tag(l) == rest[:i] {
						return l
					}
				}
			}
		}
	}
	return ""
}

// pairTestFiles adds tests edges from test files to the file beside them
// that they are named after (test_x.py → x.py, x.test.ts → x.ts).
func (b *builder) pairTestFiles(pairs map[string]string) {
	keys := make([]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.edge(ingest.FileKey(k), ingest.RelTests, ingest.FileKey(pairs[k]))
	}
}
