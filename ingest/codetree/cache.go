package codetree

// The refresh cache (SPEC.md §9.10): a long-lived process that ingests one
// tree before each answer (the MCP server) keeps, between ingests, the
// parse of every tree-sitter file by content and the tree-sitter graph it
// last wrote. The next ingest then reads only the files whose stat
// changed, parses only contents it has not seen, resolves every file (the
// graph is the one a fresh ingest builds) and compares with the store only
// the nodes whose payload or out-edges differ from the last graph. Go
// likewise: an ingest.GoCache re-checks only the packages an edit affects,
// and a write of Go alone compares only what differs from the Go graph
// last written (memory only). A process that starts builds the cache with
// a full ingest, or reads the tree-sitter part from what the last one saved
// (cachefile.go).

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/memctl/memctl/lmdbstore"
)

// Cache is what one process keeps between ingests of one tree into one
// store. Ingests through one Cache run one at a time.
type Cache struct {
	mu     sync.Mutex
	parses *treesitter.Cache
	// last is what the last ingest through the cache left in the store:
	// nil when unknown (no ingest yet, or one that wrote no complete
	// tree-sitter graph).
	last *cachedGraph
	// deltas counts the ingests that compared only what changed.
	deltas int
	// fileSize is the size of the cache file last read or written (the
	// next one's, nearly: its buffer is allocated once).
	fileSize int
	// goc and lastGo are the Go share's (gocache.go).
	goc    *ingest.GoCache
	lastGo *cachedGraph
	// extra is the caller's own bytes, kept in the cache file (SetExtra),
	// guarded by extraMu alone: a caller reads and sets it from inside an
	// ingest, which holds mu (mu is taken before extraMu, never after).
	extraMu sync.Mutex
	extra   []byte
}

// Extra returns the bytes SetExtra gave the cache (or the cache file it
// was read from held): the caller's own, opaque here.
func (c *Cache) Extra() []byte {
	c.extraMu.Lock()
	defer c.extraMu.Unlock()
	return c.extra
}

// SetExtra makes b the caller's bytes the cache file keeps (freshness
// keeps its git memo there, so that a one-shot refresh tells a dirty
// tree without running git).
func (c *Cache) SetExtra(b []byte) {
	c.extraMu.Lock()
	defer c.extraMu.Unlock()
	c.extra = b
}

// cachedGraph is the tree-sitter share of the store as one ingest wrote it.
type cachedGraph struct {
	config string             // dir and options it was read with
	graph  *ingest.Graph      // every tree-sitter language's graph, with the directories of every file
	hashes map[string]string  // the stored tree hashes (storedHashes) after the write
	others []string           // paths of the file nodes of the other languages (Go)
	rev    lmdbstore.Revision // the revision of the write
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{parses: treesitter.NewCache(), goc: ingest.NewGoCache()} }

// Parses is the number of file contents whose parse the cache holds.
func (c *Cache) Parses() int { return c.parses.Len() }

// Deltas is the number of ingests through the cache that compared with
// the store only what changed since the graph it held.
func (c *Cache) Deltas() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deltas
}

// GoExtractions is the number of Go extractions through the cache that
// re-checked only what changed (incremental) and that listed and checked
// the whole tree (full).
func (c *Cache) GoExtractions() (incremental, full int) { return c.goc.Deltas(), c.goc.Fulls() }

// cacheConfig names what decides the graph of a tree besides its files.
func cacheConfig(dir string, o Options) string {
	return fmt.Sprintf("%s\x00%+v\x00%s\x00go=%t syntax=%t offline=%t", dir, o.Walk, strings.Join(o.Langs, ","), o.WithGo, o.SyntaxOnly, o.Offline)
}

// usable returns the last graph when it describes the store whose stored
// tree hashes are hashes, read with the same options.
func (c *Cache) usable(config string, hashes map[string]string) *cachedGraph {
	if c == nil || c.last == nil || c.last.config != config || !maps.Equal(c.last.hashes, hashes) {
		return nil
	}
	return c.last
}

// forgetIfEdited drops each last graph (tree-sitter, Go) when a revision
// after its write, up to the latest r sees, wrote a code key (a hand edit
// the graph does not know: only a full comparison repairs it) or cannot
// be read. The two are checked apart: their revisions differ when one
// share was written alone.
func (c *Cache) forgetIfEdited(r *lmdbstore.ReadTxn) {
	if c == nil {
		return
	}
	for _, g := range []**cachedGraph{&c.last, &c.lastGo} {
		if *g != nil && codeWrittenSince(r, (*g).rev, r.Revision()) {
			*g = nil
		}
	}
}

// remember records the graph written at rev (g after the write:
// directories of every file added) with the stored hashes after it;
// others are the paths of the stored files of the languages g does not
// own (Go).
func (c *Cache) remember(config string, g *ingest.Graph, others []string, hashes map[string]string, rev lmdbstore.Revision) {
	c.last = &cachedGraph{config: config, graph: g, hashes: hashes, others: others, rev: rev}
}

// otherFiles are the paths of the files of g and of stored (the stored
// files of the languages a write did not replace) that no tree-sitter
// language owns.
func otherFiles(g *ingest.Graph, stored []string) []string {
	others := slices.Clone(stored)
	g.EachNode(func(n ingest.Node) {
		if n.Type == ingest.TypeFile && !slices.Contains(treesitter.TreeSitterLanguages, fileLang(n)) {
			others = append(others, strings.TrimPrefix(n.Key, "file:"))
		}
	})
	slices.Sort(others)
	return others
}

// fileLang is the language of a file node of an ingest graph.
func fileLang(n ingest.Node) string {
	return ingest.OwnerOf(lmdbstore.Node{Key: n.Key, Payload: n.Payload})
}

// usableGo returns the Go graph the cache last wrote when the store's
// tree hashes are still those it left.
func (c *Cache) usableGo(config string, hashes map[string]string) *cachedGraph {
	if c == nil || c.lastGo == nil || c.lastGo.config != config || !maps.Equal(c.lastGo.hashes, hashes) {
		return nil
	}
	return c.lastGo
}

// rememberGo records, after a write that changed the store, the Go graph
// written when Go alone was (goOnly: g is the Go graph, the directories of
// every file added by the write). others are the tree-sitter files whose
// directories the write kept: lastGo's when it wrote a delta against
// lastGo, the write's OtherFiles otherwise. After a write of tree-sitter
// languages alone (tsOnly, g their graph) with the same tree-sitter files,
// lastGo (usable before the write) stands with the new tree hashes;
// otherwise it is forgotten. It reports whether the tree-sitter graph
// last (usable before the write) stands likewise: Go alone was written,
// with the same Go files. A graph that stands is the store's share as of
// rev, the write's revision, only when no other code key was written
// since the read (quiet); otherwise it is forgotten.
func (c *Cache) rememberGo(config string, g *ingest.Graph, goOnly, tsOnly, goDelta, quiet bool, lastGo *cachedGraph,
	otherFiles []string, after map[string]string, last *cachedGraph, rev lmdbstore.Revision) bool {
	c.lastGo = nil
	if tsOnly && quiet && lastGo != nil && slices.Equal(fileNodes(g), lastGo.others) {
		lastGo.hashes, lastGo.rev = after, rev
		c.lastGo = lastGo
		return false
	}
	if !goOnly {
		return false
	}
	if goDelta {
		c.deltas++
	}
	others := otherFiles
	if goDelta {
		others = lastGo.others
	}
	c.lastGo = &cachedGraph{config: config, graph: g, hashes: after, others: others, rev: rev}
	if !quiet || last == nil || c.last != last || !slices.Equal(fileNodes(g), last.others) {
		return false
	}
	last.hashes, last.rev = after, rev
	return true
}

// fileNodes are the paths of the file nodes of g, sorted.
func fileNodes(g *ingest.Graph) []string {
	var out []string
	g.EachNode(func(n ingest.Node) {
		if n.Type == ingest.TypeFile {
			out = append(out, strings.TrimPrefix(n.Key, "file:"))
		}
	})
	slices.Sort(out)
	return out
}
