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
// type (language.facts). The layout (ParsesLayout) names every language's
// rules version and the shape of its facts type: a reader of another
// layout ignores the section.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"reflect"

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
	headCodec = plaincodec.MustNew(reflect.TypeFor[parseHead]())
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
		fmt.Fprintf(h, "head %s\n", headCodec.Shape())
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
