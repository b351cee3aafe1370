package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
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
		Args:       []string{"REV|TIME"},
		ArgsOrFlag: "commit",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "commit", Usage: "the operations after the code graph was ingested at git commit `SHA` (instead of REV|TIME)"},
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
	var since lmdbstore.At
	var err error
	if k.ctx.IsSet("commit") {
		since, err = k.atCommit("--commit", k.ctx.String("commit"))
	} else {
		since, err = parseSince(k.args[0])
	}
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
		return ops.ScanLog(r, since, filter, func(op lmdbstore.Op, rel lmdbstore.Relation) error {
			if k.out.json {
				return k.out.record(ops.LogOpOf(op, rel))
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
