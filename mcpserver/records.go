package mcpserver

// The records memctl's own tools return. They are the CLI's --json records
// (SPEC.md §6.3) field for field, so a tool's answer and `memctl --json`'s
// answer on the same store compare equal.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// Weight is an edge weight: a JSON number, the shortest decimal that reads
// back as the same float32 (0.3, not 0.30000001192092896).
type Weight float32

func (w Weight) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(w), 'g', -1, 32), nil
}

// Score is an engine score: the shortest decimal that reads back as the
// same float64.
type Score float64

func (s Score) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(s), 'g', -1, 64), nil
}

// NodeRecord is one node version (SPEC.md §6.3 "node").
type NodeRecord struct {
	Key       string          `json:"key"`
	ID        string          `json:"id" jsonschema:"node id: 16 lowercase hex digits"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload" jsonschema:"the stored JSON value (null when none)"`
	Scope     string          `json:"scope"`
	Rev       uint64          `json:"rev" jsonschema:"revision that wrote this version"`
	CreatedTS string          `json:"created_ts"`
	UpdatedTS string          `json:"updated_ts"`
	RunID     string          `json:"run_id"`
	TaskID    string          `json:"task_id"`
	// Valid time and status (SPEC.md §4), as the CLI prints them.
	ValidFrom  string       `json:"valid_from" jsonschema:"start of the valid time (RFC 3339), empty when open"`
	ValidUntil string       `json:"valid_until" jsonschema:"end of the valid time (exclusive), empty when open"`
	Status     StatusRecord `json:"status" jsonschema:"current, superseded (by what, since when) or expired, and contradictions"`
}

// StatusRecord is a memory item's status (SPEC.md §6.3 "status").
type StatusRecord struct {
	Current      bool                 `json:"current" jsonschema:"valid now and superseded by nothing"`
	Expired      bool                 `json:"expired" jsonschema:"its valid time does not contain the read's valid-at time"`
	Pending      bool                 `json:"pending" jsonschema:"not valid because its valid time begins after the read's valid-at time (not yet valid rather than expired)"`
	SupersededBy []SupersessionRecord `json:"superseded_by" jsonschema:"live supersedes edges into the item, oldest first"`
	Newest       string               `json:"newest" jsonschema:"the newest item of its supersede chain; empty when not superseded"`
	Contradicts  []string             `json:"contradicts" jsonschema:"current items a contradicts edge joins it to"`
}

// SupersessionRecord is one superseder.
type SupersessionRecord struct {
	Key string `json:"key"`
	Rev uint64 `json:"rev" jsonschema:"revision that created the supersedes edge"`
	TS  string `json:"ts"`
}

func statusRecord(st lmdbstore.Status) StatusRecord {
	out := StatusRecord{Current: st.Current(), Expired: !st.Valid, Pending: st.Pending, Newest: st.Newest,
		SupersededBy: []SupersessionRecord{}, Contradicts: append([]string{}, st.Contradicts...)}
	for _, s := range st.SupersededBy {
		out.SupersededBy = append(out.SupersededBy, SupersessionRecord{Key: s.By, Rev: uint64(s.Rev), TS: formatTime(s.TS)})
	}
	return out
}

func nodeRecord(n lmdbstore.Node, st lmdbstore.Status) NodeRecord {
	return NodeRecord{
		ValidFrom: formatTime(n.Valid.From), ValidUntil: formatTime(n.Valid.Until), Status: statusRecord(st),
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

// EdgeRecord is one live edge (SPEC.md §6.3 "edge").
type EdgeRecord struct {
	Src     string          `json:"src"`
	Rel     string          `json:"rel"`
	Dst     string          `json:"dst"`
	Rev     uint64          `json:"rev" jsonschema:"revision that wrote this version"`
	TS      string          `json:"ts" jsonschema:"commit time of that revision"`
	Weight  Weight          `json:"weight"`
	Payload json.RawMessage `json:"payload,omitempty" jsonschema:"the edge's JSON payload, absent when none"`
}

// KVRecord is one kv entry version (SPEC.md §6.3 "kv").
type KVRecord struct {
	Scope      string          `json:"scope"`
	Namespace  string          `json:"namespace"`
	Key        string          `json:"key"`
	Payload    json.RawMessage `json:"payload"`
	Rev        uint64          `json:"rev"`
	TS         string          `json:"ts"`
	RunID      string          `json:"run_id"`
	TaskID     string          `json:"task_id"`
	ValidFrom  string          `json:"valid_from"`
	ValidUntil string          `json:"valid_until"`
	Status     StatusRecord    `json:"status"`
}

func kvRecord(kv lmdbstore.KV, st lmdbstore.Status) KVRecord {
	return KVRecord{
		ValidFrom: formatTime(kv.Valid.From), ValidUntil: formatTime(kv.Valid.Until), Status: statusRecord(st),
		Scope: kv.Scope, Namespace: kv.Namespace, Key: kv.Key,
		Payload: jsonValue(kv.Payload),
		Rev:     uint64(kv.Rev), TS: formatTime(kv.TS),
		RunID: kv.RunID, TaskID: kv.TaskID,
	}
}

// CommitResult is what every write tool returns: the revision it committed
// (0 when it changed nothing) and its commit time.
type CommitResult struct {
	Rev uint64 `json:"rev" jsonschema:"the revision committed; 0 when nothing changed"`
	TS  string `json:"ts,omitempty" jsonschema:"its commit time (absent when rev is 0)"`
	// Redacted is how many secrets the store replaced by [REDACTED:kind]
	// in the write's keys and payloads (SPEC.md §2).
	Redacted int `json:"redacted,omitempty" jsonschema:"secrets replaced by [REDACTED:kind] before storing (absent when none)"`
}

func commitResult(c lmdbstore.Commit) CommitResult {
	if c.Rev == 0 {
		return CommitResult{Redacted: c.Redacted}
	}
	return CommitResult{Rev: uint64(c.Rev), TS: formatTime(c.Time), Redacted: c.Redacted}
}

// formatTime is RFC 3339 with nanoseconds (trailing zeros trimmed), UTC.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func formatID(id lmdbstore.NodeID) string { return fmt.Sprintf("%016x", uint64(id)) }

// jsonValue is a stored payload as a JSON value: null when empty, compacted.
// Bytes that are not JSON (only in a damaged store) become a JSON string.
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

// optionalPayload is a payload omitted when absent or null.
func optionalPayload(p []byte) json.RawMessage {
	v := jsonValue(p)
	if string(v) == "null" {
		return nil
	}
	return v
}
