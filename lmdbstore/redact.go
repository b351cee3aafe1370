package lmdbstore

// Secret redaction of a write (SPEC.md §2, "Secrets"). Everything a write
// puts on disk or in telemetry passes the store's Redactor before anything
// else sees it: node keys and types, edge endpoints, kv scope, namespace
// and key, provenance (scope, run, task), supersede endpoints, payloads
// (each JSON string decoded, when the Redactor reads JSON) and the keys of
// read events. A relation name is vocabulary, not content: one that holds
// a secret is refused rather than stored redacted (the redaction marker is
// not a valid relation name). WriteTxn and Bulk share this one definition.

import (
	"encoding/json"
	"fmt"
)

// JSONRedactor is a Redactor that also reads JSON: RedactJSON redacts every
// string of a JSON value, decoded, and keeps it valid JSON; it fails only
// when raw is not JSON.
type JSONRedactor interface {
	RedactJSON(raw string) (string, int, error)
}

// redaction applies the store's Redactor to one write and counts what it
// replaced. The Redactor is a pure function of the text, so the answers
// for short texts (keys, types, provenance: a load names each node key
// about 16 times as an edge endpoint) are kept for the write's lifetime
// and not scanned again.
type redaction struct {
	r    Redactor
	n    int
	memo map[string]redacted
}

// redacted is one text's answer: the text with its secrets replaced and
// how many.
type redacted struct {
	out string
	n   int
}

// memoMax is the longest text whose answer is kept (keys are at most a few
// hundred bytes; payloads are not kept).
const memoMax = 512

// scan is s with its secrets replaced and how many, neither counted nor
// kept (a bulk load keeps its keys' answers itself: bulkKeys).
func (d *redaction) scan(s string) (string, int) {
	if d.r == nil || s == "" {
		return s, 0
	}
	return d.r.Redact(s)
}

// text is s with its secrets replaced.
func (d *redaction) text(s string) string {
	if d.r == nil || s == "" {
		return s
	}
	if a, ok := d.memo[s]; ok {
		d.n += a.n
		return a.out
	}
	out, n := d.r.Redact(s)
	d.n += n
	if len(s) <= memoMax {
		if d.memo == nil {
			d.memo = make(map[string]redacted)
		}
		d.memo[s] = redacted{out, n}
	}
	return out
}

// payload is p with the secrets in its strings replaced: string by string
// when the Redactor reads JSON (a match never spans two values, an escape
// never hides a token), else as text. The canonical form is computed
// afterwards, so either way the payload stays valid JSON.
func (d *redaction) payload(p json.RawMessage) json.RawMessage {
	if d.r == nil || len(p) == 0 {
		return p
	}
	if jr, ok := d.r.(JSONRedactor); ok {
		if out, n, err := jr.RedactJSON(string(p)); err == nil {
			d.n += n
			return json.RawMessage(out)
		}
	}
	return json.RawMessage(d.text(string(p)))
}

// nodePut is p with every field redacted (WriteTxn.PutNode).
func (d *redaction) nodePut(p NodePut) NodePut {
	p.Key, p.Type = d.text(p.Key), d.text(p.Type)
	p.Scope, p.RunID, p.TaskID = d.provenance(p.Scope, p.RunID, p.TaskID)
	p.Payload = d.payload(p.Payload)
	return p
}

// edgePut is p with every field redacted, or an error when its relation
// name holds a secret (WriteTxn.PutEdge).
func (d *redaction) edgePut(p EdgePut) (EdgePut, error) {
	p.Src, p.Dst = d.text(p.Src), d.text(p.Dst)
	p.Scope, p.RunID, p.TaskID = d.provenance(p.Scope, p.RunID, p.TaskID)
	p.Payload = d.payload(p.Payload)
	return p, d.relName(p.Rel)
}

// provenance is an operation's scope, run and task redacted.
func (d *redaction) provenance(scope, run, task string) (string, string, string) {
	return d.text(scope), d.text(run), d.text(task)
}

// meta is m with its provenance redacted.
func (d *redaction) meta(m WriteMeta) WriteMeta {
	return WriteMeta{Scope: d.text(m.Scope), RunID: d.text(m.RunID), TaskID: d.text(m.TaskID), Derived: m.Derived}
}

// relName refuses a relation name that holds a secret.
func (d *redaction) relName(name string) error {
	if d.r == nil || name == "" {
		return nil
	}
	n0 := d.n
	if out := d.text(name); d.n > n0 {
		d.n = n0 // refused, not redacted
		return fmt.Errorf("%w: relation name holds a secret (%s); relation names are not redacted, choose another name", ErrInvalid, out)
	}
	return nil
}
