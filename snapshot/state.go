package snapshot

// This file is the exporter's input contract: the narrow interface through
// which a store hands its state to the writer. The reader never sees it, and
// snapshot/ never imports the store (storesnap/ adapts lmdbstore to it).

import "github.com/memctl/memctl/roles"

// NodeRecord is one node of the exported state.
type NodeRecord struct {
	ID         uint64
	Key        string
	Type       string
	Scope      string
	RunID      string
	TaskID     string
	CreatedTS  int64 // unix nanoseconds
	UpdatedTS  int64
	CreatedRev uint64
	Rev        uint64
	Payload    []byte // JSON; nil or empty for none
	// Stored, when set, is the payload's entry as a file of this writer
	// stores it (File.StoredPayload: encoding byte, then the bytes), copied
	// as it is instead of encoding Payload: an export that starts from an
	// earlier file (storesnap's Base) hands over the entries of the nodes
	// that did not change. The writer's encoding is a pure function of the
	// payload, so the file is the one Payload would give.
	Stored []byte
	// Valid time (SPEC.md §4): each bound only when its Has flag is set.
	ValidFrom, ValidUntil       int64
	HasValidFrom, HasValidUntil bool
	// Superseded, Expired: the item's status at the export (only when the
	// State includes such items, see State.Includes).
	Superseded, Expired bool
	// Missing marks an id referenced by an edge that has no live node: only
	// ID, Key and Superseded are meaningful.
	Missing bool
}

// EdgeRecord is one live edge of the exported state.
type EdgeRecord struct {
	Src, Dst uint64
	Rel      uint32
	Weight   float32
	Rev      uint64
	TS       int64 // commit time of Rev, unix nanoseconds
}

// RelationRecord is one relation of the exported state.
type RelationRecord struct {
	ID            uint32
	Name          string
	DefaultWeight float32
	Bidirectional bool
	Inhibitory    bool
	Role          roles.Role // stored in flags bits 2–3
}

// State is what the exporter reads. Nodes must be delivered in ascending ID
// order (including Missing ones), edges in ascending (Src, Rel, Dst) order;
// the exporter checks both and fails otherwise (ErrInvalidState). The
// exporter makes two passes, so Nodes and Edges are each called twice and
// must deliver the same sequence both times (a read transaction does).
// Records and their slices are only used during the callback.
type State interface {
	Revision() uint64
	CommitTime() int64 // unix nanoseconds of Revision
	// ValidAt is the valid time items were judged at (unix ns); Includes
	// says whether superseded and expired items were kept (and marked).
	ValidAt() int64
	Includes() (superseded, expired bool)
	Relations() ([]RelationRecord, error)
	Nodes(fn func(NodeRecord) error) error
	Edges(fn func(EdgeRecord) error) error
}
