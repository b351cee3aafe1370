package lmdbstore

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// canonicalFast returns the canonical form of payload p (see
// canonicalPayload) when it can produce it in one pass without decoding,
// and ok false otherwise, which sends p down the decoding path. It handles
// insignificant whitespace and member order; it gives up on any string with
// an escape, a control byte, invalid UTF-8 or U+2028/U+2029 (whose written
// form encoding/json decides), on duplicate member names and invalid JSON
// (which the decoding path reports), and on nesting deeper than
// maxCanonicalDepth. When ok, the bytes are exactly what the decoding path
// produces (tested, fuzzed).
func canonicalFast(p []byte) (out []byte, ok bool) {
	c := canonWriter{p: p}
	c.ws()
	out, ok = c.value(make([]byte, 0, len(p)), 0)
	if !ok {
		return nil, false
	}
	c.ws()
	return out, c.i == len(p)
}

const maxCanonicalDepth = 512

type canonWriter struct {
	p []byte
	i int
}

// ws skips JSON's insignificant whitespace.
func (c *canonWriter) ws() {
	for c.i < len(c.p) {
		switch c.p[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// next skips whitespace and reports whether the next byte is b (consumed).
func (c *canonWriter) next(b byte) bool {
	c.ws()
	if c.i < len(c.p) && c.p[c.i] == b {
		c.i++
		return true
	}
	return false
}

func (c *canonWriter) value(out []byte, depth int) ([]byte, bool) {
	c.ws()
	if c.i >= len(c.p) || depth > maxCanonicalDepth {
		return nil, false
	}
	switch b := c.p[c.i]; {
	case b == '{':
		return c.object(out, depth)
	case b == '[':
		c.i++
		out = append(out, '[')
		if c.next(']') {
			return append(out, ']'), true
		}
		for {
			var ok bool
			if out, ok = c.value(out, depth+1); !ok {
				return nil, false
			}
			switch {
			case c.next(','):
				out = append(out, ',')
			case c.next(']'):
				return append(out, ']'), true
			default:
				return nil, false
			}
		}
	case b == '"':
		s, ok := c.str()
		return append(out, s...), ok
	case b == 't':
		return c.lit(out, "true")
	case b == 'f':
		return c.lit(out, "false")
	case b == 'n':
		return c.lit(out, "null")
	case b == '-' || b >= '0' && b <= '9':
		start := c.i
		if !c.number() {
			return nil, false
		}
		return append(out, c.p[start:c.i]...), true
	}
	return nil, false
}

// object writes an object with its members sorted by name.
func (c *canonWriter) object(out []byte, depth int) ([]byte, bool) {
	c.i++ // '{'
	if c.next('}') {
		return append(out, '{', '}'), true
	}
	type member struct {
		name       []byte // with its quotes
		start, end int    // the value in vals
	}
	var members []member
	var vals []byte
	sorted := true
	for {
		c.ws()
		name, ok := c.str()
		if !ok || !c.next(':') {
			return nil, false
		}
		start := len(vals)
		if vals, ok = c.value(vals, depth+1); !ok {
			return nil, false
		}
		if n := len(members); n > 0 && bytes.Compare(unquote(members[n-1].name), unquote(name)) >= 0 {
			sorted = false
		}
		members = append(members, member{name, start, len(vals)})
		if c.next(',') {
			continue
		}
		if c.next('}') {
			break
		}
		return nil, false
	}
	if !sorted {
		// Names hold no escapes: their bytes are the decoded names'.
		slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(unquote(a.name), unquote(b.name)) })
		for k := 1; k < len(members); k++ {
			if bytes.Equal(members[k-1].name, members[k].name) {
				return nil, false // duplicate: the decoding path reports it
			}
		}
	}
	out = append(out, '{')
	for k, m := range members {
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, m.name...)
		out = append(out, ':')
		out = append(out, vals[m.start:m.end]...)
	}
	return append(out, '}'), true
}

func unquote(s []byte) []byte { return s[1 : len(s)-1] }

func (c *canonWriter) lit(out []byte, s string) ([]byte, bool) {
	if len(c.p)-c.i < len(s) || string(c.p[c.i:c.i+len(s)]) != s {
		return nil, false
	}
	c.i += len(s)
	return append(out, s...), true
}

// str returns a string token (with its quotes) that encoding/json writes
// back byte for byte.
func (c *canonWriter) str() ([]byte, bool) {
	if c.i >= len(c.p) || c.p[c.i] != '"' {
		return nil, false
	}
	start := c.i
	c.i++
	for c.i < len(c.p) {
		b := c.p[c.i]
		switch {
		case b == '"':
			c.i++
			return c.p[start:c.i], true
		case b == '\\' || b < 0x20:
			return nil, false
		case b < utf8.RuneSelf:
			c.i++
		default:
			r, n := utf8.DecodeRune(c.p[c.i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				return nil, false
			}
			c.i += n
		}
	}
	return nil, false
}

// number accepts JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (c *canonWriter) number() bool {
	p := c.p
	digits := func() int {
		n := 0
		for c.i < len(p) && p[c.i] >= '0' && p[c.i] <= '9' {
			c.i++
			n++
		}
		return n
	}
	if p[c.i] == '-' {
		c.i++
	}
	if c.i >= len(p) {
		return false
	}
	if p[c.i] == '0' {
		c.i++
	} else if digits() == 0 {
		return false
	}
	if c.i < len(p) && p[c.i] == '.' {
		c.i++
		if digits() == 0 {
			return false
		}
	}
	if c.i < len(p) && (p[c.i] == 'e' || p[c.i] == 'E') {
		c.i++
		if c.i < len(p) && (p[c.i] == '+' || p[c.i] == '-') {
			c.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
