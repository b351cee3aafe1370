package lmdbstore

// STUB: signatures of the public Store API. The store implementer replaces
// these bodies (and may move them to other files); the signatures are the
// contract that cli/, storesnap/, ingest/ and bench/ build against.

import (
	"errors"
	"io"
	"time"
)

var errUnimplemented = errors.New("lmdbstore: not implemented yet")

// Options configures Open and Init. The zero value is the production default.
type Options struct {
	// ReadOnly opens without ever taking the writer lock.
	ReadOnly bool
	// Telemetry, when non-nil, receives one JSON line per event (see SPEC.md).
	// Each event is written with a single Write call.
	Telemetry io.Writer
	// MapSize is the initial LMDB map size in bytes (0: the default). Tests
	// use small values to exercise map growth.
	MapSize int64
	// MaxMapSize caps growth (0: the default); beyond it writes fail with ErrMapFull.
	MaxMapSize int64
	// NoSync trades durability against OS crashes (never against process
	// kills) for commit speed. Default false: every commit is synced.
	NoSync bool
	// Clock returns commit times (nil: time.Now). Commit times are forced to
	// be strictly increasing, so tests may return a fixed time.
	Clock func() time.Time
}

// Store is an open memctl store. It is safe for concurrent use by multiple
// goroutines; write transactions are serialised.
type Store struct{}

// Init creates a new store at path (a directory) and opens it. It fails with
// ErrExists if a store is already there.
func Init(path string, opts Options) (*Store, error) { return nil, errUnimplemented }

// Open opens an existing store. It fails with ErrNotExist if there is none and
// with ErrNewerSchema if it was written by a newer schema.
func Open(path string, opts Options) (*Store, error) { return nil, errUnimplemented }

// Close releases the environment. No transaction may be live.
func (s *Store) Close() error { return errUnimplemented }

// Path is the store directory.
func (s *Store) Path() string { return "" }

// Update runs fn in one write transaction. If fn returns nil and wrote
// anything, the transaction commits as the next revision; if fn returns an
// error nothing is written. Map growth is handled inside (fn may be re-run,
// so it must not have side effects outside tx).
func (s *Store) Update(meta WriteMeta, fn func(tx *WriteTxn) error) (Commit, error) {
	return Commit{}, errUnimplemented
}

// View runs fn in one read transaction: every read inside sees the same
// committed state. Slices handed to scan callbacks are valid only during the
// callback.
func (s *Store) View(fn func(r *ReadTxn) error) error { return errUnimplemented }

// Compact merges and prunes every adjacency list (and history older than
// the horizon), as one write transaction that commits no revision.
func (s *Store) Compact() (CompactStats, error) { return CompactStats{}, errUnimplemented }

// SetRetention keeps the last n revisions readable (0: keep all history).
func (s *Store) SetRetention(n uint64) error { return errUnimplemented }

// Check walks every keyspace and reports every violation it finds.
func (s *Store) Check() (CheckReport, error) { return CheckReport{}, errUnimplemented }

// Stats summarises the store.
func (s *Store) Stats() (Stats, error) { return Stats{}, errUnimplemented }

// CompactStats reports what a compaction did.
type CompactStats struct {
	ChunksBefore, ChunksAfter   int
	EntriesBefore, EntriesAfter int
	HistDropped                 int
}

// CheckReport lists every problem Check found. Problems are integrity
// violations (exit 3); Warnings are not.
type CheckReport struct {
	Problems []string
	Warnings []string
	// MissingNodes lists canonical keys referenced by live edges that have no
	// live node (allowed, reported).
	MissingNodes []string
}

// WriteTxn is one write transaction. It must not be used after the Update
// callback returns.
type WriteTxn struct{}

func (tx *WriteTxn) PutNode(p NodePut) error               { return errUnimplemented }
func (tx *WriteTxn) DeleteNode(key string) error           { return errUnimplemented }
func (tx *WriteTxn) PutEdge(p EdgePut) error               { return errUnimplemented }
func (tx *WriteTxn) DeleteEdge(src, rel, dst string) error { return errUnimplemented }
func (tx *WriteTxn) PutKV(p KVPut) error                   { return errUnimplemented }
func (tx *WriteTxn) DeleteKV(scope, ns, key string) error  { return errUnimplemented }
func (tx *WriteTxn) AddRelation(r Relation) (RelID, error) { return 0, errUnimplemented }
func (tx *WriteTxn) Reader() *ReadTxn                      { return nil }

// ReadTxn is one read transaction (also available inside a write
// transaction, where it sees the transaction's own writes).
type ReadTxn struct{}

// Revision is the latest committed revision this transaction sees.
func (r *ReadTxn) Revision() Revision { return 0 }

// Resolve turns a view into a concrete revision. It fails with
// ErrBeforeHorizon for a revision older than the retention horizon and
// ErrNotFound for a revision newer than the latest or a time before the
// first commit.
func (r *ReadTxn) Resolve(at At) (Revision, error) { return 0, errUnimplemented }

// RevisionTime is the commit time of revision rev.
func (r *ReadTxn) RevisionTime(rev Revision) (time.Time, error) { return time.Time{}, errUnimplemented }

// KeyOf returns the canonical key registered for id (any id ever written as
// a node or an edge endpoint).
func (r *ReadTxn) KeyOf(id NodeID) (string, error) { return "", errUnimplemented }

func (r *ReadTxn) Relations() ([]Relation, error)               { return nil, errUnimplemented }
func (r *ReadTxn) RelationByName(name string) (Relation, error) { return Relation{}, errUnimplemented }
func (r *ReadTxn) RelationByID(id RelID) (Relation, error)      { return Relation{}, errUnimplemented }

func (r *ReadTxn) GetNode(key string, at At) (Node, error)    { return Node{}, errUnimplemented }
func (r *ReadTxn) GetNodeByID(id NodeID, at At) (Node, error) { return Node{}, errUnimplemented }

// ScanNodes calls fn for every live node at the view, in ascending NodeID order.
func (r *ReadTxn) ScanNodes(at At, fn func(Node) error) error { return errUnimplemented }

// ScanOut calls fn for every live out-edge of src at the view, in (rel,
// dst) order, without allocating per entry. rel 0 means every relation.
// Returning false from fn stops the scan.
func (r *ReadTxn) ScanOut(src NodeID, rel RelID, at At, fn func(EdgeRef) bool) error {
	return errUnimplemented
}

// ScanIn is ScanOut over in-edges (EdgeRef.Peer is the source).
func (r *ReadTxn) ScanIn(dst NodeID, rel RelID, at At, fn func(EdgeRef) bool) error {
	return errUnimplemented
}

// ScanEdges calls fn for every live edge at the view in (src, rel, dst) order.
func (r *ReadTxn) ScanEdges(at At, fn func(Edge) error) error { return errUnimplemented }

// GetOut and GetIn are the allocating conveniences over ScanOut/ScanIn,
// taking canonical keys and a relation name ("" = all relations).
func (r *ReadTxn) GetOut(src, rel string, at At) ([]Edge, error) { return nil, errUnimplemented }
func (r *ReadTxn) GetIn(dst, rel string, at At) ([]Edge, error)  { return nil, errUnimplemented }

// GetEdge returns the e: record of the live edge at the view.
func (r *ReadTxn) GetEdge(src, rel, dst string, at At) (EdgeRecord, error) {
	return EdgeRecord{}, errUnimplemented
}

func (r *ReadTxn) GetKV(scope, ns, key string, at At) (KV, error) { return KV{}, errUnimplemented }

// ListKV returns the live entries of scope/ns at the view, ordered by key.
func (r *ReadTxn) ListKV(scope, ns string, at At) ([]KV, error) { return nil, errUnimplemented }

// DiffSince calls fn for every operation committed after since (a revision
// or a time), in commit order, restricted by f.
func (r *ReadTxn) DiffSince(since At, f DiffFilter, fn func(Op) error) error {
	return errUnimplemented
}
