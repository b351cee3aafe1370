package codetree

// The refresh cache file (SPEC.md §9.10 "fresh.cache"): what a Cache holds,
// written beside the store so that the next process — a one-shot
// `memctl context`, `impact`… — starts where the last one stopped instead
// of parsing every file and comparing the whole tree-sitter share.
//
//	magic "MEMCTLRC" (8) ‖ version u8 ‖ str build ‖ str layout ‖ body
//	‖ crc u32 LE (CRC-32C of everything before)
//	body = str config ‖ uvarint rev ‖ hashes ‖ nodes ‖ edges ‖ others
//	       ‖ parses (treesitter.AppendParses)
//	       ‖ payloads (treesitter.AppendPayloads: JSON from nodes)
//	       ‖ str extra (the caller's own bytes: SetExtra)
//
// body is in plaincodec's encoding: hashes map[string]string (the stored
// tree hashes after the write, by language), nodes []ingest.Node and
// edges []ingest.Edge (the graph written, directories included), others
// []string (the paths of the other languages' file nodes). rev is the
// revision of that write, 0 with no graph (nodes, edges, others nil).
// build names the binary (Go version, executable path, size and mtime):
// a parse depends on the parser's code, which no version number follows
// exactly. layout names the encodings (plaincodec shapes and every
// tree-sitter language's rules version).
//
// A file is a cache, never the truth: one that is missing, short,
// damaged, of another version, build, layout or config is ignored (the
// process starts empty); a graph it holds is used only while the store's
// tree hashes are those of the file and no revision since rev wrote a
// code key (usable, codeWrittenSince). This file encodes and decodes;
// freshness reads and writes the file (a temporary file and a rename,
// never synced: a torn file fails its checksum).

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"reflect"
	"runtime"
	"strings"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/treesitter"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/plaincodec"
)

const (
	cacheMagic = "MEMCTLRC"
	// cacheVersion 4: the layout above; 3 had no names read by the
	// Python resolutions; 2 wrote each payload's value without its
	// length; 1 had no extra.
	cacheVersion = 4
)

// ErrCacheFile: the refresh cache file cannot be used (see the error's
// text); the cache starts empty.
var ErrCacheFile = errors.New("codetree: refresh cache file not usable")

// fileGraph is the graph part of the body, written and read a part at a
// time (graphHead, then each node and edge: no slice of them is made) in
// the encoding of the whole.
type fileGraph struct {
	Config string
	Rev    uint64
	Hashes map[string]string
	Nodes  []ingest.Node
	Edges  []ingest.Edge
	Others []string
}

// graphHead is fileGraph's first fields.
type graphHead struct {
	Config string
	Rev    uint64
	Hashes map[string]string
}

var (
	graphCodec  = plaincodec.MustNew(reflect.TypeFor[fileGraph]())
	headCodec   = plaincodec.MustNew(reflect.TypeFor[graphHead]())
	nodeCodec   = plaincodec.MustNew(reflect.TypeFor[ingest.Node]())
	edgeCodec   = plaincodec.MustNew(reflect.TypeFor[ingest.Edge]())
	othersCodec = plaincodec.MustNew(reflect.TypeFor[[]string]())
	cacheLayout = graphCodec.Shape() + " " + treesitter.ParsesLayout()
	castagnoli  = crc32.MakeTable(crc32.Castagnoli)
)

// appendGraph appends the encoding of fileGraph for l (nil: no graph,
// every field zero), as graphCodec would.
func appendGraph(b []byte, l *cachedGraph) []byte {
	if l == nil {
		return graphCodec.Append(b, fileGraph{})
	}
	b = headCodec.Append(b, graphHead{Config: l.config, Rev: uint64(l.rev), Hashes: l.hashes})
	var n ingest.Node
	b = binary.AppendUvarint(b, uint64(l.graph.NumNodes())+1)
	l.graph.EachNode(func(x ingest.Node) {
		n = x
		b = nodeCodec.AppendPtr(b, &n)
	})
	var e ingest.Edge
	b = binary.AppendUvarint(b, uint64(l.graph.NumEdges())+1)
	l.graph.EachEdge(func(x ingest.Edge) {
		e = x
		b = edgeCodec.AppendPtr(b, &e)
	})
	return othersCodec.Append(b, l.others)
}

// decodeGraph reads what appendGraph wrote: the head, and the graph with
// the other languages' paths (nodes and edges added to the graph as they
// are read).
func decodeGraph(d *plaincodec.Decoder) (graphHead, *ingest.Graph, []string) {
	var h graphHead
	headCodec.DecodeInto(d, &h)
	nodes := d.Count() // -1: nil
	// Edges come after the nodes: sized by an estimate (trees have about
	// twice as many edges as nodes), never a limit.
	g := ingest.NewGraphSized(max(nodes, 0), 2*max(nodes, 0))
	var n ingest.Node
	for i := 0; i < nodes && d.Err() == nil; i++ {
		n = ingest.Node{}
		nodeCodec.DecodeInto(d, &n)
		g.AddNode(n)
	}
	edges := d.Count()
	var e ingest.Edge
	for i := 0; i < edges && d.Err() == nil; i++ {
		e = ingest.Edge{}
		edgeCodec.DecodeInto(d, &e)
		g.AddEdge(e)
	}
	var others []string
	othersCodec.DecodeInto(d, &others)
	return h, g, others
}

// buildID names the running binary: its Go version and the path, size
// and mtime of its executable ("" when unknown: no file is then read or
// written).
func buildID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %s %d %d", runtime.Version(), exe, fi.Size(), fi.ModTime().UnixNano())
}

// encodeFile is the cache file of c (held under c.mu).
func (c *Cache) encodeFile(build string) []byte {
	b := make([]byte, 0, c.fileSize+c.fileSize/8+4096)
	b = append(b, cacheMagic...)
	b = append(b, cacheVersion)
	b = plaincodec.AppendString(b, build)
	b = plaincodec.AppendString(b, cacheLayout)
	b = appendGraph(b, c.last)
	b = c.parses.AppendParses(b)
	b = c.parses.AppendPayloads(b, func(key string) json.RawMessage {
		if c.last == nil {
			return nil
		}
		n, _ := c.last.graph.Node(key)
		return n.Payload
	})
	c.extraMu.Lock()
	b = plaincodec.AppendString(b, string(c.extra))
	c.extraMu.Unlock()
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeCacheFile reads a cache file written by a binary named build.
func decodeCacheFile(b []byte, build string) (*Cache, error) {
	if len(b) < len(cacheMagic)+1+4 || string(b[:len(cacheMagic)]) != cacheMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrCacheFile)
	}
	if v := b[len(cacheMagic)]; v != cacheVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCacheFile, v, cacheVersion)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCacheFile)
	}
	d := plaincodec.NewSharedDecoder(body[len(cacheMagic)+1:])
	if got := d.String(); got != build {
		return nil, fmt.Errorf("%w: written by another build (%q)", ErrCacheFile, got)
	}
	if got := d.String(); got != cacheLayout {
		return nil, fmt.Errorf("%w: layout %q, want %q", ErrCacheFile, got, cacheLayout)
	}
	h, g, others := decodeGraph(d)
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("%w: graph: %v", ErrCacheFile, err)
	}
	parses, err := treesitter.DecodeParses(d)
	if err != nil {
		return nil, fmt.Errorf("%w: parses: %v", ErrCacheFile, err)
	}
	c := &Cache{parses: parses, fileSize: len(b)}
	if h.Rev != 0 {
		c.last = &cachedGraph{config: h.Config, graph: g, hashes: h.Hashes, others: others,
			rev: lmdbstore.Revision(h.Rev)}
	}
	err = parses.DecodePayloads(d, func(key string) (json.RawMessage, bool) {
		n, ok := g.Node(key)
		return n.Payload, ok
	})
	if err == nil {
		c.extra = []byte(d.String())
		err = d.Finish()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: payloads: %v", ErrCacheFile, err)
	}
	return c, nil
}

// MarshalFile is the cache file of c (ErrCacheFile when the running
// binary cannot be named: no file is then written).
func (c *Cache) MarshalFile() ([]byte, error) {
	build := buildID()
	if build == "" {
		return nil, fmt.Errorf("%w: executable unknown", ErrCacheFile)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.encodeFile(build)
	c.fileSize = len(b)
	return b, nil
}

// UnmarshalCache returns the cache a file's bytes b hold, or — with an
// error wrapping ErrCacheFile saying why — an empty one when b is not
// usable by this binary. Either way the cache is usable. The cache keeps
// slices of b, which must not change.
func UnmarshalCache(b []byte) (*Cache, error) {
	build := buildID()
	if build == "" {
		return NewCache(), fmt.Errorf("%w: executable unknown", ErrCacheFile)
	}
	c, err := decodeCacheFile(b, build)
	if err != nil {
		return NewCache(), err
	}
	return c, nil
}

// Adopt makes c, a cache no ingest has filled yet (a long-lived process
// that starts), hold what from holds (a cache UnmarshalCache read, not
// used after): its parses, payloads and graph, the graph still checked
// against the store as any other (usable, forgetIfEdited). It reports
// whether it did.
func (c *Cache) Adopt(from *Cache) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil || !c.parses.Adopt(from.parses) {
		return false
	}
	c.last, c.fileSize = from.last, from.fileSize
	return true
}

// maxRevisionScan bounds the revisions codeWrittenSince reads: a graph
// older than that is not used.
const maxRevisionScan = 256

// codeWrittenSince reports whether a revision after rev, up to the
// latest one r sees, wrote a node or an out-edge of a code key (file:,
// dir:, sym:, pkg:, ingest:) — a hand edit the graph of rev does not
// know — or cannot be read (pruned history, damage: the full comparison
// then finds what it finds), or whether the store is behind rev or more
// than maxRevisionScan revisions ahead.
func codeWrittenSince(r *lmdbstore.ReadTxn, rev, latest lmdbstore.Revision) bool {
	if latest < rev || latest-rev > maxRevisionScan {
		return true
	}
	errCode := errors.New("code written")
	for x := rev + 1; x <= latest; x++ {
		err := r.RevisionOps(x, func(op lmdbstore.Op) error {
			switch op.Kind {
			case lmdbstore.OpPutNode, lmdbstore.OpDelNode:
				if codeKey(op.NodeKey) {
					return errCode
				}
			case lmdbstore.OpPutEdge, lmdbstore.OpDelEdge:
				if codeKey(op.Src) {
					return errCode
				}
			}
			return nil
		})
		if err != nil {
			return true
		}
	}
	return false
}

// codeKey reports whether key may be a node of an ingest's share.
func codeKey(key string) bool {
	for _, p := range []string{"file:", "dir:", "sym:", "pkg:", "ingest:"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
