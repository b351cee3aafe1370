package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
	"github.com/urfave/cli/v2"
)

func diffSinceCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "diff-since",
		Usage: "list the operations committed after revision REV or time TIME, in commit order",
		Description: "The argument is a revision number (0: everything) or an RFC 3339 time (the\n" +
			"operations after the latest revision committed at or before it).\n" +
			"--json lines can be fed back to `memctl batch` to replay them.",
		Args: []string{"REV|TIME"},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Usage: "only operations of run `R`"},
			&cli.StringFlag{Name: "task", Usage: "only operations of task `T`"},
		},
		Run: runDiffSince,
	})
}

// parseSince reads a revision number or an RFC 3339 time.
func parseSince(s string) (lmdbstore.At, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return lmdbstore.AtRevision(lmdbstore.Revision(n)), nil
	}
	if t, err := parseTime(s); err == nil {
		return lmdbstore.AtTime(t), nil
	}
	return lmdbstore.At{}, usageErr("diff-since: %q is neither a revision number nor an RFC 3339 time", s)
}

func runDiffSince(k *call) error {
	since, err := parseSince(k.args[0])
	if err != nil {
		return err
	}
	filter := lmdbstore.DiffFilter{RunID: k.ctx.String("run"), TaskID: k.ctx.String("task")}
	s, err := k.open(true)
	if err != nil {
		return err
	}
	tw := k.out.table()
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		return r.DiffSince(since, filter, func(op lmdbstore.Op) error {
			var rel lmdbstore.Relation
			if op.Kind == lmdbstore.OpAddRel {
				// The log records a relation's name and weight; its flags
				// never change after AddRelation, so read them now.
				var err error
				if rel, err = r.RelationByName(op.Rel); err != nil {
					return err
				}
			}
			if k.out.json {
				line, err := opLine(op, rel)
				if err != nil {
					return err
				}
				_, err = k.out.buf.Write(line)
				return err
			}
			_, err := fmt.Fprintln(tw, opText(op, rel))
			return err
		})
	})
	if err != nil {
		return err
	}
	return tw.Flush()
}

// opFields lists, per op name, the fields a diff-since --json line carries
// after "rev", "ts" and "op", in order. batch accepts the same fields.
var opFields = map[string][]string{
	"put_node": {"key", "type", "payload", "valid_from", "valid_until", "scope", "run_id", "task_id"},
	"del_node": {"key", "scope", "run_id", "task_id"},
	"put_edge": {"src", "rel", "dst", "weight", "payload", "scope", "run_id", "task_id"},
	"del_edge": {"src", "rel", "dst", "scope", "run_id", "task_id"},
	"put_kv":   {"scope", "namespace", "key", "payload", "valid_from", "valid_until", "run_id", "task_id"},
	"del_kv":   {"scope", "namespace", "key", "run_id", "task_id"},
	"add_rel":  {"rel", "weight", "bidirectional", "inhibitory", "role", "scope", "run_id", "task_id"},
}

// opField is the value of field name of op, and whether to print it (an
// edge's payload and valid-time bounds are printed only when present). rel
// is the relation an add_rel op registered.
func opField(op lmdbstore.Op, rel lmdbstore.Relation, name string) (any, bool) {
	switch name {
	case "valid_from":
		return records.Time(op.Valid.From), !op.Valid.From.IsZero()
	case "valid_until":
		return records.Time(op.Valid.Until), !op.Valid.Until.IsZero()
	case "bidirectional":
		return rel.Bidirectional, true
	case "inhibitory":
		return rel.Inhibitory, true
	case "role":
		return rel.Role.String(), true
	case "key":
		if op.Kind == lmdbstore.OpPutNode || op.Kind == lmdbstore.OpDelNode {
			return op.NodeKey, true
		}
		return op.Key, true
	case "type":
		return op.NodeType, true
	case "payload":
		if op.Kind == lmdbstore.OpPutEdge {
			p := records.OptionalPayload(op.Payload)
			return p, p != nil
		}
		return records.JSONValue(op.Payload), true
	case "scope":
		return op.Scope, true
	case "run_id":
		return op.RunID, true
	case "task_id":
		return op.TaskID, true
	case "src":
		return op.Src, true
	case "rel":
		return op.Rel, true
	case "dst":
		return op.Dst, true
	case "weight":
		return formatWeight(op.Weight), true
	case "namespace":
		return op.Namespace, true
	}
	return nil, false
}

// opLine is op as one JSON line: {"rev":…,"ts":…,"op":…, fields…}\n.
func opLine(op lmdbstore.Op, rel lmdbstore.Relation) ([]byte, error) {
	name := op.Kind.String()
	fields, ok := opFields[name]
	if !ok {
		return nil, fmt.Errorf("diff-since: revision %d holds an operation of unknown kind %d", op.Rev, op.Kind)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"rev":%d,"ts":%q,"op":%q`, op.Rev, records.Time(op.TS), name)
	for _, f := range fields {
		v, ok := opField(op, rel, f)
		if !ok {
			continue
		}
		enc, err := marshalNoEscape(v)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, ",%q:%s", f, enc)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// opText is op as one tab-separated text row:
// rev N, time, op, subject, details.
func opText(op lmdbstore.Op, rel lmdbstore.Relation) string {
	var subject string
	var details []string
	switch op.Kind {
	case lmdbstore.OpPutNode:
		subject = op.NodeKey
		details = append(details, "type="+op.NodeType, "payload="+string(records.JSONValue(op.Payload)))
		details = append(details, validDetails(op.Valid)...)
	case lmdbstore.OpDelNode:
		subject = op.NodeKey
	case lmdbstore.OpPutEdge:
		subject = op.Src + " " + op.Rel + " " + op.Dst
		details = append(details, "weight="+string(formatWeight(op.Weight)))
		if p := records.OptionalPayload(op.Payload); p != nil {
			details = append(details, "payload="+string(p))
		}
	case lmdbstore.OpDelEdge:
		subject = op.Src + " " + op.Rel + " " + op.Dst
	case lmdbstore.OpPutKV:
		subject = op.Scope + "/" + op.Namespace + "/" + op.Key
		details = append(details, "payload="+string(records.JSONValue(op.Payload)))
		details = append(details, validDetails(op.Valid)...)
	case lmdbstore.OpDelKV:
		subject = op.Scope + "/" + op.Namespace + "/" + op.Key
	case lmdbstore.OpAddRel:
		subject = op.Rel
		details = append(details, "weight="+string(formatWeight(op.Weight)))
		if rel.Bidirectional {
			details = append(details, "bidirectional")
		}
		if rel.Inhibitory {
			details = append(details, "inhibitory")
		}
		details = append(details, "role="+rel.Role.String())
	}
	if op.Scope != "" && op.Kind != lmdbstore.OpPutKV && op.Kind != lmdbstore.OpDelKV {
		details = append(details, "scope="+op.Scope)
	}
	if op.RunID != "" {
		details = append(details, "run="+op.RunID)
	}
	if op.TaskID != "" {
		details = append(details, "task="+op.TaskID)
	}
	return fmt.Sprintf("rev %d\t%s\t%s\t%s\t%s", op.Rev, formatTextTime(op.TS), op.Kind, textCell(subject), textCell(strings.Join(details, " ")))
}

// validDetails are the valid-time bounds of a put in diff-since text.
func validDetails(v lmdbstore.Validity) []string {
	var d []string
	if !v.From.IsZero() {
		d = append(d, "valid_from="+formatTextTime(v.From))
	}
	if !v.Until.IsZero() {
		d = append(d, "valid_until="+formatTextTime(v.Until))
	}
	return d
}
