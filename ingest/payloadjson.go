package ingest

// The canonical JSON of the two payloads an ingest writes most of (SPEC.md
// §2 "Payloads"): no insignificant whitespace, members sorted by the bytes
// of their names, strings as encoding/json writes them with HTML escaping
// off, omitempty as the struct tags say.
//
//	symbol: {"exported":true,"kind":K,"line_end":N,"line_start":N,"name":S,
//	         "package":S,"path":S,"recv":S,"test":true}
//	file:   {"bytes":N,"hash":S,"lang":S,"lines":N,"mode":S,"package":S,
//	         "parse_error":S,"path":S,"precise":S,"terms":{T:N,…},"test":true,
//	         "unresolved":N}
//
// A std ingest writes ~100K symbol and ~5K file payloads; marshalling them
// by reflection and canonicalising the result took 5 % of its CPU. The
// encoders here write the same bytes in one pass; mustJSON uses them and
// TestPayloadEncodersMatchMarshal holds them to json.Marshal followed by
// lmdbstore.CanonicalPayload.

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendSymbolPayload appends p's canonical JSON to dst.
func appendSymbolPayload(dst []byte, p *SymbolPayload) []byte {
	dst = append(dst, '{')
	if p.Exported {
		dst = append(dst, `"exported":true,`...)
	}
	dst = append(dst, `"kind":`...)
	dst = appendJSONString(dst, p.Kind)
	dst = append(dst, `,"line_end":`...)
	dst = strconv.AppendInt(dst, int64(p.LineEnd), 10)
	dst = append(dst, `,"line_start":`...)
	dst = strconv.AppendInt(dst, int64(p.LineStart), 10)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, p.Name)
	dst = append(dst, `,"package":`...)
	dst = appendJSONString(dst, p.Package)
	dst = append(dst, `,"path":`...)
	dst = appendJSONString(dst, p.Path)
	if p.Recv != "" {
		dst = append(dst, `,"recv":`...)
		dst = appendJSONString(dst, p.Recv)
	}
	if p.Test {
		dst = append(dst, `,"test":true`...)
	}
	return append(dst, '}')
}

// appendFilePayload appends p's canonical JSON to dst; ok is false when p
// holds a Git payload (raw JSON this encoder does not canonicalise) or a
// term that is not valid UTF-8 (whose canonical name, with U+FFFD, may
// sort elsewhere).
func appendFilePayload(dst []byte, p *FilePayload) (out []byte, ok bool) {
	if len(p.Git) != 0 {
		return dst, false
	}
	for t := range p.Terms {
		if !utf8.ValidString(t) {
			return dst, false
		}
	}
	dst = append(dst, '{')
	first := true
	member := func(name string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, `":`...)
	}
	str := func(name, v string) {
		if v != "" {
			member(name)
			dst = appendJSONString(dst, v)
		}
	}
	num := func(name string, v int) {
		if v != 0 {
			member(name)
			dst = strconv.AppendInt(dst, int64(v), 10)
		}
	}
	num("bytes", p.Bytes)
	str("hash", p.Hash)
	str("lang", p.Lang)
	num("lines", p.Lines)
	str("mode", p.Mode)
	str("package", p.Package)
	str("parse_error", p.ParseError)
	member("path")
	dst = appendJSONString(dst, p.Path)
	str("precise", p.Precise)
	if len(p.Terms) > 0 {
		member("terms")
		dst = appendTerms(dst, p.Terms)
	}
	if p.Test {
		member("test")
		dst = append(dst, "true"...)
	}
	num("unresolved", p.Unresolved)
	return append(dst, '}'), true
}

// appendTerms appends a term → count object, members in byte order.
func appendTerms(dst []byte, terms map[string]int) []byte {
	keys := make([]string, 0, len(terms))
	for t := range terms {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, t := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, t)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(terms[t]), 10)
	}
	return append(dst, '}')
}

// appendJSONString appends s in canonical form. Printable ASCII other
// than '"' and '\' is written as is; anything else (control characters,
// non-ASCII, invalid UTF-8) takes the reflective path.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return append(dst, marshalCanonical(s)...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
