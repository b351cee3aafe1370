package ingest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// Node types written by ingest (lmdbstore.Node.Type).
const (
	TypeDirectory = "directory"
	TypePackage   = "package"
	TypeFile      = "file"
	TypeSymbol    = "symbol"
	TypeIngest    = "ingest"
)

// Relations written by ingest, named by the roles vocabulary. contains
// and co_changed are not among the store's built-in relations: the writer
// registers them on first use, as their rows there define them.
const (
	RelContains   = roles.RelContains
	RelDefines    = roles.RelDefines
	RelImports    = roles.RelImports
	RelCalls      = roles.RelCalls
	RelReferences = roles.RelReferences
	RelImplements = roles.RelImplements
	RelTests      = roles.RelTests
	RelCoChanged  = roles.RelCoChanged
)

// GoRelations are the relations a code ingest owns: every relation of
// the structure and usage roles, in the vocabulary's order.
var GoRelations = roles.WithRole(roles.Structure, roles.Usage)

// Symbol kinds (SymbolPayload.Kind). Go uses the first six; the
// tree-sitter front-ends (package ingest/treesitter) add the others.
const (
	KindFunc      = "func"
	KindMethod    = "method"
	KindType      = "type"
	KindInterface = "interface"
	KindConst     = "const"
	KindVar       = "var"
	KindClass     = "class"
	KindEnum      = "enum"
	KindStruct    = "struct"
	KindUnion     = "union"
	KindTrait     = "trait"
	KindModule    = "module"
	KindNamespace = "namespace"
)

// Languages an ingest owns a share of the graph for (SPEC.md §9.5).
const (
	LangGo         = "go"
	LangPython     = "python"
	LangTypeScript = "typescript"
	LangJavaScript = "javascript"
	LangRust       = "rust"
)

// Languages lists every language, in the order summaries name them.
var Languages = []string{LangGo, LangPython, LangTypeScript, LangJavaScript, LangRust}

// LangTags are the tags that start the sym: and pkg: keys of a language
// other than Go ("sym:py:…"): Go keys never hold a ':' after the prefix,
// so the tag says which ingest owns the node.
var LangTags = map[string]string{LangPython: "py", LangTypeScript: "ts", LangJavaScript: "js", LangRust: "rs"}

// IngestKey is the node recording the state of the last ingest of lang
// ("ingest:go", "ingest:python", …).
func IngestKey(lang string) string { return "ingest:" + lang }

// Canonical keys (SPEC.md §9). Paths are slash-separated and relative to
// the ingested directory; the root directory is ".".

// DirKey is the key of a directory.
func DirKey(rel string) string { return "dir:" + rel }

// PackageKey is the key of a package (its import path; an external test
// package is "<import path>_test").
func PackageKey(importPath string) string { return "pkg:" + importPath }

// FileKey is the key of a file.
func FileKey(rel string) string { return "file:" + rel }

// SymbolKey is the key of a package-level func, type, const or var.
func SymbolKey(importPath, name string) string { return "sym:" + importPath + "." + name }

// MethodKey is the key of a method (concrete or of an interface); recv is
// the receiver's type name without pointer or type parameters.
func MethodKey(importPath, recv, name string) string {
	return "sym:" + importPath + "." + recv + "." + name
}

// InitKey is the key of the n-th (1-based) func init of a file, which may
// have several.
func InitKey(importPath, fileBase string, n int) string {
	return "sym:" + importPath + ".init@" + fileBase + "#" + strconv.Itoa(n)
}

// IngestGoKey is the node recording the state of the last `ingest go`.
const IngestGoKey = "ingest:go"

// Node is one node of an extracted graph.
type Node struct {
	Key     string
	Type    string
	Payload json.RawMessage // compact JSON object
}

// Edge is one edge of an extracted graph. Weight 0 means the relation's
// default weight.
type Edge struct {
	Src, Rel, Dst string
	Weight        float32
}

// Graph is an extracted graph: a set of nodes and a set of edges.
type Graph struct {
	nodes map[string]Node
	edges map[edgeKey]float32
	// sent are the nodes sent to a stream (markSent): nodes of the graph
	// with nothing more kept of them than a hash of their key and a tag
	// the sender gave (sentTag). The graph answers for them (HasNode,
	// Node, NumNodes) but does not list them (EachNode, Nodes).
	sent hashSet
	// scoped holds, by package, the symbols sent while scope named it
	// (markSent): only the merges of the package and of its tests ask
	// about them. The extractor drops a syntax-only package's set after
	// those (dropScope) and parks a type-checked one once its module is
	// merged (parkScope, sentpark.go: parked holds where each is), so that
	// the sent symbols do not add up to the tree's. gone counts the nodes
	// of the dropped sets.
	scoped map[string]*hashSet
	parked map[string]parkedSet
	park   *sentPark
	scope  string
	gone   int
}

type edgeKey struct{ src, rel, dst string }

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{nodes: make(map[string]Node), edges: make(map[edgeKey]float32)}
}

// NewGraphSized returns an empty graph with room for about that many
// nodes and edges.
func NewGraphSized(nodes, edges int) *Graph {
	return &Graph{nodes: make(map[string]Node, nodes), edges: make(map[edgeKey]float32, edges)}
}

// AddNode adds or replaces a node.
func (g *Graph) AddNode(n Node) {
	g.sent.del(n.Key)
	if s := g.scopeOf(n.Key); s != nil {
		s.del(n.Key)
	}
	g.nodes[n.Key] = n
}

// HasNode reports whether key is a node of g.
func (g *Graph) HasNode(key string) bool {
	if _, ok := g.nodes[key]; ok {
		return true
	}
	_, ok := g.sentTag(key)
	return ok
}

// sentTag is the tag markSent kept with node key, if the node was sent.
func (g *Graph) sentTag(key string) (uint32, bool) {
	if t, ok := g.sent.get(key); ok {
		return t, ok
	}
	if s := g.scopeOf(key); s != nil {
		return s.get(key)
	}
	return 0, false
}

// setScope makes markSent keep the symbols sent from now on in package
// ip's own set ("" : in the graph's, for good).
func (g *Graph) setScope(ip string) {
	g.scope = ip
	g.unpark(ip)
	if ip != "" && g.scoped[ip] == nil {
		if g.scoped == nil {
			g.scoped = make(map[string]*hashSet)
		}
		g.scoped[ip] = &hashSet{}
	}
}

// dropScope forgets the symbols sent in package ip's scope: the graph
// still counts them (NumNodes), and answers for them no more.
func (g *Graph) dropScope(ip string) {
	if s := g.scoped[ip]; s != nil {
		g.gone += s.len()
		delete(g.scoped, ip)
	}
	if ps, ok := g.parked[ip]; ok {
		g.gone += ps.n
		delete(g.parked, ip)
	}
}

// Node returns the node with key; a node sent to a stream has only its
// key.
func (g *Graph) Node(key string) (Node, bool) {
	if n, ok := g.nodes[key]; ok {
		return n, true
	}
	if _, ok := g.sentTag(key); ok {
		return Node{Key: key}, true
	}
	return Node{}, false
}

// markSent keeps of node key (a node of g) only its key, and tag: a
// symbol in the scope's set while there is one (setScope).
func (g *Graph) markSent(key string, tag uint32) {
	delete(g.nodes, key)
	if sc := g.scope; sc != "" && len(key) > 4+len(sc) && key[:4] == "sym:" && key[4:4+len(sc)] == sc && key[4+len(sc)] == '.' { // one of symScope's
		g.scoped[g.scope].put(key, tag)
		return
	}
	g.sent.put(key, tag)
}

// RelationWeights are the weights `ingest go` gives its edges. The engines
// multiply a signal by the weight of each edge it crosses (and by their
// decay per hop), so structure (what contains or declares what) carries
// it whole and every other relation halves it: from a symbol, its file,
// package and sibling files then rank above the files of the code it
// merely calls or mentions.
var RelationWeights = map[string]float32{
	RelContains:   1,
	RelDefines:    1,
	RelCalls:      0.5,
	RelImplements: 0.5,
	RelTests:      0.5,
	RelImports:    0.5,
	RelReferences: 0.5,
}

// AddEdge adds an edge; adding it again keeps the larger weight. Weight 0
// is the relation's weight in RelationWeights (or its default).
func (g *Graph) AddEdge(e Edge) {
	if e.Weight == 0 {
		e.Weight = RelationWeights[e.Rel]
	}
	k := edgeKey{e.Src, e.Rel, e.Dst}
	w, ok := g.edges[k]
	if !ok {
		// A new edge keeps its endpoints' node keys rather than its own
		// copies when the nodes are there: most endpoints are, and the
		// graph of a large tree then holds each key once.
		k.src, k.dst = g.intern(k.src), g.intern(k.dst)
	}
	if !ok || e.Weight > w {
		g.edges[k] = e.Weight
	}
}

// intern returns the graph's own copy of key when key is a node of g.
func (g *Graph) intern(key string) string {
	if n, ok := g.nodes[key]; ok {
		return n.Key
	}
	return key
}

// NumNodes and NumEdges count the graph.
func (g *Graph) NumNodes() int {
	n := len(g.nodes) + g.sent.len() + g.gone
	for _, s := range g.scoped {
		n += s.len()
	}
	for _, ps := range g.parked {
		n += ps.n
	}
	return n
}
func (g *Graph) NumEdges() int { return len(g.edges) }

// Nodes returns the nodes ordered by key (those held: not the ones sent
// to a stream).
func (g *Graph) Nodes() []Node {
	out := make([]Node, 0, g.NumNodes())
	g.EachNode(func(n Node) { out = append(out, n) })
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// EachNode calls fn for every node the graph holds (not the ones sent to
// a stream, of which it keeps no key), in no particular order.
func (g *Graph) EachNode(fn func(Node)) {
	for _, n := range g.nodes {
		fn(n)
	}
}

// EachEdge calls fn for every edge, in no particular order.
func (g *Graph) EachEdge(fn func(Edge)) {
	for k, w := range g.edges {
		fn(Edge{Src: k.src, Rel: k.rel, Dst: k.dst, Weight: w})
	}
}

// Edges returns the edges ordered by (src, rel, dst).
func (g *Graph) Edges() []Edge {
	out := make([]Edge, 0, len(g.edges))
	for k, w := range g.edges {
		out = append(out, Edge{Src: k.src, Rel: k.rel, Dst: k.dst, Weight: w})
	}
	slices.SortFunc(out, compareEdges)
	return out
}

func compareEdges(a, b Edge) int {
	if c := cmp.Compare(a.Src, b.Src); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Rel, b.Rel); c != 0 {
		return c
	}
	return cmp.Compare(a.Dst, b.Dst)
}

// AddDirs adds the directory nodes above the file rel (up to ".") and
// their contains edges: directory → subdirectory, directory → file.
func AddDirs(g *Graph, rel string) {
	child := FileKey(rel)
	for dir := path.Dir(rel); ; dir = path.Dir(dir) {
		key := DirKey(dir)
		g.AddEdge(Edge{Src: key, Rel: RelContains, Dst: child})
		if g.HasNode(key) {
			return
		}
		g.AddNode(Node{Key: key, Type: TypeDirectory, Payload: mustJSON(DirPayload{Path: dir})})
		if dir == "." {
			return
		}
		child = key
	}
}

// DropDangling removes the edges whose endpoints are not both nodes of g.
func (g *Graph) DropDangling() { g.dropDangling() }

// dropDangling removes edges whose endpoints are not nodes of g (calls to
// code outside the tree, for instance).
func (g *Graph) dropDangling() {
	for k := range g.edges {
		if !g.HasNode(k.src) || !g.HasNode(k.dst) {
			delete(g.edges, k)
		}
	}
}

// Payloads. Field order is the JSON order; every payload is a compact JSON
// object and never holds the time of the ingest itself.

// DirPayload is the payload of a directory node.
type DirPayload struct {
	Path string `json:"path"`
}

// PackagePayload is the payload of a package node.
type PackagePayload struct {
	ImportPath string `json:"import_path"`
	Name       string `json:"name,omitempty"`
	Dir        string `json:"dir,omitempty"`
	// Mode is "typed" when the package was type-checked, "syntax" when only
	// parsed. Empty for external packages.
	Mode string `json:"mode,omitempty"`
	// External marks a package outside the tree that a file imports.
	External bool `json:"external,omitempty"`
	// Lang is set for the packages of languages other than Go.
	Lang string `json:"lang,omitempty"`
}

// FilePayload is the payload of a file node. The Go fields belong to
// `ingest go`, Git to `ingest git`.
type FilePayload struct {
	Path string `json:"path"`
	// Lang is the language of a file another ingest than `ingest go`
	// wrote; empty for Go files.
	Lang       string `json:"lang,omitempty"`
	Package    string `json:"package,omitempty"`
	Hash       string `json:"hash,omitempty"`
	Bytes      int    `json:"bytes,omitempty"`
	Lines      int    `json:"lines,omitempty"`
	Test       bool   `json:"test,omitempty"`
	Mode       string `json:"mode,omitempty"`
	ParseError string `json:"parse_error,omitempty"`
	// Unresolved counts the calls of a file extracted from syntax that
	// resolved to no symbol but might call code of the tree (SPEC §9.3).
	Unresolved int `json:"unresolved,omitempty"`
	// Terms is the file's vocabulary (FileTerms): what the engines'
	// lexical similarity compares.
	Terms map[string]int `json:"terms,omitempty"`
	// Precise names the SCIP indexer whose index gave the file's calls,
	// references and implements (`ingest code --precise`, SPEC §9.12);
	// Unresolved is then 0.
	Precise string          `json:"precise,omitempty"`
	Git     json.RawMessage `json:"git,omitempty"`
}

// GitPayload is the "git" field of a file payload.
type GitPayload struct {
	Changes     int    `json:"changes"`
	FirstChange string `json:"first_change"`
	LastChange  string `json:"last_change"`
	LastCommit  string `json:"last_commit"`
}

// SymbolPayload is the payload of a symbol node.
type SymbolPayload struct {
	Package   string `json:"package"`
	Name      string `json:"name"`
	Recv      string `json:"recv,omitempty"`
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	LineStart int    `json:"line_start"`
	LineEnd   int    `json:"line_end"`
	Exported  bool   `json:"exported,omitempty"`
	Test      bool   `json:"test,omitempty"`
}

// LangIngestPayload is the payload of the ingest:<lang> node of a language
// other than Go.
type LangIngestPayload struct {
	Lang     string `json:"lang"`
	Files    int    `json:"files"`
	TreeHash string `json:"tree_hash"`
	// Precise names the SCIP indexer the language was resolved by
	// (SPEC §9.12); "" when it was read from syntax.
	Precise string `json:"precise,omitempty"`
}

// MustJSON marshals a payload struct (which always marshals).
func MustJSON(v any) json.RawMessage { return mustJSON(v) }

// IngestPayload is the payload of the ingest:go node.
type IngestPayload struct {
	Module    string `json:"module"`
	GoVersion string `json:"go_version"`
	Mode      string `json:"mode"`
	Files     int    `json:"files"`
	// Fallbacks counts the packages extracted from syntax although
	// type-checking was asked for (GoResult.Fallbacks). While there are
	// some, the next ingest re-reads the tree even if its hash is
	// unchanged: the module cache may have been filled since.
	Fallbacks int    `json:"fallbacks,omitempty"`
	TreeHash  string `json:"tree_hash"`
	// Precise: as LangIngestPayload's.
	Precise string `json:"precise,omitempty"`
}

// mustJSON marshals a payload struct into the store's canonical form
// (lmdbstore.CanonicalPayload), so the payloads ingest wants compare byte
// for byte with the ones it stored.
func mustJSON(v any) json.RawMessage {
	var buf [256]byte // most payloads fit: one exact allocation each
	switch p := v.(type) {
	case SymbolPayload:
		return bytes.Clone(appendSymbolPayload(buf[:0], &p))
	case FilePayload:
		if b, ok := appendFilePayload(buf[:0], &p); ok {
			return bytes.Clone(b)
		}
	}
	return marshalCanonical(v)
}

// marshalCanonical is mustJSON by reflection: json.Marshal, then the
// store's canonical form.
func marshalCanonical(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err == nil {
		b, err = lmdbstore.CanonicalPayload(b)
	}
	if err != nil {
		panic(err) // payload structs always marshal, into valid JSON
	}
	return b
}
