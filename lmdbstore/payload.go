package lmdbstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// CanonicalPayload is the form a payload is stored in (nil for none): what
// a writer must produce to compare its payloads byte for byte with stored
// ones.
func CanonicalPayload(p []byte) ([]byte, error) { return canonicalPayload(p, false) }

// canonicalPayload returns the one form a payload is stored in (SPEC.md §2,
// "Payloads"): JSON with no insignificant whitespace, object members sorted
// by the UTF-8 bytes of their names, strings as encoding/json writes them
// (HTML escaping off), numbers exactly as written. `null` and an empty
// payload are both "no payload" (nil); a required payload may be neither.
// Duplicate member names, trailing data and invalid JSON are ErrInvalid.
// Writing the same value twice in different spellings therefore stores the
// same bytes, so a no-op write is detected and a replayed history hashes
// alike.
func canonicalPayload(p json.RawMessage, required bool) ([]byte, error) {
	if len(bytes.TrimSpace(p)) == 0 || string(bytes.TrimSpace(p)) == "null" {
		if required {
			return nil, fmt.Errorf("%w: payload required (not null)", ErrInvalid)
		}
		return nil, nil
	}
	if out, ok := canonicalFast(p); ok {
		return out, nil // decided in one pass, no decoding needed
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(p))
	if err := canonicalValue(dec, &out); err != nil {
		return nil, fmt.Errorf("%w: payload is not valid JSON: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: payload is not valid JSON: data after the value", ErrInvalid)
	}
	return out.Bytes(), nil
}

// canonicalValue writes the next JSON value of dec in canonical form.
func canonicalValue(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			out.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					out.WriteByte(',')
				}
				if err := canonicalValue(dec, out); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			out.WriteByte(']')
		case '{':
			type member struct {
				name  string
				value []byte
			}
			var members []member
			for dec.More() {
				nt, err := dec.Token()
				if err != nil {
					return err
				}
				name, ok := nt.(string)
				if !ok {
					return errors.New("object member name is not a string")
				}
				var v bytes.Buffer
				if err := canonicalValue(dec, &v); err != nil {
					return err
				}
				members = append(members, member{name, v.Bytes()})
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
			out.WriteByte('{')
			for i, m := range members {
				if i > 0 {
					if members[i-1].name == m.name {
						return fmt.Errorf("duplicate member %q", m.name)
					}
					out.WriteByte(',')
				}
				writeJSONString(out, m.name)
				out.WriteByte(':')
				out.Write(m.value)
			}
			out.WriteByte('}')
		}
	case string:
		writeJSONString(out, t)
	case json.Number:
		out.WriteString(t.String())
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}

// writeJSONString writes s as encoding/json does with HTML escaping off.
func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out.Truncate(out.Len() - 1)
}
