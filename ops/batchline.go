package ops

// One line of JSON Lines batch input (SPEC.md §6.4), decoded without
// encoding/json's reflection: a JSON object whose members are BatchOp's
// fields,
//
//	{ "op": string, "key"|"type"|"src"|"rel"|"dst"|"namespace"|"role"|
//	  "valid_from"|"valid_until"|"scope"|"run_id"|"task_id"|"ts": string,
//	  "payload": any value, "weight": number | null, "rev": number,
//	  "bidirectional"|"inhibitory": true | false }
//
// Every string field is a substring of the line (held as a string); a
// payload is copied out of it (one allocation per payload, none per
// field). The decoder checks JSON's grammar as it goes (strings without
// control characters, numbers by JSON's grammar, nothing after the
// object; a payload with json.Valid), so a line is read once. Anything
// else — text that is not JSON, a string or member name with an escape, a
// null where a string or a boolean goes, a member twice, a member BatchOp
// does not have, a value of the wrong type — is errSlowPath: the caller
// decodes that line with encoding/json (parseBatchLineSlow), whose errors
// are the ones reported, so both paths accept the same lines and produce
// the same ops
// (TestFastLineMatchesSlow).

import (
	"encoding/json"
	"errors"
	"strconv"
)

// errSlowPath: the line needs encoding/json.
var errSlowPath = errors.New("batch line: slow path")

// batchField is one member BatchOp has, as a bit of a fieldSet.
type batchField uint8

const (
	fOp batchField = iota
	fKey
	fType
	fPayload
	fSrc
	fRel
	fDst
	fWeight
	fNamespace
	fBidirectional
	fInhibitory
	fRole
	fValidFrom
	fValidUntil
	fScope
	fRunID
	fTaskID
	fRev
	fTS
	numBatchFields
)

// batchFieldNames are the members' names, by batchField.
var batchFieldNames = [numBatchFields]string{"op", "key", "type", "payload", "src", "rel", "dst", "weight", "namespace",
	"bidirectional", "inhibitory", "role", "valid_from", "valid_until", "scope", "run_id", "task_id", "rev", "ts"}

// fieldSet is the members a line carried.
type fieldSet uint32

// fieldOf is the member named name (batchFieldNames; a switch, which the
// compiler turns into a search by length then text, where a scan of the
// names compared ten of them).
func fieldOf(name string) (batchField, bool) {
	switch name {
	case "op":
		return fOp, true
	case "key":
		return fKey, true
	case "type":
		return fType, true
	case "payload":
		return fPayload, true
	case "src":
		return fSrc, true
	case "rel":
		return fRel, true
	case "dst":
		return fDst, true
	case "weight":
		return fWeight, true
	case "namespace":
		return fNamespace, true
	case "bidirectional":
		return fBidirectional, true
	case "inhibitory":
		return fInhibitory, true
	case "role":
		return fRole, true
	case "valid_from":
		return fValidFrom, true
	case "valid_until":
		return fValidUntil, true
	case "scope":
		return fScope, true
	case "run_id":
		return fRunID, true
	case "task_id":
		return fTaskID, true
	case "rev":
		return fRev, true
	case "ts":
		return fTS, true
	}
	return 0, false
}

// stringField is where a string member goes in o.
func (o *BatchOp) stringField(f batchField) *string {
	switch f {
	case fOp:
		return &o.Op
	case fKey:
		return &o.Key
	case fType:
		return &o.Type
	case fSrc:
		return &o.Src
	case fRel:
		return &o.Rel
	case fDst:
		return &o.Dst
	case fNamespace:
		return &o.Namespace
	case fRole:
		return &o.Role
	case fValidFrom:
		return &o.ValidFrom
	case fValidUntil:
		return &o.ValidUntil
	case fScope:
		return &o.Scope
	case fRunID:
		return &o.RunID
	case fTaskID:
		return &o.TaskID
	case fTS:
		return &o.TS
	}
	return nil
}

// decodeBatchLine decodes the line s into o and returns the members it
// carried; errSlowPath for what it leaves to encoding/json (text that is
// not JSON included). o's weight, when given, points into weight.
func decodeBatchLine(s string, o *BatchOp, weight *float64) (fieldSet, error) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return 0, errSlowPath
	}
	var set fieldSet
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		if skipSpace(s, i+1) != len(s) {
			return 0, errSlowPath
		}
		return set, nil
	}
	for i < len(s) {
		name, next, ok := plainString(s, i)
		if !ok {
			return 0, errSlowPath
		}
		f, known := fieldOf(name)
		if !known || set&(1<<f) != 0 {
			return 0, errSlowPath
		}
		set |= 1 << f
		i = skipSpace(s, next)
		if i >= len(s) || s[i] != ':' {
			return 0, errSlowPath
		}
		start := skipSpace(s, i+1)
		if sp := o.stringField(f); sp != nil { // a string member: read once
			str, end, ok := plainString(s, start)
			if !ok {
				return 0, errSlowPath
			}
			*sp = str
			i = end
		} else {
			end, err := otherValue(s, start, f, o, weight)
			if err != nil {
				return 0, err
			}
			i = end
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == '}' {
			if skipSpace(s, i+1) != len(s) {
				return 0, errSlowPath // something after the object
			}
			return set, nil
		}
		return 0, errSlowPath
	}
	return 0, errSlowPath
}

// otherValue decodes the value of a member f that is not a string,
// starting at s[start], into o (a weight into weight): the offset past
// it, or errSlowPath.
func otherValue(s string, start int, f batchField, o *BatchOp, weight *float64) (int, error) {
	end := valueEnd(s, start)
	if end <= start {
		return 0, errSlowPath
	}
	v := s[start:end]
	switch f {
	case fPayload:
		if !json.Valid([]byte(v)) {
			return 0, errSlowPath
		}
		o.Payload = json.RawMessage(v)
	case fWeight:
		if v == "null" {
			break
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !jsonNumber(v) {
			return 0, errSlowPath
		}
		*weight = x
		o.Weight = weight
	case fRev:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || !jsonNumber(v) {
			return 0, errSlowPath
		}
		o.Rev = n
	case fBidirectional, fInhibitory:
		var b bool
		switch v {
		case "true":
			b = true
		case "false":
		default:
			return 0, errSlowPath
		}
		if f == fBidirectional {
			o.Bidirectional = b
		} else {
			o.Inhibitory = b
		}
	default:
		return 0, errSlowPath
	}
	return end, nil
}

// jsonNumber reports whether v is a number by JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (strconv also takes
// "+1", "01", ".5", "1.", "0x10", "Inf" and "1_0").
func jsonNumber(v string) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(v) && '0' <= v[i] && v[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(v)
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string at s[i] when it has no escape (and no
// control character, which JSON forbids): its contents and the offset past
// its closing quote.
func plainString(s string, i int) (str string, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

// valueEnd is the offset past the JSON value starting at s[i] (s is valid
// JSON): a string, an object or array (nesting and strings inside
// skipped), or a number or literal (up to the next delimiter).
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = stringEnd(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' {
		j++
	}
	return j
}

// stringEnd is the offset past the JSON string starting at s[i].
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}
