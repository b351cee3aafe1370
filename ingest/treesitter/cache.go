package treesitter

// The parse cache: what parsing a file yields depends on its bytes and
// grammar only (the package invariant), so a long-lived process that
// extracts one tree again and again (a refresh before each answer, SPEC.md
// §9.10) keeps it by content and parses only the files whose content it
// has not seen. Resolution runs over every file of the family, but for
// the Python modules an edit cannot reach when Options.Previous is given
// (python_reuse.go): the graph is the one a fresh extraction gives.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/plaincodec"
)

// Cache keeps the parse results of the files of the last extraction that
// used it, by grammar and content hash. It is safe for concurrent use; an
// extraction replaces its contents with the files it saw (memory stays
// that of one tree: about 4.5 times its source bytes, measured on the
// Python standard library). A tree of more than CacheMaxBytes of source
// is not kept: the cache stays empty and says so (Over), and the
// extraction goes as without it (found after hashing, before parsing).
// The zero value is not usable: NewCache.
type Cache struct {
	mu       sync.Mutex
	maxBytes int
	over     bool
	files    map[cacheKey]*cachedFile
	// payloads are the file and symbol payloads of the last extraction by
	// node key, with their JSON; pyDeps the names each Python module's
	// resolution read then, by file key (python_reuse.go).
	payloads map[string]cachedPayload
	pyDeps   map[string][]string
}

type cachedPayload struct {
	// payload is the value; nil when read from a cache file, whose entry
	// holds its encoding (enc), decoded only when asked (filePayload).
	payload any
	json    json.RawMessage
	// raw is the entry's encoding when it was read from a cache file
	// (AppendPayloads copies it instead of encoding again), enc the
	// value's in it (appendPayloadValue).
	raw, enc []byte
}

// filePayload is the payload when it is a file's (without its terms
// when decoded from a file); false when it is not, or does not decode.
func (p cachedPayload) filePayload() (ingest.FilePayload, bool) {
	if p.payload != nil {
		fp, ok := p.payload.(ingest.FilePayload)
		return fp, ok
	}
	if len(p.enc) == 0 || p.enc[0] != 0 { // appendPayloadValue's kind
		return ingest.FilePayload{}, false
	}
	var fp ingest.FilePayload
	d := plaincodec.NewSharedDecoder(p.enc[1:])
	fileCodec.DecodeInto(d, &fp)
	return fp, d.Finish() == nil
}

// equal reports whether v, a payload of this extraction, is the kept
// one, so that it marshals to the kept JSON. A payload read from a file
// is compared by encoding (scratch is the buffer to encode v in): a file
// payload's encoding leaves its terms out, which are those of the parse
// of its content hash, the same content then and now.
func (p cachedPayload) equal(v any, scratch *[]byte) bool {
	if p.payload != nil {
		return reflect.DeepEqual(p.payload, v)
	}
	*scratch = appendPayloadValue((*scratch)[:0], v)
	return bytes.Equal(*scratch, p.enc)
}

type cacheKey struct {
	grammar string // grammar.name: ".ts" and ".tsx" parse differently
	hash    string // contentHash of the bytes
}

// cachedFile is what parsing gave for one content: never modified once
// stored (the resolvers only read facts).
type cachedFile struct {
	bytes, lines int
	terms        map[string]int
	parseErr     string
	facts        any
	// raw is the entry's encoding when it was read from a cache file
	// (AppendParses copies it instead of encoding again).
	raw []byte
}

// CacheMaxBytes bounds the source bytes of a tree whose parses a Cache
// keeps (≈ 150 MB of memory for them at the most).
const CacheMaxBytes = 32 << 20

// NewCache returns an empty parse cache.
func NewCache() *Cache {
	return &Cache{maxBytes: CacheMaxBytes, files: make(map[cacheKey]*cachedFile)}
}

// Over reports whether the last extraction's tree was too large to keep.
func (c *Cache) Over() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}

// Len is the number of contents held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.files)
}

func (c *Cache) get(k cacheKey) *cachedFile {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files[k]
}

// tooLarge reports whether the source of files is more than the cache
// keeps.
func (c *Cache) tooLarge(files []*parsedFile) bool {
	if c == nil {
		return false
	}
	total := 0
	for _, f := range files {
		total += f.Bytes
	}
	return total > c.maxBytes
}

// replace makes the cache hold the parse results of files (every file of
// one extraction) and nothing else: those parsed now, and those of the
// files not parsed (their language unchanged) that it held already.
func (c *Cache) replace(files []*parsedFile, gs map[string]*gram) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over = c.tooLarge(files); c.over {
		c.files, c.payloads, c.pyDeps = nil, nil, nil
		return
	}
	next := make(map[cacheKey]*cachedFile, len(files))
	for _, f := range files {
		k := cacheKey{gramOf(gs, f).name, f.Hash}
		switch {
		case c.files[k] != nil: // the same content: the parse it holds (with its bytes from a file)
			next[k] = c.files[k]
		case f.parsed:
			next[k] = &cachedFile{bytes: f.Bytes, lines: f.Lines, terms: f.Terms, parseErr: f.ParseErr, facts: f.facts}
		}
	}
	c.files = next
}

// fill sets f's content figures and facts from a cached parse.
func (cf *cachedFile) fill(f *parsedFile) {
	f.Bytes, f.Lines, f.Terms = cf.bytes, cf.lines, cf.terms
	f.ParseErr, f.facts, f.parsed = cf.parseErr, cf.facts, true
}

// lastPayloads are the payloads the last extraction marshalled (read
// only: the map is replaced, never changed).
func (c *Cache) lastPayloads() map[string]cachedPayload {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.payloads
}

// lastPyDeps are the names each Python module's resolution read in the
// last extraction (read only), by file key.
func (c *Cache) lastPyDeps() map[string][]string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pyDeps
}

// keepPayloads replaces the payloads kept, and the names the Python
// resolutions read, with those of this extraction.
func (c *Cache) keepPayloads(pending []pendingNode, nodes []ingest.Node, pyDeps map[string][]string) {
	if c == nil || c.Over() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[string]cachedPayload, len(nodes))
	for i, p := range pending {
		cp := cachedPayload{payload: p.payload, json: nodes[i].Payload}
		if old, ok := c.payloads[p.key]; ok && sameBytes(old.json, cp.json) {
			cp.raw = old.raw // flush reused the kept payload: an equal value
		}
		next[p.key] = cp
	}
	c.payloads, c.pyDeps = next, pyDeps
}

// sameBytes reports whether a and b are the same memory (not only equal).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
