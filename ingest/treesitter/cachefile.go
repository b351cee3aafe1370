package treesitter

// The parse cache as bytes: the parses section of the refresh cache file
// (ingest/codetree/cachefile.go, SPEC.md §9.10 "fresh.cache"), which
// lets a one-shot process start with the parses the last one kept.
//
//	parses = uvarint n ‖ n × parse
//	parse  = str grammar ‖ str content hash ‖ uvarint bytes ‖ uvarint lines
//	         ‖ terms (map[string]int) ‖ str parse error ‖ facts
//
// in plaincodec's encoding, facts being the grammar's language's facts
// type (language.facts). Then the payloads of the file and symbol nodes
// the last extraction built, so that a payload equal to the one kept is
// not marshalled again (builder.flush):
//
//	payloads = uvarint n ‖ n × payload ‖ uvarint m ‖ m × reads
//	payload  = str key ‖ uvarint len ‖ value (len bytes)
//	value    = kind u8 (0 file, 1 symbol)
//	           ‖ ingest.FilePayload without terms | ingest.SymbolPayload
//	reads    = str file key ‖ uvarint k ‖ k × str name
//
// reads are the names the last resolution of each Python module read
// (python_reuse.go), with the payloads: both are the last extraction's.
//
// A payload's JSON is not in the section: it is the payload of the node
// of the same key in the graph written (the caller's), and only the
// payloads whose JSON is that node's are written; a file payload's terms
// are the parse's of the same content hash. A reader keeps each value
// encoded (its length lets it step over) and decodes it when asked; an
// extraction compares its payloads with the kept ones by encoding. The
// layout (ParsesLayout)
// names every language's rules version and the shape of its facts type
// and of the payloads: a reader of another layout ignores the section.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/plaincodec"
)

// parseHead is the part of a parse that is not its facts.
type parseHead struct {
	grammar, hash string
	bytes, lines  int
	terms         map[string]int
	parseErr      string
}

var (
	headCodec    = plaincodec.MustNew(reflect.TypeFor[parseHead]())
	fileCodec    = plaincodec.MustNew(reflect.TypeFor[ingest.FilePayload]())
	symbolCodec  = plaincodec.MustNew(reflect.TypeFor[ingest.SymbolPayload]())
	payloadKinds = []*plaincodec.Codec{fileCodec, symbolCodec}
	// factCodecs are the facts codecs by grammar name.
	factCodecs = func() map[string]*plaincodec.Codec {
		out := make(map[string]*plaincodec.Codec)
		for _, l := range languages {
			c := plaincodec.MustNew(l.facts)
			for _, g := range l.grammars {
				out[g.name] = c
			}
		}
		return out
	}()
	parsesLayout = func() string {
		h := sha256.New()
		fmt.Fprintf(h, "head %s file %s symbol %s\n", headCodec.Shape(), fileCodec.Shape(), symbolCodec.Shape())
		for _, l := range languages {
			fmt.Fprintf(h, "%s rules %d facts %s", l.name, l.rules, plaincodec.MustNew(l.facts).Shape())
			for _, g := range l.grammars {
				fmt.Fprintf(h, " %s", g.name)
			}
			fmt.Fprintln(h)
		}
		return "sha256:" + hex.EncodeToString(h.Sum(nil)[:16])
	}()
)

// ParsesLayout names what the encoding of the parses depends on: the
// shape of every language's facts and its rules version.
func ParsesLayout() string { return parsesLayout }

// AppendParses appends the parses c holds (none for a tree over
// CacheMaxBytes).
func (c *Cache) AppendParses(b []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b = binary.AppendUvarint(b, uint64(len(c.files)))
	for k, f := range c.files {
		if f.raw != nil {
			b = append(b, f.raw...)
			continue
		}
		b = headCodec.Append(b, parseHead{grammar: k.grammar, hash: k.hash, bytes: f.bytes, lines: f.lines,
			terms: f.terms, parseErr: f.parseErr})
		b = factCodecs[k.grammar].Append(b, f.facts)
	}
	return b
}

// DecodeParses reads the parses AppendParses wrote into a new Cache; an
// error (wrapping plaincodec.ErrFormat) leaves nothing. The cache keeps
// each parse's bytes (slices of d's input, which must not change) to
// write them again as they are.
func DecodeParses(d *plaincodec.Decoder) (*Cache, error) {
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		return nil, fmt.Errorf("%w: %d parses in %d bytes", plaincodec.ErrFormat, n, d.Len())
	}
	c := NewCache()
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		start := d.Rest()
		var h parseHead
		headCodec.DecodeInto(d, &h)
		fc := factCodecs[h.grammar]
		if fc == nil {
			return nil, fmt.Errorf("%w: unknown grammar %q", plaincodec.ErrFormat, h.grammar)
		}
		facts := fc.Decode(d)
		if reflect.ValueOf(facts).IsNil() && d.Err() == nil {
			return nil, fmt.Errorf("%w: parse of %s without facts", plaincodec.ErrFormat, h.hash)
		}
		c.files[cacheKey{h.grammar, h.hash}] = &cachedFile{bytes: h.bytes, lines: h.lines, terms: h.terms,
			parseErr: h.parseErr, facts: facts, raw: start[: len(start)-d.Len() : len(start)-d.Len()]}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// AppendPayloads appends the payloads kept whose JSON is the payload of
// the node written (written(key); nil for none), then the names each
// Python module's resolution read.
func (c *Cache) AppendPayloads(b []byte, written func(key string) json.RawMessage) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := func(k string, p cachedPayload) bool {
		w := written(k)
		return w != nil && bytes.Equal(w, p.json)
	}
	n := 0
	for k, p := range c.payloads {
		if keep(k, p) {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	var value []byte
	for k, p := range c.payloads {
		if !keep(k, p) {
			continue
		}
		if p.raw != nil {
			b = append(b, p.raw...)
			continue
		}
		b = plaincodec.AppendString(b, k)
		value = appendPayloadValue(value[:0], p.payload)
		b = binary.AppendUvarint(b, uint64(len(value)))
		b = append(b, value...)
	}
	b = binary.AppendUvarint(b, uint64(len(c.pyDeps)))
	for key, names := range c.pyDeps {
		b = plaincodec.AppendString(b, key)
		b = binary.AppendUvarint(b, uint64(len(names)))
		for _, n := range names {
			b = plaincodec.AppendString(b, n)
		}
	}
	return b
}

// appendPayloadValue appends a payload's value encoding: kind u8 (0 file,
// 1 symbol) ‖ pc(the payload), a file payload without its terms.
func appendPayloadValue(b []byte, v any) []byte {
	switch p := v.(type) {
	case ingest.FilePayload:
		p.Terms = nil
		return fileCodec.Append(append(b, 0), p)
	case ingest.SymbolPayload:
		return symbolCodec.Append(append(b, 1), p)
	}
	panic(fmt.Sprintf("treesitter: payload %T kept", v))
}

// DecodePayloads reads the payloads AppendPayloads wrote into c, each
// with the JSON written(key) of the node written (a payload without a
// node is left out), and the names the Python resolutions read. Their
// values stay encoded (a slice of d's input, which must not change): an
// extraction compares a payload with the kept one by encoding, and the
// Python reuse decodes the old file payloads it reads
// (cachedPayload.filePayload). An error (wrapping plaincodec.ErrFormat)
// leaves none.
func (c *Cache) DecodePayloads(d *plaincodec.Decoder, written func(key string) (json.RawMessage, bool)) error {
	n := d.Uvarint()
	if n > uint64(d.Len()) {
		return fmt.Errorf("%w: %d payloads in %d bytes", plaincodec.ErrFormat, n, d.Len())
	}
	out := make(map[string]cachedPayload, n)
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		start := d.Rest()
		key := d.String()
		enc := d.Bytes()
		if d.Err() == nil && (len(enc) == 0 || int(enc[0]) >= len(payloadKinds)) {
			return fmt.Errorf("%w: payload of %q without a kind", plaincodec.ErrFormat, key)
		}
		raw := start[: len(start)-d.Len() : len(start)-d.Len()]
		if js, ok := written(key); ok {
			out[key] = cachedPayload{json: js, raw: raw, enc: enc}
		}
	}
	n = d.Uvarint()
	if n > uint64(d.Len()) {
		return fmt.Errorf("%w: names read by %d modules in %d bytes", plaincodec.ErrFormat, n, d.Len())
	}
	deps := make(map[string][]string, n)
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		key := d.String()
		k := d.Uvarint()
		if k > uint64(d.Len()) {
			return fmt.Errorf("%w: %d names in %d bytes", plaincodec.ErrFormat, k, d.Len())
		}
		names := make([]string, k)
		for j := range names {
			names[j] = d.String()
		}
		deps[key] = names
	}
	if err := d.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.payloads, c.pyDeps = out, deps
	return nil
}

// Adopt makes c hold the parses and payloads from holds (a cache read
// from a file, not used after) when c holds none and is not over; it
// reports whether it did.
func (c *Cache) Adopt(from *Cache) bool {
	from.mu.Lock()
	files, payloads, pyDeps := from.files, from.payloads, from.pyDeps
	from.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.files) != 0 || c.over || len(files) == 0 {
		return false
	}
	c.files, c.payloads, c.pyDeps = files, payloads, pyDeps
	return true
}
