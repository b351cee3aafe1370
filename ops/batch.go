package ops

// Batch input (SPEC.md §6.4): log operations as LogOp writes them, checked
// in full before anything is written, then applied in order in one write
// transaction: all or nothing. The CLI reads them as JSON Lines
// (ParseBatch), the MCP server as an array in its arguments; both check
// each op with BatchOp.Check and commit with Batch.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/suggest"
)

// BatchOp is one operation of a batch: "op" and that op's fields, exactly
// as LogOp writes them (rev and ts are accepted and ignored).
type BatchOp struct {
	Op            string          `json:"op" jsonschema:"put_node, del_node, put_edge, del_edge, put_kv, del_kv or add_rel"`
	Key           string          `json:"key,omitempty" jsonschema:"put_node, del_node: the node key; put_kv, del_kv: the entry key"`
	Type          string          `json:"type,omitempty" jsonschema:"put_node: the node type"`
	Payload       json.RawMessage `json:"payload,omitempty" jsonschema:"put_node, put_edge, put_kv: the JSON payload (required for put_kv)"`
	Src           string          `json:"src,omitempty" jsonschema:"put_edge, del_edge: source key"`
	Rel           string          `json:"rel,omitempty" jsonschema:"put_edge, del_edge: relation; add_rel: the new relation's name"`
	Dst           string          `json:"dst,omitempty" jsonschema:"put_edge, del_edge: destination key"`
	Weight        *float64        `json:"weight,omitempty" jsonschema:"put_edge: edge weight; add_rel: default weight"`
	Namespace     string          `json:"namespace,omitempty" jsonschema:"put_kv, del_kv: namespace"`
	Bidirectional bool            `json:"bidirectional,omitempty" jsonschema:"add_rel: engines also follow the relation backwards"`
	Inhibitory    bool            `json:"inhibitory,omitempty" jsonschema:"add_rel: engines subtract along the relation"`
	Role          string          `json:"role,omitempty" jsonschema:"add_rel: structure, usage, history or memory (default memory)"`
	ValidFrom     string          `json:"valid_from,omitempty" jsonschema:"put_node, put_kv: the fact holds from this RFC 3339 time on"`
	ValidUntil    string          `json:"valid_until,omitempty" jsonschema:"put_node, put_kv: the fact holds until this RFC 3339 time (exclusive)"`
	Scope         string          `json:"scope,omitempty" jsonschema:"provenance scope; put_kv, del_kv: the entry's scope (default: the batch's)"`
	RunID         string          `json:"run_id,omitempty"`
	TaskID        string          `json:"task_id,omitempty"`
	Rev           uint64          `json:"rev,omitempty" jsonschema:"ignored (diff_since output replays as is)"`
	TS            string          `json:"ts,omitempty" jsonschema:"ignored"`

	present map[string]bool // the fields the input carried
}

// UnmarshalJSON decodes op and remembers which fields the input carried
// (Check refuses foreign ones and wants the required ones).
func (o *BatchOp) UnmarshalJSON(b []byte) error {
	type plain BatchOp
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*o = BatchOp(p)
	o.present = make(map[string]bool, len(m))
	for k := range m {
		o.present[k] = true
	}
	return nil
}

// CheckedOp is a batch op that passed Check: ready to apply.
type CheckedOp struct {
	BatchOp
	weight float32            // 0: absent
	valid  lmdbstore.Validity // ValidFrom, ValidUntil parsed
	role   roles.Role         // add_rel
}

// Check validates op before anything is written: a known op, only its
// fields, the required ones, times, weight and role.
func (o BatchOp) Check() (CheckedOp, error) {
	if err := o.checkShape(); err != nil {
		return CheckedOp{}, err
	}
	return o.checkValues()
}

// checkShape checks the op's name and which fields it carries.
func (o BatchOp) checkShape() error {
	spec, ok := specOf(o.Op)
	if !ok {
		if s := suggest.Nearest(o.Op, OpNames()); s != "" {
			return invalidf("unknown op %q (did you mean %q?)", o.Op, s)
		}
		return invalidf("unknown op %q (one of %v)", o.Op, OpNames())
	}
	keys := make([]string, 0, len(o.present))
	for k := range o.present {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "op" && k != "rev" && k != "ts" && !slices.Contains(spec.fields, k) {
			return invalidf("field %q is not allowed in %s", k, o.Op)
		}
	}
	for _, k := range spec.required {
		if !o.present[k] {
			return invalidf("%s needs field %q", o.Op, k)
		}
	}
	return nil
}

// checkValues checks the values of an op of the right shape.
func (o BatchOp) checkValues() (CheckedOp, error) {
	c := CheckedOp{BatchOp: o, role: roles.Memory}
	var err error
	if c.valid.From, err = checkTime("valid_from", o.ValidFrom); err != nil {
		return CheckedOp{}, err
	}
	if c.valid.Until, err = checkTime("valid_until", o.ValidUntil); err != nil {
		return CheckedOp{}, err
	}
	if o.Op == "add_rel" && o.Role != "" {
		r, err := roles.Parse(o.Role)
		if err != nil {
			return CheckedOp{}, invalidf("role: %v", err)
		}
		c.role = r
	}
	if o.Op != "put_kv" && string(o.Payload) == "null" {
		c.Payload = nil // an edge or node payload of null means none
	}
	w, err := CheckWeight("weight", o.Weight)
	if err != nil {
		return CheckedOp{}, err
	}
	c.weight = w
	return c, nil
}

// checkTime parses field name's RFC 3339 value; "" (absent) is an open
// bound, the zero time.
func checkTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := ParseTime(v)
	if err != nil {
		return time.Time{}, invalidf("field %q: %v", name, err)
	}
	return t, nil
}

// Apply writes op in tx.
func (c *CheckedOp) Apply(tx *lmdbstore.WriteTxn) error {
	switch c.Op {
	case "put_node":
		return tx.PutNode(lmdbstore.NodePut{Key: c.Key, Type: c.Type, Payload: c.Payload, Valid: c.valid, Scope: c.Scope, RunID: c.RunID, TaskID: c.TaskID})
	case "del_node":
		return tx.DeleteNode(c.Key)
	case "put_edge":
		return tx.PutEdge(c.edgePut())
	case "del_edge":
		return tx.DeleteEdge(c.Src, c.Rel, c.Dst)
	case "put_kv":
		return tx.PutKV(lmdbstore.KVPut{Scope: c.Scope, Namespace: c.Namespace, Key: c.Key, Payload: c.Payload, Valid: c.valid, RunID: c.RunID, TaskID: c.TaskID})
	case "del_kv":
		return tx.DeleteKV(c.Scope, c.Namespace, c.Key)
	case "add_rel":
		w := c.weight
		if w == 0 {
			w = 1
		}
		_, err := tx.AddRelation(lmdbstore.Relation{Name: c.Rel, DefaultWeight: w, Bidirectional: c.Bidirectional, Inhibitory: c.Inhibitory, Role: c.role})
		return err
	}
	return fmt.Errorf("unknown op %q", c.Op)
}

func (c *CheckedOp) edgePut() lmdbstore.EdgePut {
	return lmdbstore.EdgePut{Src: c.Src, Rel: c.Rel, Dst: c.Dst, Weight: c.weight, Payload: c.Payload, Scope: c.Scope, RunID: c.RunID, TaskID: c.TaskID}
}

// Bulkable reports whether op may be part of a bulk load (BulkBatch).
func (c *CheckedOp) Bulkable() bool { return c.Op == "put_node" || c.Op == "put_edge" }

// BatchError is the failure of op Index (0-based) of a batch; Err is the
// store's error.
type BatchError struct {
	Index int
	Op    string
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("op %d (%s): %v", e.Index+1, e.Op, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// Batch applies ops in order in one write transaction with meta: all or
// nothing. A failing op is a *BatchError.
func Batch(s *lmdbstore.Store, meta lmdbstore.WriteMeta, ops []CheckedOp) (lmdbstore.Commit, error) {
	return s.Update(meta, func(tx *lmdbstore.WriteTxn) error {
		for i, op := range ops {
			if err := op.Apply(tx); err != nil {
				return &BatchError{Index: i, Op: op.Op, Err: err}
			}
		}
		return nil
	})
}

// LineError is a bad line of JSON Lines batch input.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("batch line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ParseBatch reads JSON Lines batch input: every line, then parses and
// checks them (on every core when there are many) before anything is
// written. Blank lines are skipped; lines[i] is the 1-based input line of
// ops[i]. The first bad line is the one reported, as a *LineError.
func ParseBatch(in io.Reader) (ops []CheckedOp, lines []int, err error) {
	type rawLine struct {
		n    int
		line []byte
	}
	var raw []rawLine
	r := bufio.NewReaderSize(in, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			raw = append(raw, rawLine{n, line})
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("batch: reading input: %w", err)
		}
	}
	parsed := make([]CheckedOp, len(raw))
	blank := make([]bool, len(raw))
	errs := make([]error, len(raw))
	workers := 1
	if len(raw) >= 4096 {
		workers = max(1, runtime.GOMAXPROCS(0))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p lineParser
			for i := w * len(raw) / workers; i < (w+1)*len(raw)/workers; i++ {
				blank[i], errs[i] = p.parse(raw[i].line, &parsed[i])
				if errs[i] != nil {
					errs[i] = &LineError{raw[i].n, errs[i]}
					return // later lines of this share cannot be the first bad one
				}
			}
		}()
	}
	wg.Wait()
	ops = parsed[:0] // compacted in place: a large batch's ops are held once
	lines = make([]int, 0, len(raw))
	for i := range parsed {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		if !blank[i] {
			ops = append(ops, parsed[i])
			lines = append(lines, raw[i].n)
		}
	}
	return ops, lines, nil
}

// lineParser parses lines on one goroutine. Which members a line of a
// given op may and must carry depends on the op and the set of members
// alone, so the shape check's answer (and the presence map, read-only once
// made) is kept per pair.
type lineParser struct {
	shapes map[shapeKey]shapeAnswer
	// last is the last shape answered (lines of a batch mostly share one).
	last struct {
		key shapeKey
		a   shapeAnswer
		ok  bool
	}
	// dropWeight: the ops are consumed before the next line is parsed, so
	// a weight stays in CheckedOp.weight only (Weight is nil): no
	// allocation per weight.
	dropWeight bool
	weight     float64
}

type shapeKey struct {
	op  string
	set fieldSet
}

type shapeAnswer struct {
	present map[string]bool
	err     error
}

// parse parses and checks one line into c; blank for a blank one.
func (p *lineParser) parse(line []byte, c *CheckedOp) (blank bool, err error) {
	return p.parseText(string(bytes.TrimSpace(line)), c)
}

// parseText is parse of a line held as a string (c's strings are
// substrings of it).
func (p *lineParser) parseText(line string, c *CheckedOp) (blank bool, err error) {
	line = strings.TrimSpace(line)
	if len(line) == 0 {
		return true, nil
	}
	if !utf8.ValidString(line) {
		return false, invalidf("not valid UTF-8")
	}
	var op BatchOp
	if set, err := decodeBatchLine(line, &op, &p.weight); err == nil && op.Op != "" {
		shape, err := p.shape(op.Op, set)
		if err != nil {
			return false, err
		}
		op.present = shape
		*c, err = op.checkValues()
		if c.Weight != nil {
			c.Weight = nil
			if !p.dropWeight {
				c.Weight = new(float64) // one per op: the ops outlive this call
				*c.Weight = p.weight
			}
		}
		return false, err
	}
	slow, err := parseBatchLineSlow([]byte(line))
	if err != nil {
		return false, err
	}
	*c = *slow
	if p.dropWeight {
		c.Weight = nil
	}
	return false, nil
}

// shape is checkShape's answer for an op of that name carrying set.
func (p *lineParser) shape(op string, set fieldSet) (map[string]bool, error) {
	k := shapeKey{op, set}
	if p.last.ok && p.last.key == k {
		return p.last.a.present, p.last.a.err
	}
	if a, ok := p.shapes[k]; ok {
		p.last.key, p.last.a, p.last.ok = shapeKey{strings.Clone(op), set}, a, true // not a view of the input
		return a.present, a.err
	}
	present := make(map[string]bool)
	for f := range numBatchFields {
		if set&(1<<f) != 0 {
			present[batchFieldNames[f]] = true
		}
	}
	err := BatchOp{Op: op, present: present}.checkShape()
	if p.shapes == nil {
		p.shapes = make(map[shapeKey]shapeAnswer)
	}
	k.op = strings.Clone(op) // kept: not a view of the input
	p.shapes[k] = shapeAnswer{present, err}
	return present, err
}

// parseBatchLineSlow parses and checks one non-blank line with
// encoding/json: the lines decodeBatchLine leaves to it, and the errors.
func parseBatchLineSlow(line []byte) (*CheckedOp, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, invalidf("not a JSON object: %v", err)
	}
	var name string
	if err := json.Unmarshal(raw["op"], &name); err != nil || name == "" {
		return nil, invalidf(`missing "op" (one of %v)`, OpNames())
	}
	shape := BatchOp{Op: name, present: make(map[string]bool, len(raw))}
	for k := range raw {
		shape.present[k] = true
	}
	if err := shape.checkShape(); err != nil {
		return nil, err
	}
	var op BatchOp
	if err := json.Unmarshal(line, &op); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, invalidf("field %q must be a JSON %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return nil, invalidf("%v", err)
	}
	c, err := op.checkValues()
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// jsonKind names a Go kind the way a JSON author would.
func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "float64", "ptr":
		return "number"
	}
	return goKind
}
