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
// The line is converted to a string once and every string field is a
// substring of it; a payload is a sub-slice of the line's bytes: nothing is
// allocated per field. Anything else — a string or member name with an
// escape, a null where a string or a boolean goes, a member twice, a
// member BatchOp does not have, a value of the wrong type — is
// errSlowPath: the caller decodes that line with encoding/json
// (parseBatchLineSlow), whose errors are the ones reported, so both paths
// accept the same lines and produce the same ops (TestFastLineMatchesSlow).

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

// fieldOf is the member named name.
func fieldOf(name string) (batchField, bool) {
	for i, n := range batchFieldNames {
		if n == name {
			return batchField(i), true
		}
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

// decodeBatchLine decodes line, a valid JSON text, into o and returns the
// members it carried; errSlowPath for what it leaves to encoding/json.
// o's weight, when given, points into weight.
func decodeBatchLine(line []byte, o *BatchOp, weight *float64) (fieldSet, error) {
	s := string(line)
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return 0, errSlowPath
	}
	var set fieldSet
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
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
		end := valueEnd(s, start)
		if end <= start {
			return 0, errSlowPath
		}
		v := s[start:end]
		switch f {
		case fPayload:
			o.Payload = json.RawMessage(line[start:end])
		case fWeight:
			if v == "null" {
				break
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || v[0] == '"' {
				return 0, errSlowPath
			}
			*weight = x
			o.Weight = weight
		case fRev:
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
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
			str, after, ok := plainString(s, start)
			if !ok || after != end {
				return 0, errSlowPath
			}
			*o.stringField(f) = str
		}
		i = skipSpace(s, end)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == '}' {
			return set, nil
		}
		return 0, errSlowPath
	}
	return 0, errSlowPath
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string at s[i] when it has no escape: its
// contents and the offset past its closing quote.
func plainString(s string, i int) (str string, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			return "", 0, false
		case '"':
			return s[i+1 : j], j + 1, true
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
