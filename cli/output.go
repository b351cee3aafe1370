package cli

// Output helpers shared by every verb. Text is for people; with --json every
// record is one JSON object on its own line, fields in the order SPEC.md §6
// lists them. Both forms are deterministic: same store state, same bytes.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// output writes one command's results. It buffers; run flushes it once the
// command has succeeded (a failed command prints only its error line).
type output struct {
	json bool
	buf  *bufio.Writer
	enc  *json.Encoder
}

func newOutput(w io.Writer, asJSON bool) *output {
	buf := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return &output{json: asJSON, buf: buf, enc: enc}
}

// record writes v as one JSON line.
func (o *output) record(v any) error { return o.enc.Encode(v) }

// textf writes formatted text.
func (o *output) textf(format string, args ...any) error {
	_, err := fmt.Fprintf(o.buf, format, args...)
	return err
}

// table starts an aligned text table: rows are cells separated by '\t',
// each written whole (one Write ending in '\n'). Its columns are aligned
// within blocks of tableBlock rows, written as each block is complete:
// a tabwriter holds every row until it is flushed, and diff-since of a
// 24M-edge load has tens of millions.
func (o *output) table() *blockTable {
	return &blockTable{tw: tabwriter.NewWriter(o.buf, 0, 0, 2, ' ', 0)}
}

// tableBlock is how many rows of a text table are aligned together.
const tableBlock = 4096

// blockTable is a text table aligned block by block (output.table).
type blockTable struct {
	tw   *tabwriter.Writer
	rows int
}

func (t *blockTable) Write(p []byte) (int, error) {
	n, err := t.tw.Write(p)
	if err != nil {
		return n, err
	}
	t.rows += bytes.Count(p, []byte{'\n'})
	if t.rows >= tableBlock && len(p) > 0 && p[len(p)-1] == '\n' {
		t.rows = 0
		err = t.tw.Flush()
	}
	return n, err
}

// Flush writes the rows of the last block.
func (t *blockTable) Flush() error { return t.tw.Flush() }

func (o *output) flush() error { return o.buf.Flush() }

// textTimeLayout is RFC 3339 with all nine nanosecond digits, so text
// columns of times line up.
const textTimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// formatTextTime is a time in text output (fixed width, UTC).
func formatTextTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(textTimeLayout)
}

// formatWeight is the shortest decimal that reads back as the same float32
// (records.Weight's), as a JSON number.
func formatWeight(w float32) json.Number { return json.Number(records.Weight(w).String()) }

// orDash renders an empty text field as "-" so columns stay aligned.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// textCell makes s safe for one tab-separated text cell.
func textCell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// --- records -------------------------------------------------------------

func (o *output) node(n lmdbstore.Node, st lmdbstore.Status) error {
	r := records.NodeOf(n, st)
	if o.json {
		return o.record(r)
	}
	tw := o.table()
	rows := [][2]string{
		{"key", r.Key},
		{"id", r.ID},
		{"type", r.Type},
		{"scope", orDash(r.Scope)},
		{"rev", fmt.Sprintf("%d (created at rev %d)", n.Rev, n.CreatedRev)},
		{"created", formatTextTime(n.CreatedTS)},
		{"updated", formatTextTime(n.UpdatedTS)},
		{"run", orDash(r.RunID)},
		{"task", orDash(r.TaskID)},
		{"payload", string(r.Payload)},
	}
	rows = append(rows, statusRows(n.Valid, st)...)
	for _, kv := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], textCell(kv[1]))
	}
	return tw.Flush()
}

// statusRows are the text rows of an item's validity and status.
func statusRows(v lmdbstore.Validity, st lmdbstore.Status) [][2]string {
	rows := [][2]string{{"valid", validText(v)}, {"status", statusWord(st)}}
	for _, s := range st.SupersededBy {
		rows = append(rows, [2]string{"superseded", fmt.Sprintf("by %s at rev %d (%s)", s.By, s.Rev, formatTextTime(s.TS))})
	}
	if st.Newest != "" {
		rows = append(rows, [2]string{"newest", st.Newest})
	}
	for _, c := range st.Contradicts {
		rows = append(rows, [2]string{"contradicts", c})
	}
	return rows
}

// validText is a valid-time interval in text output.
func validText(v lmdbstore.Validity) string {
	switch {
	case v.IsZero():
		return "always"
	case v.Until.IsZero():
		return "from " + formatTextTime(v.From)
	case v.From.IsZero():
		return "until " + formatTextTime(v.Until)
	}
	return "from " + formatTextTime(v.From) + " until " + formatTextTime(v.Until)
}

// statusWord is "current", "superseded", "expired" (or "not yet valid"
// when its valid time has not begun) or both, with "(conflict)" when a
// current item is contradicted.
func statusWord(st lmdbstore.Status) string {
	var words []string
	if st.Superseded() {
		words = append(words, "superseded")
	}
	switch {
	case st.Pending:
		words = append(words, "not yet valid")
	case !st.Valid:
		words = append(words, "expired")
	}
	if len(words) == 0 {
		if len(st.Contradicts) > 0 {
			return "current (conflict)"
		}
		return "current"
	}
	return strings.Join(words, ", ")
}

// statusNote is the short status cell of list rows: "" for a current item
// without conflicts.
func statusNote(st lmdbstore.Status) string {
	if st.Current() && len(st.Contradicts) == 0 {
		return ""
	}
	note := "[" + statusWord(st)
	if st.Newest != "" {
		note += ", newest " + st.Newest
	}
	if len(st.Contradicts) > 0 {
		note += ", contradicts " + strings.Join(st.Contradicts, " ")
	}
	return note + "]"
}

// edgeJSON is an edge as --json prints it (SPEC.md §6.3): the record,
// and for text output the peer's status note.
type edgeJSON struct {
	records.Edge
	note string // text output: statusNote of the peer
}

func (o *output) edges(es []edgeJSON) error {
	if o.json {
		for _, e := range es {
			if err := o.record(e); err != nil {
				return err
			}
		}
		return nil
	}
	tw := o.table()
	for _, e := range es {
		fmt.Fprintf(tw, "%s\t%s\t%s\tweight %s\trev %d", textCell(e.Src), e.Rel, textCell(e.Dst), e.Weight, e.Rev)
		if e.Payload != nil {
			fmt.Fprintf(tw, "\t%s", textCell(string(e.Payload)))
		}
		if e.note != "" {
			fmt.Fprintf(tw, "\t%s", textCell(e.note))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// kvs prints entries with their statuses (sts[i] is kvs[i]'s): text is one
// aligned row per entry, with the validity and a status note when not
// simply current.
func (o *output) kvs(kvs []lmdbstore.KV, sts []lmdbstore.Status) error {
	if o.json {
		for i, kv := range kvs {
			if err := o.record(records.KVOf(kv, sts[i])); err != nil {
				return err
			}
		}
		return nil
	}
	tw := o.table()
	for i, kv := range kvs {
		r := records.KVOf(kv, sts[i])
		fmt.Fprintf(tw, "%s/%s/%s\trev %d\trun %s\ttask %s\t%s",
			textCell(r.Scope), textCell(r.Namespace), textCell(r.Key), r.Rev,
			textCell(orDash(r.RunID)), textCell(orDash(r.TaskID)), textCell(string(r.Payload)))
		if !kv.Valid.IsZero() {
			fmt.Fprintf(tw, "\tvalid %s", validText(kv.Valid))
		}
		if note := statusNote(sts[i]); note != "" {
			fmt.Fprintf(tw, "\t%s", textCell(note))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// commit prints the revision a write committed: "rev N" or {"rev":N,"ts":…}.
// A write that changed nothing commits no revision: "rev 0 (no change)".
func (o *output) commit(c lmdbstore.Commit) error {
	if c.Rev == 0 {
		c.Time = time.Time{}
	}
	if o.json {
		return o.record(records.CommitOf(c))
	}
	if c.Rev == 0 {
		return o.textf("rev 0 (no change)%s\n", redactedNote(c.Redacted))
	}
	return o.textf("rev %d%s\n", c.Rev, redactedNote(c.Redacted))
}

// redactedNote tells how many secrets a write replaced ("" for none).
func redactedNote(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " (1 secret redacted)"
	}
	return fmt.Sprintf(" (%d secrets redacted)", n)
}
