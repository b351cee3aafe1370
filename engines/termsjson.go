package engines

// The vocabulary of a node payload (SPEC.md §9.3): the "terms" member of
// the payload's JSON object, term → count,
//
//	{"bytes":121,"lang":"python",…,"terms":{"class":1,"def":2,"return":2}}
//
// read as json.Unmarshal into struct{ Terms map[string]int } reads it
// (member names matched case-insensitively, the last of duplicate terms
// winning, any decoding error meaning no vocabulary). Building the lexicon
// decodes every file's payload at each export, so the common shape is
// read by a strict scanner that gives up — and leaves the payload to
// json.Unmarshal — on anything it does not read exactly as Unmarshal
// would: escapes or non-ASCII in a member name, invalid UTF-8 in a term,
// a count that is not a plain integer of int's range, a second member
// naming "terms", a "terms" that is not an object.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// termCount is one term of a payload's vocabulary with its count.
type termCount struct {
	t string
	c int
}

// payloadTerms returns the terms of payload p with a count > 0 (any
// order); ok is false when p has no vocabulary (none, empty, or one
// json.Unmarshal refuses).
func payloadTerms(p []byte) ([]termCount, bool) {
	if out, done, ok := scanTerms(p); done {
		return out, ok
	}
	var payload struct {
		Terms map[string]int `json:"terms"`
	}
	if json.Unmarshal(p, &payload) != nil || len(payload.Terms) == 0 {
		return nil, false
	}
	out := make([]termCount, 0, len(payload.Terms))
	for t, c := range payload.Terms {
		if c > 0 {
			out = append(out, termCount{t, c})
		}
	}
	return out, true
}

// scanTerms is payloadTerms' strict scanner; done is false when it gave
// up. A duplicate term is left to Unmarshal too (its count is the last).
func scanTerms(p []byte) (out []termCount, done, ok bool) {
	s := termScanner{b: p}
	if !s.byte('{') {
		return nil, false, false
	}
	found, empty := false, true
	seen := map[string]bool{}
	for !s.byte('}') {
		if !empty && !s.byte(',') {
			return nil, false, false
		}
		empty = false
		name, plain := s.str()
		if !plain || !utf8ASCII(name) || !s.byte(':') {
			return nil, false, false
		}
		if !bytes.EqualFold(name, []byte("terms")) {
			if !s.skipValue(0) {
				return nil, false, false
			}
			continue
		}
		if found || !s.byte('{') {
			return nil, false, false
		}
		found = true
		first := true
		for !s.byte('}') {
			if !first && !s.byte(',') {
				return nil, false, false
			}
			first = false
			term, plain := s.str()
			if !plain || !utf8.Valid(term) || !s.byte(':') {
				return nil, false, false
			}
			c, isInt := s.int()
			if !isInt || seen[string(term)] {
				return nil, false, false
			}
			seen[string(term)] = true
			if c > 0 {
				out = append(out, termCount{string(term), c})
			}
		}
	}
	s.space()
	if s.i != len(s.b) {
		return nil, false, false
	}
	return out, true, len(seen) > 0
}

func utf8ASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// termScanner reads JSON from b at i.
type termScanner struct {
	b []byte
	i int
}

func (s *termScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// byte consumes c after white space when it is next.
func (s *termScanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string; plain is false when it is not one, or holds an
// escape or a control character (its bytes are then not its value).
func (s *termScanner) str() (v []byte, plain bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// int reads a JSON number that is an integer without fraction or
// exponent and fits an int.
func (s *termScanner) int() (int, bool) {
	s.space()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || (s.b[digits] == '0' && s.i > digits+1) {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	n, err := strconv.Atoi(string(s.b[start:s.i]))
	return n, err == nil
}

// skipValue passes over one JSON value; false on anything it does not
// read (left to Unmarshal). depth bounds nesting.
func (s *termScanner) skipValue(depth int) bool {
	if depth > 64 {
		return false
	}
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{', c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		for first := true; !s.byte(end); first = false {
			if !first && !s.byte(',') {
				return false
			}
			if c == '{' && (!s.skipString() || !s.byte(':')) {
				return false
			}
			if !s.skipValue(depth + 1) {
				return false
			}
		}
		return true
	case c == '-' || ('0' <= c && c <= '9'):
		start := s.i
		for s.i < len(s.b) && bytes.IndexByte([]byte("+-.eE0123456789"), s.b[s.i]) >= 0 {
			s.i++
		}
		return json.Valid(s.b[start:s.i])
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// skipString passes over a string, escapes included.
func (s *termScanner) skipString() bool {
	if !s.byte('"') {
		return false
	}
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			n := 2
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
					return false
				}
				n = 6
			default:
				return false
			}
			s.i += n
			continue
		case c < 0x20:
			return false
		}
		s.i++
	}
	return false
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
