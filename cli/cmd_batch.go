package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/suggest"
	"io"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func batchCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "batch",
		Usage: "apply JSON Lines of operations from stdin as one transaction: all or nothing",
		Description: "One JSON object per line, with \"op\" one of put_node, del_node, put_edge,\n" +
			"del_edge, put_kv, del_kv, add_rel and that op's fields, exactly as diff-since\n" +
			"--json prints them (\"rev\" and \"ts\" are accepted and ignored), e.g.\n" +
			"  {\"op\":\"put_edge\",\"src\":\"file:a.go\",\"rel\":\"defines\",\"dst\":\"sym:a.F\",\"weight\":1}\n" +
			"Blank lines are skipped. Any bad line fails the whole batch, naming the line.\n" +
			"--scope/--run/--task apply to every operation that does not set its own.\n" +
			"--bulk, for large loads of put_node and put_edge only (other ops are refused):\n" +
			"into a store that has never held a node or an edge, every keyspace is built in\n" +
			"memory and appended in key order (much faster, full pages); otherwise the\n" +
			"operations run as an ordinary transaction. The result is the same either way.",
		Flags: append(writeFlags(true), &cli.BoolFlag{Name: "bulk", Usage: "bulk load (put_node and put_edge only)"}),
		Run:   runBatch,
	})
}

// batchOp is one parsed line of a batch.
type batchOp struct {
	line   int
	op     string
	f      batchFields
	weight float32            // f.Weight checked; 0 when absent
	valid  lmdbstore.Validity // f.ValidFrom, f.ValidUntil parsed
}

// batchFields is the union of every op's fields (names as in opFields).
type batchFields struct {
	Key           string          `json:"key"`
	Type          string          `json:"type"`
	Payload       json.RawMessage `json:"payload"`
	Scope         string          `json:"scope"`
	RunID         string          `json:"run_id"`
	TaskID        string          `json:"task_id"`
	Src           string          `json:"src"`
	Rel           string          `json:"rel"`
	Dst           string          `json:"dst"`
	Weight        *float64        `json:"weight"`
	Namespace     string          `json:"namespace"`
	Bidirectional bool            `json:"bidirectional"`
	Inhibitory    bool            `json:"inhibitory"`
	Role          string          `json:"role"`
	ValidFrom     string          `json:"valid_from"`
	ValidUntil    string          `json:"valid_until"`
}

// batchRequired lists the fields each op must carry.
var batchRequired = map[string][]string{
	"put_node": {"key"},
	"del_node": {"key"},
	"put_edge": {"src", "rel", "dst"},
	"del_edge": {"src", "rel", "dst"},
	"put_kv":   {"scope", "namespace", "key", "payload"},
	"del_kv":   {"scope", "namespace", "key"},
	"add_rel":  {"rel"},
}

type batchJSON struct {
	Rev      uint64 `json:"rev"`
	TS       string `json:"ts,omitempty"`
	Ops      int    `json:"ops,omitempty"`      // omitted with rev 0: nothing committed (SPEC §6.3)
	Redacted int    `json:"redacted,omitempty"` // secrets replaced (SPEC §2)
}

func runBatch(k *call) error {
	ops, err := parseBatch(k.stdin())
	if err != nil {
		return err
	}
	var c lmdbstore.Commit
	if k.ctx.Bool("bulk") {
		c, err = bulkBatch(k, ops)
	} else {
		c, err = k.update(func(tx *lmdbstore.WriteTxn) error {
			for _, op := range ops {
				if err := applyBatchOp(tx, op); err != nil {
					return fmt.Errorf("batch line %d (%s): %w", op.line, op.op, err)
				}
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	if k.out.json {
		rec := batchJSON{Rev: uint64(c.Rev), Redacted: c.Redacted}
		if c.Rev != 0 {
			rec.TS, rec.Ops = records.Time(c.Time), len(ops)
		}
		return k.out.record(rec)
	}
	if c.Rev == 0 {
		return k.out.textf("rev 0 (no change)%s\n", redactedNote(c.Redacted))
	}
	return k.out.textf("rev %d (%d operations)%s\n", c.Rev, len(ops), redactedNote(c.Redacted))
}

// bulkBatch commits put_node and put_edge operations as one bulk load
// (lmdbstore.Bulk).
func bulkBatch(k *call, ops []batchOp) (lmdbstore.Commit, error) {
	for _, op := range ops {
		if op.op != "put_node" && op.op != "put_edge" {
			return lmdbstore.Commit{}, usageErr("batch line %d: --bulk takes only put_node and put_edge, not %s", op.line, op.op)
		}
	}
	s, err := k.open(false)
	if err != nil {
		return lmdbstore.Commit{}, err
	}
	b := s.NewBulk(k.meta())
	b.Grow(len(ops)/8, len(ops))
	for _, op := range ops {
		f := op.f
		if op.op == "put_node" {
			err = b.PutNode(lmdbstore.NodePut{Key: f.Key, Type: f.Type, Payload: f.Payload, Scope: f.Scope, RunID: f.RunID, TaskID: f.TaskID})
		} else {
			err = b.PutEdge(lmdbstore.EdgePut{Src: f.Src, Rel: f.Rel, Dst: f.Dst, Weight: op.weight, Payload: f.Payload, Scope: f.Scope, RunID: f.RunID, TaskID: f.TaskID})
		}
		if err != nil {
			return lmdbstore.Commit{}, fmt.Errorf("batch line %d (%s): %w", op.line, op.op, err)
		}
	}
	c, err := b.Commit()
	var opErr *lmdbstore.BulkOpError
	if errors.As(err, &opErr) && opErr.Op < len(ops) {
		op := ops[opErr.Op]
		return c, fmt.Errorf("batch line %d (%s): %w", op.line, op.op, opErr.Err)
	}
	return c, err
}

// parseBatch reads every line, then parses and validates them (on every
// core when there are many) before anything is written. The first bad line
// is the one reported.
func parseBatch(in io.Reader) ([]batchOp, error) {
	type rawLine struct {
		n    int
		line []byte
	}
	var lines []rawLine
	r := bufio.NewReaderSize(in, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			lines = append(lines, rawLine{n, line})
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("batch: reading stdin: %w", err)
		}
	}
	parsed := make([]*batchOp, len(lines))
	errs := make([]error, len(lines))
	workers := 1
	if len(lines) >= 4096 {
		workers = max(1, runtime.GOMAXPROCS(0))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w * len(lines) / workers; i < (w+1)*len(lines)/workers; i++ {
				parsed[i], errs[i] = parseBatchLine(lines[i].n, lines[i].line)
				if errs[i] != nil {
					return // later lines of this share cannot be the first bad one
				}
			}
		}()
	}
	wg.Wait()
	ops := make([]batchOp, 0, len(lines))
	for i, op := range parsed {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if op != nil {
			ops = append(ops, *op)
		}
	}
	return ops, nil
}

func parseBatchLine(n int, line []byte) (*batchOp, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return usageErr("batch line %d: %s", n, fmt.Sprintf(format, args...))
	}
	if !utf8.Valid(line) {
		return nil, bad("not valid UTF-8")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, bad("not a JSON object: %v", err)
	}
	var name string
	if err := json.Unmarshal(raw["op"], &name); err != nil || name == "" {
		return nil, bad(`missing "op" (one of %s)`, opNames())
	}
	fields, ok := opFields[name]
	if !ok {
		if s := suggest.Nearest(name, sortedKeys(opFields)); s != "" {
			return nil, bad("unknown op %q (did you mean %q?)", name, s)
		}
		return nil, bad("unknown op %q (one of %s)", name, opNames())
	}
	allowed := append([]string{"op", "rev", "ts"}, fields...)
	for _, key := range sortedKeys(raw) {
		if !slices.Contains(allowed, key) {
			return nil, bad("field %q is not allowed in %s", key, name)
		}
	}
	for _, key := range batchRequired[name] {
		if _, ok := raw[key]; !ok {
			return nil, bad("%s needs field %q", name, key)
		}
	}
	var f batchFields
	if err := json.Unmarshal(line, &f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, bad("field %q must be a JSON %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return nil, bad("%v", err)
	}
	if _, ok := raw["payload"]; ok && name != "put_kv" && string(f.Payload) == "null" {
		f.Payload = nil
	}
	op := &batchOp{line: n, op: name, f: f}
	for _, v := range []struct {
		name, s string
		t       *time.Time
	}{{"valid_from", f.ValidFrom, &op.valid.From}, {"valid_until", f.ValidUntil, &op.valid.Until}} {
		if v.s == "" {
			continue // absent or "": an open bound
		}
		t, err := parseTime(v.s)
		if err != nil {
			return nil, bad("field %q: %v", v.name, err)
		}
		*v.t = t
	}
	if f.Weight != nil {
		w, err := checkWeight("weight", *f.Weight)
		if err != nil {
			return nil, bad("%v", err)
		}
		op.weight = w
	}
	return op, nil
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

func mapsKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := mapsKeys(m)
	sort.Strings(keys)
	return keys
}

func opNames() string { return fmt.Sprint(sortedKeys(opFields)) }

func applyBatchOp(tx *lmdbstore.WriteTxn, op batchOp) error {
	f, weight := op.f, op.weight
	switch op.op {
	case "put_node":
		return tx.PutNode(lmdbstore.NodePut{Key: f.Key, Type: f.Type, Payload: f.Payload, Valid: op.valid, Scope: f.Scope, RunID: f.RunID, TaskID: f.TaskID})
	case "del_node":
		return tx.DeleteNode(f.Key)
	case "put_edge":
		return tx.PutEdge(lmdbstore.EdgePut{Src: f.Src, Rel: f.Rel, Dst: f.Dst, Weight: weight, Payload: f.Payload, Scope: f.Scope, RunID: f.RunID, TaskID: f.TaskID})
	case "del_edge":
		return tx.DeleteEdge(f.Src, f.Rel, f.Dst)
	case "put_kv":
		return tx.PutKV(lmdbstore.KVPut{Scope: f.Scope, Namespace: f.Namespace, Key: f.Key, Payload: f.Payload, Valid: op.valid, RunID: f.RunID, TaskID: f.TaskID})
	case "del_kv":
		return tx.DeleteKV(f.Scope, f.Namespace, f.Key)
	case "add_rel":
		if weight == 0 {
			weight = 1
		}
		role := roles.Memory
		if f.Role != "" {
			var err error
			if role, err = roles.Parse(f.Role); err != nil {
				return usageErr("%v", err)
			}
		}
		_, err := tx.AddRelation(lmdbstore.Relation{Name: f.Rel, DefaultWeight: weight, Bidirectional: f.Bidirectional, Inhibitory: f.Inhibitory, Role: role})
		return err
	}
	return fmt.Errorf("unknown op %q", op.op)
}
