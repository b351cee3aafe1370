package lmdbstore

// This file is the public contract of the store: the types and the method
// set that cli/, storesnap/, ingest/ and bench/ program against. Bodies live
// in the other files of the package. Changing a signature here is an API
// change: update every caller in the same commit.

import (
	"encoding/json"
	"time"

	"github.com/memctl/memctl/roles"
)

// NodeID is the fixed-width identifier of a node: IDOf(canonical key).
type NodeID uint64

// RelID is an interned relation. 0 is never a valid relation; as a filter it
// means "every relation".
type RelID uint32

// Revision numbers write transactions: 1 is the first commit. Revision 0 is
// the empty store before any commit.
type Revision uint64

// At selects which committed state a read sees. The zero value is the latest
// committed state as of the read transaction's start.
type At struct {
	kind atKind
	rev  Revision
	t    time.Time
}

type atKind uint8

const (
	atLatest atKind = iota
	atRevision
	atTime
)

// AtRevision is the state right after revision r committed.
func AtRevision(r Revision) At { return At{kind: atRevision, rev: r} }

// AtTime is the state of the latest revision committed at or before t.
func AtTime(t time.Time) At { return At{kind: atTime, t: t} }

// IsLatest reports whether a is the latest view.
func (a At) IsLatest() bool { return a.kind == atLatest }

// Node is one version of a node as stored.
type Node struct {
	ID         NodeID
	Key        string // canonical key, e.g. "file:lmdbstore/store.go"
	Type       string // e.g. "file", "symbol", "decision"
	Payload    json.RawMessage
	Scope      string
	RunID      string
	TaskID     string
	CreatedTS  time.Time // commit time of the revision that first created it
	UpdatedTS  time.Time // commit time of this version
	CreatedRev Revision
	Rev        Revision // revision of this version
	Valid      Validity // valid time; zero: always valid
}

// EdgeRef is one live adjacency entry as a read sees it. It is what the
// zero-allocation scans hand to their callback.
type EdgeRef struct {
	Peer   NodeID // dst for out-lists, src for in-lists
	Rel    RelID
	Rev    Revision // revision that wrote this version of the edge
	Weight float32
}

// Edge is one live edge with both endpoints.
type Edge struct {
	Src, Dst NodeID
	Rel      RelID
	Rev      Revision
	Weight   float32
}

// EdgeRecord is the full e: record of one edge version (payload and
// provenance), as returned by GetEdge.
type EdgeRecord struct {
	Edge
	Payload    json.RawMessage
	Scope      string
	RunID      string
	TaskID     string
	CreatedTS  time.Time
	UpdatedTS  time.Time
	CreatedRev Revision
}

// KV is one version of a policy-memory entry (decision, constraint, procedure).
type KV struct {
	Scope, Namespace, Key string
	Payload               json.RawMessage
	RunID, TaskID         string
	TS                    time.Time
	Rev                   Revision
	Valid                 Validity // valid time; zero: always valid
}

// Relation is one interned relation.
type Relation struct {
	ID            RelID
	Name          string
	DefaultWeight float32    // weight of put-edge without an explicit weight
	Bidirectional bool       // engines propagate along in-edges too
	Inhibitory    bool       // engines subtract instead of scatter-max
	Role          roles.Role // what the engines make of it (SPEC §1); the zero value is memory
	CreatedRev    Revision   // revision that added it; 0 for the built-ins
}

// WriteMeta is the provenance of one write transaction: it is recorded in the
// log record and inherited by every operation that leaves the field empty.
type WriteMeta struct {
	Scope  string
	RunID  string
	TaskID string
	// Derived marks a write whose keys and payloads memctl derives from
	// structure (paths, names, hashes, counts), never from free text: the
	// ingests (SPEC §2, "Secrets"). Its operations skip the secret scan of
	// Options.Redactor; the provenance above is still scanned. Not
	// recorded.
	Derived bool
}

// Commit describes a finished write transaction. A transaction that wrote
// nothing commits no revision: Rev is 0 and Ops is 0.
type Commit struct {
	Rev  Revision
	Time time.Time
	Ops  int
	// Redacted counts the secrets Options.Redactor replaced in the keys and
	// payloads of the transaction's operations (committed or not).
	Redacted int
}

// NodePut is the input of WriteTxn.PutNode.
type NodePut struct {
	Key     string
	Type    string          // empty: the part of Key before the first ':'
	Payload json.RawMessage // must be valid JSON or empty (stored as null)
	Valid   Validity        // valid time (SPEC.md §4); zero: always valid
	Scope   string
	RunID   string
	TaskID  string
}

// EdgePut is the input of WriteTxn.PutEdge. Endpoints are canonical keys; a
// node that does not exist yet is allowed (recorded as missing, see Check).
type EdgePut struct {
	Src, Rel, Dst string
	// Weight 0 means the relation's default weight; otherwise it must be
	// finite and positive.
	Weight  float32
	Payload json.RawMessage
	Scope   string
	RunID   string
	TaskID  string
}

// KVPut is the input of WriteTxn.PutKV.
type KVPut struct {
	Scope, Namespace, Key string
	Payload               json.RawMessage // required, valid JSON
	Valid                 Validity        // valid time (SPEC.md §4); zero: always valid
	RunID, TaskID         string
}

// OpKind names one operation of the append log.
type OpKind uint8

const (
	OpPutNode OpKind = iota + 1
	OpDelNode
	OpPutEdge
	OpDelEdge
	OpPutKV
	OpDelKV
	OpAddRel
)

// String is the op name used in diff-since output: put_node, del_node, …
func (k OpKind) String() string {
	switch k {
	case OpPutNode:
		return "put_node"
	case OpDelNode:
		return "del_node"
	case OpPutEdge:
		return "put_edge"
	case OpDelEdge:
		return "del_edge"
	case OpPutKV:
		return "put_kv"
	case OpDelKV:
		return "del_kv"
	case OpAddRel:
		return "add_rel"
	}
	return "unknown"
}

// Op is one operation read back from the append log by DiffSince. Fields not
// meaningful for Kind are zero.
type Op struct {
	Rev    Revision
	TS     time.Time
	Kind   OpKind
	Scope  string
	RunID  string
	TaskID string
	// put_node / del_node
	NodeKey  string
	NodeType string
	// put_edge / del_edge
	Src, Dst string // canonical keys
	Rel      string // relation name
	Weight   float32
	// put_kv / del_kv
	Namespace, Key string
	// put_node, put_edge, put_kv
	Payload json.RawMessage
	// put_node, put_kv
	Valid Validity
}

// DiffFilter restricts DiffSince to operations of one run and/or task.
// Empty fields match everything.
type DiffFilter struct {
	RunID  string
	TaskID string
}

// Stats summarises a store.
type Stats struct {
	Revision         Revision
	Horizon          Revision // oldest readable revision; 0 = full history kept
	Nodes            int      // live nodes at the latest revision
	Edges            int      // live edges at the latest revision
	KVs              int      // live kv entries at the latest revision
	Relations        int
	AdjacencyChunks  int // chunks of the out- and in-lists together
	AdjacencyEntries int // entries stored in both lists, including superseded and tombstones
	Tombstones       int // tombstone adjacency entries stored (both lists)
	Superseded       int // superseded adjacency entries stored (both lists)
	MissingNodes     int // ids referenced by live edges with no live node
	MapSize          int64
	FileSize         int64
	Warnings         []string // e.g. tombstone accumulation
	// Keyspaces is the space of every keyspace (Store.Space).
	Keyspaces []KeyspaceSpace
}
