package treesitter

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/plaincodec"
)

// TestParsesRoundTrip: the parses of the Python, TypeScript, JavaScript
// and Rust fixtures, written and read back, are deeply equal to the
// parses the extraction made (facts of every language, terms, parse
// errors), and an extraction through the cache read back gives the graph
// a fresh extraction gives.
func TestParsesRoundTrip(t *testing.T) {
	for _, name := range []string{"python", "typescript", "rust"} {
		dir := fixtureDir + "/" + name
		c := NewCache()
		first, err := Extract(dir, TreeSitterLanguages, Options{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() == 0 || len(c.payloads) == 0 {
			t.Fatalf("%s: no parses or payloads", name)
		}
		// The payloads go with the graph written; one whose node differs is
		// left out.
		written := func(key string) json.RawMessage {
			n, _ := first.Graph.Node(key)
			return n.Payload
		}
		var skipped string
		for k := range c.payloads {
			skipped = k
			break
		}
		b := c.AppendParses(nil)
		pb := c.AppendPayloads(nil, func(key string) json.RawMessage {
			if key == skipped {
				return json.RawMessage(`{"other":1}`)
			}
			return written(key)
		})
		d := plaincodec.NewDecoder(b)
		back, err := DecodeParses(d)
		if err == nil {
			err = d.Finish()
		}
		if err == nil {
			d = plaincodec.NewDecoder(pb)
			err = back.DecodePayloads(d, func(key string) (json.RawMessage, bool) {
				n, ok := first.Graph.Node(key)
				return n.Payload, ok
			})
		}
		if err == nil {
			err = d.Finish()
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(back.files) != len(c.files) {
			t.Fatalf("%s: %d parses read back, %d written", name, len(back.files), len(c.files))
		}
		for k, want := range c.files {
			got := back.files[k]
			if got == nil || got.raw == nil {
				t.Fatalf("%s: parse %v not read back (or without its bytes)", name, k)
			}
			g := *got
			g.raw = nil
			if !reflect.DeepEqual(&g, want) {
				t.Fatalf("%s: parse %v differs after a round trip:\n got %#v\nwant %#v", name, k, g.facts, want.facts)
			}
		}
		if len(back.payloads) != len(c.payloads)-1 {
			t.Fatalf("%s: %d payloads read back, want %d", name, len(back.payloads), len(c.payloads)-1)
		}
		for k, want := range c.payloads {
			got, ok := back.payloads[k]
			if k == skipped {
				if ok {
					t.Fatalf("%s: payload of %s written with another node's JSON", name, k)
				}
				continue
			}
			// Read back encoded, decoded when asked: a file payload
			// without its terms (the parse's).
			v, vok := decodePayloadValue(got.enc)
			w := want.payload
			if fp, isFile := w.(ingest.FilePayload); isFile {
				fp.Terms = nil
				w = fp
				if gf, ok := got.filePayload(); !ok || !reflect.DeepEqual(gf, fp) {
					t.Fatalf("%s: file payload of %s read back %+v, want %+v", name, k, gf, fp)
				}
			}
			if !ok || got.raw == nil || got.payload != nil || !vok || !reflect.DeepEqual(v, w) || !bytes.Equal(got.json, want.json) {
				t.Fatalf("%s: payload of %s read back %+v (%+v), want %+v", name, k, got, v, want)
			}
			var scratch []byte
			if !got.equal(want.payload, &scratch) {
				t.Fatalf("%s: payload of %s read back is not equal to the one written", name, k)
			}
		}
		// The names the Python resolutions read, for every Python module.
		if name == "python" && (len(c.pyDeps) == 0 || !maps.EqualFunc(back.pyDeps, c.pyDeps, slices.Equal)) {
			t.Fatalf("%s: names read by the resolutions: %d read back, %d written (or differ)", name, len(back.pyDeps), len(c.pyDeps))
		}
		// Written again from the bytes read: the same bytes, per parse.
		if again := back.AppendParses(nil); len(again) != len(b) {
			t.Fatalf("%s: rewritten parses are %d bytes, %d written", name, len(again), len(b))
		}
		fresh, err := Extract(dir, TreeSitterLanguages, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cached, err := Extract(dir, TreeSitterLanguages, Options{Cache: back})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(dumpGraph(fresh.Graph), dumpGraph(cached.Graph)) {
			t.Fatalf("%s: extraction through the parses read back differs from a fresh one", name)
		}
	}
}

// TestParsesDamaged: every strict prefix of the parses, and a parse of an
// unknown grammar, fail with plaincodec.ErrFormat.
func TestParsesDamaged(t *testing.T) {
	c := NewCache()
	if _, err := Extract(fixtureDir+"/python", TreeSitterLanguages, Options{Cache: c}); err != nil {
		t.Fatal(err)
	}
	b := c.AppendParses(nil)
	for n := 0; n < len(b); n += 1 + n/50 {
		d := plaincodec.NewDecoder(b[:n])
		_, err := DecodeParses(d)
		if err == nil {
			err = d.Finish()
		}
		if !errors.Is(err, plaincodec.ErrFormat) {
			t.Fatalf("prefix %d of %d: %v", n, len(b), err)
		}
	}
	one := headCodec.Append([]byte{1}, parseHead{grammar: "cobol", hash: "sha256:x"})
	if _, err := DecodeParses(plaincodec.NewDecoder(one)); !errors.Is(err, plaincodec.ErrFormat) {
		t.Fatalf("unknown grammar: %v", err)
	}
}

// decodePayloadValue decodes what appendPayloadValue wrote, of either
// kind (its strings are enc's memory); false when it does not decode.
func decodePayloadValue(enc []byte) (any, bool) {
	d := plaincodec.NewSharedDecoder(enc)
	kind := int(d.Byte())
	if kind >= len(payloadKinds) {
		return nil, false
	}
	v := payloadKinds[kind].Decode(d)
	return v, d.Finish() == nil
}
