package lmdbstore

import (
	"encoding/json"
	"time"
)

// event is one telemetry line (SPEC.md §5). Field order is the JSON order.
type event struct {
	Event      string `json:"event"` // read | write | overwrite | delete | query
	MemoryID   string `json:"memory_id"`
	EntityType string `json:"entity_type"` // node | edge | kv | relation
	Scope      string `json:"scope"`
	RunID      string `json:"run_id"`
	TaskID     string `json:"task_id"`
	Timestamp  string `json:"timestamp"`
	Rev        uint64 `json:"rev"`

	NodeType string   `json:"node_type,omitempty"`
	Rel      string   `json:"rel,omitempty"`
	Weight   *float32 `json:"weight,omitempty"`
	Missing  []string `json:"missing_nodes,omitempty"`
	Query    string   `json:"query,omitempty"` // get_out, get_in, list_kv, diff_since
	AtRev    uint64   `json:"at_rev,omitempty"`
	Results  *int     `json:"results,omitempty"`
	Found    *bool    `json:"found,omitempty"`
}

func eventWriteOrOverwrite(overwrite bool) string {
	if overwrite {
		return "overwrite"
	}
	return "write"
}

// event queues a write event; it is emitted only when the transaction
// commits.
func (tx *WriteTxn) event(kind, memoryID, entity, scope, run, task string, more func(*event)) {
	if tx.s.opts.Telemetry == nil {
		return
	}
	e := event{Event: kind, MemoryID: memoryID, EntityType: entity, Scope: scope, RunID: run, TaskID: task, Rev: uint64(tx.rev)}
	if more != nil {
		more(&e)
	}
	tx.events = append(tx.events, e)
}

func (s *Store) emitWrites(tx *WriteTxn) {
	if s.opts.Telemetry == nil {
		return
	}
	ts := nsTime(tx.ts).Format(time.RFC3339Nano)
	for i := range tx.events {
		tx.events[i].Timestamp = ts
		s.emit(&tx.events[i])
	}
}

// emitRead writes a read or query event attributed to Options.Session.
func (r *ReadTxn) emitRead(kind, memoryID, entity string, rev Revision, more func(*event)) {
	s := r.s
	if s.opts.Telemetry == nil || r.inWrite {
		return
	}
	e := event{Event: kind, MemoryID: memoryID, EntityType: entity,
		Scope: s.opts.Session.Scope, RunID: s.opts.Session.RunID, TaskID: s.opts.Session.TaskID,
		Timestamp: s.clock().UTC().Format(time.RFC3339Nano), Rev: uint64(rev)}
	if more != nil {
		more(&e)
	}
	// A read names what the caller asked for, which was never redacted
	// (a write's keys were, before they reached the store).
	red := redaction{r: s.opts.Redactor}
	e.MemoryID, e.Scope, e.RunID, e.TaskID = red.text(e.MemoryID), red.text(e.Scope), red.text(e.RunID), red.text(e.TaskID)
	e.NodeType, e.Rel = red.text(e.NodeType), red.text(e.Rel)
	s.emit(&e)
}

// emit writes one event as one line with a single Write call, so that
// processes appending to one O_APPEND file never interleave lines.
// Telemetry failures never fail the operation.
func (s *Store) emit(e *event) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	b = append(b, '\n')
	_, _ = s.opts.Telemetry.Write(b)
}
