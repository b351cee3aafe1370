// Package peers adapts each store under comparison — memctl (Go API and
// snapshot), a SQLite adjacency table, bbolt and raw LMDB — to one System
// interface the harness drives.
//
// Rules every adapter follows, so that the comparison is fair:
//   - Every write transaction is durable when it returns (fsync or the
//     store's equivalent), and one Load call is one transaction.
//   - Every read call is its own read transaction; adapters may reuse
//     handles (prepared statements, reset read transactions) across calls.
//   - Revisions are the harness's: Load and PutEdge calls number 1, 2, 3...
//     in order. Peers store that number with each row; memctl maps it to
//     the revision its commit returned.
//   - A read hands each result to the callback as a user sees it: the
//     relation's name and the peer's canonical key (what memctl get-out
//     prints), resolved by the system from its own storage, without
//     building a result slice. The strings may alias the system's memory
//     and are valid only during the call.
package peers

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/memctl/memctl/bench/gen"
)

// ErrNotSupported: the system offers no equivalent of the workload.
var ErrNotSupported = errors.New("not supported")

// Batch is one bulk-load transaction: nodes (generator indices) and edges.
type Batch struct {
	Nodes []uint32
	Edges []gen.Edge
}

// EdgeFunc receives one result edge: the relation's name and the peer's
// canonical key, valid only during the call.
type EdgeFunc func(rel, peer string)

// KeyFunc receives one node's canonical key, valid only during the call.
type KeyFunc func(key string)

// System is one store under test.
type System interface {
	Name() string
	// Create makes a new, empty store in dir (which exists and is empty) for g.
	Create(dir string, g *gen.Graph) error
	// Load writes b as one durable transaction: the next revision.
	Load(b Batch) error
	// PutEdge writes e as one durable transaction: the next revision.
	PutEdge(e gen.Edge) error
	// Settle runs after the writes and before reads and size measurements
	// (a WAL checkpoint, for instance).
	Settle() error

	// GetOut and GetIn hand every live edge of node (a generator index,
	// which each system maps to its native id outside the timing) to fn.
	GetOut(node uint32, fn EdgeFunc) error
	GetIn(node uint32, fn EdgeFunc) error
	// ThreeHop hands fn the key of every distinct node within three
	// out-hops of node, node included, and returns how many there were.
	ThreeHop(node uint32, fn KeyFunc) (int, error)
	// GetOutAt is GetOut as of revision rev (ErrNotSupported if the system
	// cannot answer it).
	GetOutAt(node uint32, rev int, fn EdgeFunc) error
	// DiffSince returns how many node and edge writes were committed after
	// revision rev.
	DiffSince(rev int) (int, error)

	// FreshArg is what a fresh process needs to query node's out-edges.
	// It is called on a zero System.
	FreshArg(g *gen.Graph, node uint32) string
	// FreshQuery opens the store in dir in this (fresh) process, calls
	// opened, answers one get-out for arg (keys and relation names, like
	// GetOut) and returns the number of edges and how to close the store.
	// It is called on a zero System.
	FreshQuery(dir, arg string, opened func()) (n int, done func() error, err error)
	Close() error
}

// BulkLoader is a system that can load a whole graph at once into a new
// store in dir (which exists and is empty): its fastest way to do it, one
// durable transaction. The store is closed when BulkLoad returns.
type BulkLoader interface {
	BulkLoad(dir string, g *gen.Graph, b Batch) error
}

// Vacuumer is a system that can write a dense copy of its open store,
// everything it holds included, into a new store in dir (which exists and
// is empty): each system's own way to give space back (SQLite's VACUUM
// INTO, bbolt's Compact, LMDB's compacting copy, memctl vacuum).
type Vacuumer interface {
	VacuumInto(dir string) error
}

// Keyspace is the space one keyspace (bucket, named database, table or
// index) of a system takes on disk.
type Keyspace struct {
	Name    string
	Entries int64
	Pages   int64
	Bytes   int64
}

// SpaceReporter is a system that can break its disk use down by keyspace.
type SpaceReporter interface {
	Space() ([]Keyspace, error)
}

// Derived is a read-only view built from another system's finished store
// (the memctl snapshot). Its write methods return ErrNotSupported.
type Derived interface {
	System
	DeriveFrom(src System, dir string) error
}

// New returns a zero peer System by name: "sqlite", "bbolt" or "lmdb-raw".
func New(name string) (System, error) {
	switch name {
	case "sqlite":
		return &SQLite{}, nil
	case "bbolt":
		return &Bolt{}, nil
	case "lmdb-raw":
		return &LMDBRaw{}, nil
	}
	return nil, fmt.Errorf("peers: unknown system %q", name)
}

// DiskBytes is the space allocated on disk for the files under dir.
func DiskBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += info.Size()
		}
		return nil
	})
	return total, err
}
