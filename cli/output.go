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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memctl/memctl/lmdbstore"
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

// table starts an aligned text table: rows are cells separated by '\t'.
func (o *output) table() *tabwriter.Writer {
	return tabwriter.NewWriter(o.buf, 0, 0, 2, ' ', 0)
}

func (o *output) flush() error { return o.buf.Flush() }

// formatTime is the time format of --json output: RFC 3339 with
// nanoseconds (trailing zeros trimmed), UTC.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// formatID is a node id as 16 lowercase hex digits.
func formatID(id lmdbstore.NodeID) string { return fmt.Sprintf("%016x", uint64(id)) }

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

// formatWeight is the shortest decimal that reads back as the same float32.
func formatWeight(w float32) json.Number {
	return json.Number(strconv.FormatFloat(float64(w), 'g', -1, 32))
}

// jsonValue is a stored payload as a JSON value: null when empty. Invalid
// bytes (only possible in a damaged store) are printed as a JSON string so
// the line stays valid JSON.
func jsonValue(p []byte) json.RawMessage {
	if len(bytes.TrimSpace(p)) == 0 {
		return json.RawMessage("null")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, p); err != nil {
		q, _ := json.Marshal(string(p))
		return q
	}
	return b.Bytes()
}

// optionalPayload is a payload that is omitted when absent or null.
func optionalPayload(p []byte) json.RawMessage {
	v := jsonValue(p)
	if string(v) == "null" {
		return nil
	}
	return v
}

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

// nodeJSON is a node as --json prints it (SPEC.md §6.3).
type nodeJSON struct {
	Key       string          `json:"key"`
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	Scope     string          `json:"scope"`
	Rev       uint64          `json:"rev"`
	CreatedTS string          `json:"created_ts"`
	UpdatedTS string          `json:"updated_ts"`
	RunID     string          `json:"run_id"`
	TaskID    string          `json:"task_id"`
}

func nodeRecord(n lmdbstore.Node) nodeJSON {
	return nodeJSON{
		Key:       n.Key,
		ID:        formatID(n.ID),
		Type:      n.Type,
		Payload:   jsonValue(n.Payload),
		Scope:     n.Scope,
		Rev:       uint64(n.Rev),
		CreatedTS: formatTime(n.CreatedTS),
		UpdatedTS: formatTime(n.UpdatedTS),
		RunID:     n.RunID,
		TaskID:    n.TaskID,
	}
}

func (o *output) node(n lmdbstore.Node) error {
	if o.json {
		return o.record(nodeRecord(n))
	}
	r := nodeRecord(n)
	tw := o.table()
	for _, kv := range [][2]string{
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
	} {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], textCell(kv[1]))
	}
	return tw.Flush()
}

// edgeJSON is an edge as --json prints it (SPEC.md §6.3).
type edgeJSON struct {
	Src     string          `json:"src"`
	Rel     string          `json:"rel"`
	Dst     string          `json:"dst"`
	Rev     uint64          `json:"rev"`
	TS      string          `json:"ts"`
	Weight  json.Number     `json:"weight"`
	Payload json.RawMessage `json:"payload,omitempty"`
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
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// kvJSON is a policy-memory entry as --json prints it (SPEC.md §6.3).
type kvJSON struct {
	Scope     string          `json:"scope"`
	Namespace string          `json:"namespace"`
	Key       string          `json:"key"`
	Payload   json.RawMessage `json:"payload"`
	Rev       uint64          `json:"rev"`
	TS        string          `json:"ts"`
	RunID     string          `json:"run_id"`
	TaskID    string          `json:"task_id"`
}

func kvRecord(kv lmdbstore.KV) kvJSON {
	return kvJSON{
		Scope:     kv.Scope,
		Namespace: kv.Namespace,
		Key:       kv.Key,
		Payload:   jsonValue(kv.Payload),
		Rev:       uint64(kv.Rev),
		TS:        formatTime(kv.TS),
		RunID:     kv.RunID,
		TaskID:    kv.TaskID,
	}
}

// kvs prints entries: text is one aligned row per entry.
func (o *output) kvs(kvs []lmdbstore.KV) error {
	if o.json {
		for _, kv := range kvs {
			if err := o.record(kvRecord(kv)); err != nil {
				return err
			}
		}
		return nil
	}
	tw := o.table()
	for _, kv := range kvs {
		r := kvRecord(kv)
		fmt.Fprintf(tw, "%s/%s/%s\trev %d\trun %s\ttask %s\t%s\n",
			textCell(r.Scope), textCell(r.Namespace), textCell(r.Key), r.Rev,
			textCell(orDash(r.RunID)), textCell(orDash(r.TaskID)), textCell(string(r.Payload)))
	}
	return tw.Flush()
}

// commitJSON is what every write prints (SPEC.md §6.2).
type commitJSON struct {
	Rev      uint64 `json:"rev"`
	TS       string `json:"ts,omitempty"`
	Redacted int    `json:"redacted,omitempty"` // secrets replaced (SPEC §2)
}

// commit prints the revision a write committed: "rev N" or {"rev":N,"ts":…}.
// A write that changed nothing commits no revision: "rev 0 (no change)".
func (o *output) commit(c lmdbstore.Commit) error {
	if c.Rev == 0 {
		c.Time = time.Time{}
	}
	if o.json {
		return o.record(commitJSON{Rev: uint64(c.Rev), TS: formatTime(c.Time), Redacted: c.Redacted})
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
