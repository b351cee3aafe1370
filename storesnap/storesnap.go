// Package storesnap bridges the store and the snapshot format: Export adapts
// one lmdbstore read transaction to snapshot.State (so snapshot/ never
// imports the store, and the reading side stays pure Go), and Import builds
// a new store from a snapshot's state.
//
// Invariants:
//   - An export reads one read transaction at one resolved revision: every
//     pass of the writer sees the same committed state. It reads the live
//     nodes and edges from the store once and replays them to the later
//     passes from memory while they fit in keepBudget (16 MiB, payloads
//     included); a larger state is read from the store at each pass, so
//     its export's heap does not grow with it. The bytes are the same.
//   - Missing nodes (ids referenced by live edges with no live node at that
//     revision) are delivered as snapshot.NodeRecord{Missing: true} with the
//     key the store registered for the id.
//   - History is left out unless the filter includes it (SPEC.md §4): an
//     item a live `supersedes` edge points at, or a node whose valid time
//     does not contain the filter's ValidAt (default: now), is not exported,
//     nor is any edge touching it; included ones are marked (node flags).
//     So the engines, which read snapshots, treat them as history.
//   - Every export carries the search sections (SPEC.md §7.10.1): the
//     lexicon and the text index, with the kv entries the state holds
//     (by the same status rules as nodes), built over the finished core
//     file by engines.IndexSections after the caller's own Extra sections.
//   - Import reproduces the snapshot's relation ids (it refuses a snapshot
//     whose relations a fresh store cannot reproduce), so export → import →
//     export gives the same logical content (byte-identical with Logical).
package storesnap

import (
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
)

// ErrImport: the snapshot cannot be reproduced in a store (relation ids or
// attributes a fresh store cannot give). Errors from the store and the
// snapshot reader keep their own sentinels.
var ErrImport = errors.New("snapshot cannot be imported")

// Export writes the state of s at `at` to path (atomically, see
// snapshot.WriteFile) and returns the stats and the revision exported.
// Superseded and expired (at the current time) items are left out.
func Export(s *lmdbstore.Store, path string, at lmdbstore.At, opts snapshot.WriterOptions) (snapshot.WriteStats, lmdbstore.Revision, error) {
	return ExportFiltered(s, path, at, lmdbstore.StatusFilter{}, opts)
}

// ExportFiltered is Export with the items f selects (ValidAt zero: now).
func ExportFiltered(s *lmdbstore.Store, path string, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions) (snapshot.WriteStats, lmdbstore.Revision, error) {
	sg, stats, w, err := exportFile(s, path, at, f, opts, nil)
	if err != nil {
		return snapshot.WriteStats{}, 0, err
	}
	return stats, w.Rev, sg.Commit()
}

// Window is the revision an export read and the valid-at times it holds
// for, as InMemory's fields say, and whether it started from a base.
type Window struct {
	Rev                 lmdbstore.Revision
	ValidAt, ValidUntil time.Time
	FromBase            bool
}

// ExportFileStaged is ExportFiltered up to the sync
// (snapshot.WriteFileStaged), returning the export's Window: the caller
// can map the temporary file at once and Commit (or Abort) it meanwhile.
// With a base (nil: none) it starts from it where it can (base.go); the
// file is the same.
func ExportFileStaged(s *lmdbstore.Store, path string, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions, b *Base) (*snapshot.Staged, Window, error) {
	sg, _, w, err := exportFile(s, path, at, f, opts, b)
	return sg, w, err
}

func exportFile(s *lmdbstore.Store, path string, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions, b *Base) (*snapshot.Staged, snapshot.WriteStats, Window, error) {
	var stats snapshot.WriteStats
	var w Window
	var sg *snapshot.Staged
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		st, err := NewStateFiltered(r, at, f)
		if err != nil {
			return err
		}
		if w.FromBase, err = st.useBase(b); err != nil {
			return err
		}
		w.Rev, w.ValidAt = lmdbstore.Revision(st.Revision()), st.filter.ValidAt
		if sg, stats, err = snapshot.WriteFileStaged(path, st, st.withIndex(opts)); err != nil {
			return err
		}
		w.ValidUntil, err = st.ValidUntil() // found while writing
		return err
	})
	if err != nil && sg != nil {
		sg.Abort()
		sg = nil
	}
	return sg, stats, w, err
}

// InMemory is an export held in memory, with the range of valid-at times
// its content holds for.
type InMemory struct {
	Bytes []byte
	Rev   lmdbstore.Revision
	// ValidAt is the time items were judged valid or expired at;
	// ValidUntil the first instant after it at which an item the export
	// holds, or left out as expired, turns valid or expired (zero: none).
	// An export at any valid-at time in [ValidAt, ValidUntil) holds the
	// same nodes, edges and flags; only the header's valid_at differs.
	ValidAt, ValidUntil time.Time
	// FromBase: the export started from a base (ExportInMemoryFrom).
	FromBase bool
}

// ExportInMemory is ExportFiltered into memory.
func ExportInMemory(s *lmdbstore.Store, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions) (InMemory, error) {
	return ExportInMemoryFrom(s, at, f, opts, nil)
}

// ExportInMemoryFrom is ExportInMemory started from b where it can
// (base.go; nil: a full export). The bytes are the same.
func ExportInMemoryFrom(s *lmdbstore.Store, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions, b *Base) (InMemory, error) {
	var out InMemory
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		st, err := NewStateFiltered(r, at, f)
		if err != nil {
			return err
		}
		if out.FromBase, err = st.useBase(b); err != nil {
			return err
		}
		if out.Bytes, _, err = snapshot.Write(st, st.withIndex(opts)); err != nil {
			return err
		}
		out.Rev, out.ValidAt = st.rev, st.filter.ValidAt
		out.ValidUntil, err = st.ValidUntil()
		return err
	})
	return out, err
}

// ExportBytes is Export into memory.
func ExportBytes(s *lmdbstore.Store, at lmdbstore.At, opts snapshot.WriterOptions) ([]byte, error) {
	return ExportBytesFiltered(s, at, lmdbstore.StatusFilter{}, opts)
}

// ExportBytesFiltered is ExportFiltered into memory.
func ExportBytesFiltered(s *lmdbstore.Store, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions) ([]byte, error) {
	out, err := ExportInMemory(s, at, f, opts)
	return out.Bytes, err
}

// LogicalHash is the logical snapshot hash (SPEC.md §7.12, `memctl
// snapshot hash` of an `export --logical`) of s at at: equal on two stores
// exactly when their logical state there is equal (replicas compare it at
// every revision).
func LogicalHash(s *lmdbstore.Store, at lmdbstore.At) ([32]byte, error) {
	b, err := ExportBytes(s, at, snapshot.WriterOptions{Logical: true})
	if err != nil {
		return [32]byte{}, err
	}
	f, err := snapshot.FromBytes(b)
	if err != nil {
		return [32]byte{}, err
	}
	return f.LogicalHash()
}

// withIndex appends the search sections to what opts.Extra adds. The two
// read only the mapped file (the kv entries are read from the transaction
// first): the caller's sections (PageRank) are built on another goroutine
// while the search sections are built on this one.
func (st *State) withIndex(opts snapshot.WriterOptions) snapshot.WriterOptions {
	extra := opts.Extra
	opts.Extra = func(f *snapshot.File) ([]snapshot.ExtraSection, error) {
		kv, err := st.KVEntries()
		if err != nil {
			return nil, err
		}
		var out []snapshot.ExtraSection
		wait := func() error { return nil }
		if extra != nil {
			wait = snapshot.Beside(func() (err error) { out, err = extra(f); return err })
		}
		idx, err := engines.IndexSectionsFrom(f, kv, st.textBase(f))
		if werr := wait(); werr != nil {
			return nil, werr
		}
		if err != nil {
			return nil, err
		}
		out = append(out, idx...)
		slices.SortStableFunc(out, func(a, b snapshot.ExtraSection) int { return int(a.Kind) - int(b.Kind) })
		return out, nil
	}
	return opts
}

// KVEntries lists the kv entries of the state for the text index: every
// live entry at the revision, left out when superseded (a live supersedes
// edge points at its address) or not valid at the filter's ValidAt unless
// the filter includes such items, which are then marked.
func (st *State) KVEntries() ([]engines.KVEntry, error) {
	if err := st.findMissing(); err != nil {
		return nil, err
	}
	var out []engines.KVEntry
	err := st.r.ScanKV(st.at, func(kv lmdbstore.KV) error {
		addr := lmdbstore.KVAddress(kv.Scope, kv.Namespace, kv.Key)
		e := engines.KVEntry{Address: addr, Payload: kv.Payload,
			Superseded: st.superseded[uint64(lmdbstore.IDOf(addr))], Expired: !kv.Valid.Contains(st.filter.ValidAt)}
		if (e.Superseded && !st.filter.IncludeSuperseded) || (e.Expired && !st.filter.IncludeExpired) {
			return nil
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// State is a snapshot.State over one read transaction at one revision.
// It is valid only inside the transaction.
type State struct {
	r       *lmdbstore.ReadTxn
	rev     lmdbstore.Revision
	at      lmdbstore.At // AtRevision(rev): never re-resolved
	ts      int64
	filter  lmdbstore.StatusFilter
	missing []uint64 // sorted ids of missing nodes, found on first use
	found   bool
	// The live nodes and edges at rev, read from the store once (by
	// findMissing) and replayed from memory by every later pass: the
	// writer makes two passes over each and findMissing two over the
	// edges, and an export of a small graph spent most of its time
	// decoding the same records again. Only while they take at most
	// keepBytes (keepBudget unless a test sets it): past that the state
	// rescans, as every state did before, so a large export's heap stays
	// flat (BENCHMARKS.md, exporter peak heap).
	nodes     []node
	edges     []lmdbstore.Edge
	loaded    bool
	rescan    bool
	keepBytes int
	times     map[lmdbstore.Revision]int64
	// Found with missing: ids a live supersedes edge points at, ids left
	// out (superseded or expired, unless included), and the kv addresses
	// among them whose entries are expired.
	superseded, hidden, kvExpired map[uint64]bool
	// validUntil: the first bound after the filter's ValidAt of the
	// valid times that decide what is exported (zero: none).
	validUntil time.Time
	// fromBase: the nodes come from base (base.go), not from a scan.
	fromBase bool
	base     *base
}

// node is one live node as the export holds it: read from the store, or
// taken from a base file with its payload entry as stored (then Payload
// is nil and stored is set).
type node struct {
	lmdbstore.Node
	stored []byte
}

// NewState resolves at to a revision (ErrBeforeHorizon / ErrNotFound as the
// store reports them) and returns the state at it, without superseded or
// expired (now) items.
func NewState(r *lmdbstore.ReadTxn, at lmdbstore.At) (*State, error) {
	return NewStateFiltered(r, at, lmdbstore.StatusFilter{})
}

// NewStateFiltered is NewState with the items f selects (ValidAt zero:
// the time of the call).
func NewStateFiltered(r *lmdbstore.ReadTxn, at lmdbstore.At, f lmdbstore.StatusFilter) (*State, error) {
	rev, err := r.Resolve(at)
	if err != nil {
		return nil, err
	}
	if f.ValidAt.IsZero() {
		f.ValidAt = time.Now()
	}
	st := &State{r: r, rev: rev, at: lmdbstore.AtRevision(rev), times: map[lmdbstore.Revision]int64{}, filter: f}
	if rev > 0 {
		if st.ts, err = st.time(rev); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (st *State) time(rev lmdbstore.Revision) (int64, error) {
	if ts, ok := st.times[rev]; ok {
		return ts, nil
	}
	t, err := st.r.RevisionTime(rev)
	if err != nil {
		return 0, fmt.Errorf("commit time of revision %d: %w", rev, err)
	}
	st.times[rev] = t.UnixNano()
	return t.UnixNano(), nil
}

// ValidUntil is the first instant after the filter's ValidAt at which a
// valid time that decides what the state holds begins or ends (zero:
// none): the valid time of every node not left out as superseded, and of
// every kv entry whose address ends a kept edge.
func (st *State) ValidUntil() (time.Time, error) {
	err := st.findMissing()
	if st.base != nil {
		// The nodes the base left out as expired are not read; their
		// bounds lie at or after the base's ValidUntil (base.go).
		return lmdbstore.EarlierBound(st.validUntil, st.base.until), err
	}
	return st.validUntil, err
}

// noteValidity lowers validUntil to v's next bound after ValidAt.
func (st *State) noteValidity(v lmdbstore.Validity) {
	st.validUntil = lmdbstore.EarlierBound(st.validUntil, v.NextChange(st.filter.ValidAt))
}

func (st *State) Revision() uint64  { return uint64(st.rev) }
func (st *State) CommitTime() int64 { return st.ts }
func (st *State) ValidAt() int64    { return st.filter.ValidAt.UnixNano() }
func (st *State) Includes() (bool, bool) {
	return st.filter.IncludeSuperseded, st.filter.IncludeExpired
}

func (st *State) Relations() ([]snapshot.RelationRecord, error) {
	rels, err := st.r.Relations()
	if err != nil {
		return nil, err
	}
	out := make([]snapshot.RelationRecord, 0, len(rels))
	for _, r := range rels {
		if r.CreatedRev > st.rev {
			continue // added after the exported revision: not part of that state
		}
		out = append(out, snapshot.RelationRecord{
			ID: uint32(r.ID), Name: r.Name, DefaultWeight: r.DefaultWeight,
			Bidirectional: r.Bidirectional, Inhibitory: r.Inhibitory, Role: r.Role,
		})
	}
	slices.SortFunc(out, func(a, b snapshot.RelationRecord) int { return int(a.ID) - int(b.ID) })
	return out, nil
}

// findMissing works out, in one pass over the nodes and two over the
// edges, what the export holds: the ids left out as history (superseded:
// the destination of a live supersedes edge; expired: a node whose valid
// time does not contain ValidAt, or a kv address whose entry's does not),
// and the missing nodes (endpoints of the kept edges with no kept live
// node). It keeps the live ids (8 bytes per node) and maps of the
// superseded and hidden ones.
func (st *State) findMissing() error {
	if st.found {
		return nil
	}
	f := st.filter
	st.superseded, st.hidden = map[uint64]bool{}, map[uint64]bool{}
	supRel, err := st.r.RelationByName(roles.RelSupersedes)
	if err != nil && !errors.Is(err, lmdbstore.ErrUnknownRelation) {
		return err
	}
	if err := st.eachEdge(func(e lmdbstore.Edge) error {
		if supRel.ID != 0 && e.Rel == supRel.ID {
			st.superseded[uint64(e.Dst)] = true
		}
		return nil
	}); err != nil {
		return err
	}
	if !f.IncludeSuperseded {
		for id := range st.superseded {
			st.hidden[id] = true
		}
	}
	for id := range st.kvExpired {
		st.hidden[id] = true
	}
	var live []uint64
	if err := st.eachNode(func(n node) error {
		live = append(live, uint64(n.ID))
		if !st.hidden[uint64(n.ID)] {
			st.noteValidity(n.Valid) // it decides the node's Expired flag, or whether it is kept
		}
		if !f.IncludeExpired && !n.Valid.Contains(f.ValidAt) {
			st.hidden[uint64(n.ID)] = true
		}
		return nil
	}); err != nil {
		return err
	}
	set := map[uint64]struct{}{}
	lastSrc, srcLive := ^uint64(0), false // edges come by source
	if err := st.eachEdge(func(e lmdbstore.Edge) error {
		src, dst := uint64(e.Src), uint64(e.Dst)
		if st.hidden[src] || st.hidden[dst] {
			return nil
		}
		if src != lastSrc {
			lastSrc = src
			_, srcLive = slices.BinarySearch(live, src)
		}
		if !srcLive {
			set[src] = struct{}{}
		}
		if _, ok := slices.BinarySearch(live, dst); !ok {
			set[dst] = struct{}{}
		}
		return nil
	}); err != nil {
		return err
	}
	st.missing = make([]uint64, 0, len(set))
	for id := range set {
		st.missing = append(st.missing, id)
	}
	slices.Sort(st.missing)
	if !f.IncludeExpired {
		// A kv address endpoint is as valid as its entry; one that is not
		// takes its edges with it, which can leave other missing nodes
		// without any kept edge: run the edge pass again without them.
		var expired []uint64
		for _, id := range st.missing {
			key, err := st.r.KeyOf(lmdbstore.NodeID(id))
			if err != nil {
				return err
			}
			if _, _, _, ok := lmdbstore.ParseKVAddress(key); !ok {
				continue
			}
			valid, err := st.r.ValidTime(key, st.at)
			if err != nil {
				return err
			}
			st.noteValidity(valid)
			if !valid.Contains(f.ValidAt) {
				expired = append(expired, id)
			}
		}
		if len(expired) > 0 {
			if st.kvExpired == nil {
				st.kvExpired = map[uint64]bool{}
			}
			for _, id := range expired {
				st.kvExpired[id] = true
			}
			return st.findMissing()
		}
	}
	st.found = true
	return nil
}

// load reads the live nodes and edges at the state's revision once.
func (st *State) load() error {
	if st.loaded || st.rescan {
		return nil
	}
	budget := st.keepBytes
	if budget == 0 {
		budget = keepBudget
	}
	over := errors.New("over budget")
	var err error
	if !st.fromBase { // a base's nodes are merged at each pass (baseNodes)
		err = st.r.ScanNodes(st.at, func(n lmdbstore.Node) error {
			budget -= nodeBytes + len(n.Key) + len(n.Type) + len(n.Scope) + len(n.RunID) + len(n.TaskID) + len(n.Payload)
			if budget < 0 {
				return over
			}
			st.nodes = append(st.nodes, node{Node: n}) // its key and payload are its own
			return nil
		})
	}
	if err == nil {
		err = st.r.ScanEdges(st.at, func(e lmdbstore.Edge) error {
			if budget -= edgeBytes; budget < 0 {
				return over
			}
			st.edges = append(st.edges, e)
			return nil
		})
	}
	if err == over {
		st.nodes, st.edges, st.rescan = nil, nil, true
		return nil
	}
	st.loaded = err == nil
	return err
}

// keepBudget bounds what an export keeps of the store's records: 4,000
// nodes and 11,000 edges (a 1,000-file tree) take about 1.5 MB, so trees
// of some 10,000 files are kept; a graph of 1M edges (40 MB of edge
// records alone) is read at each pass and its heap stays a few MB.
const keepBudget = 16 << 20

// nodeBytes and edgeBytes are what a kept record takes besides its
// strings and payload.
const (
	nodeBytes = int(unsafe.Sizeof(node{}))
	edgeBytes = int(unsafe.Sizeof(lmdbstore.Edge{}))
)

// eachNode calls fn for every live node at the revision, ascending id.
func (st *State) eachNode(fn func(node) error) error {
	if st.base != nil {
		return st.baseNodes(fn)
	}
	return replay(st, &st.nodes, st.scanNodes, fn)
}

func (st *State) scanNodes(at lmdbstore.At, fn func(node) error) error {
	return st.r.ScanNodes(at, func(n lmdbstore.Node) error { return fn(node{Node: n}) })
}

// eachEdge calls fn for every live edge at the revision, in the store's
// (src, rel, dst) order.
func (st *State) eachEdge(fn func(lmdbstore.Edge) error) error {
	return replay(st, &st.edges, st.r.ScanEdges, fn)
}

// replay calls fn for each record load kept in *kept, or for each scan
// reads when the state rescans.
func replay[T any](st *State, kept *[]T, scan func(lmdbstore.At, func(T) error) error, fn func(T) error) error {
	if err := st.load(); err != nil {
		return err
	}
	if st.rescan { // by a test, or load found the records over budget
		return scan(st.at, fn)
	}
	for _, x := range *kept {
		if err := fn(x); err != nil {
			return err
		}
	}
	return nil
}

// Nodes merges the live nodes (ascending id) with the missing ones.
func (st *State) Nodes(fn func(snapshot.NodeRecord) error) error {
	if err := st.findMissing(); err != nil {
		return err
	}
	mi := 0
	emitMissingBelow := func(limit uint64, all bool) error {
		for mi < len(st.missing) && (all || st.missing[mi] < limit) {
			id := st.missing[mi]
			key, err := st.r.KeyOf(lmdbstore.NodeID(id))
			if err != nil {
				return fmt.Errorf("key of missing node %016x: %w", id, err)
			}
			if err := fn(snapshot.NodeRecord{ID: id, Key: key, Missing: true, Superseded: st.superseded[id]}); err != nil {
				return err
			}
			mi++
		}
		return nil
	}
	err := st.eachNode(func(n node) error {
		if err := emitMissingBelow(uint64(n.ID), false); err != nil {
			return err
		}
		if st.hidden[uint64(n.ID)] {
			return nil
		}
		rec := snapshot.NodeRecord{
			ID: uint64(n.ID), Key: n.Key, Type: n.Type, Scope: n.Scope, RunID: n.RunID, TaskID: n.TaskID,
			CreatedTS: n.CreatedTS.UnixNano(), UpdatedTS: n.UpdatedTS.UnixNano(),
			CreatedRev: uint64(n.CreatedRev), Rev: uint64(n.Rev), Payload: n.Payload, Stored: n.stored,
			Superseded: st.superseded[uint64(n.ID)], Expired: !n.Valid.Contains(st.filter.ValidAt),
		}
		if !n.Valid.From.IsZero() {
			rec.ValidFrom, rec.HasValidFrom = n.Valid.From.UnixNano(), true
		}
		if !n.Valid.Until.IsZero() {
			rec.ValidUntil, rec.HasValidUntil = n.Valid.Until.UnixNano(), true
		}
		return fn(rec)
	})
	if err != nil {
		return err
	}
	return emitMissingBelow(0, true)
}

func (st *State) Edges(fn func(snapshot.EdgeRecord) error) error {
	if err := st.findMissing(); err != nil {
		return err
	}
	return st.eachEdge(func(e lmdbstore.Edge) error {
		if st.hidden[uint64(e.Src)] || st.hidden[uint64(e.Dst)] {
			return nil
		}
		ts, err := st.time(e.Rev)
		if err != nil {
			return err
		}
		return fn(snapshot.EdgeRecord{Src: uint64(e.Src), Dst: uint64(e.Dst), Rel: uint32(e.Rel), Weight: e.Weight, Rev: uint64(e.Rev), TS: ts})
	})
}

// ImportStats counts what Import wrote.
type ImportStats struct {
	Nodes, Edges, Relations int
	Revisions               int // commits made
}

// ImportOptions are Import's options.
type ImportOptions struct {
	// Verify, when set, checks the snapshot (its Verify, usually) on its
	// own goroutine while the load is read from it: nothing is written
	// before it passes (the load is built in memory meanwhile), and its
	// error, when it fails, is Import's whatever else failed.
	Verify func() error
}

// Import writes f's state into s, which should be empty (a fresh store):
// relations first (reproducing their ids, one revision per added
// relation), then every node in id order and every edge as one bulk load
// (lmdbstore.Bulk: one revision, keyspaces appended in key order).
// Missing nodes are not written (they reappear as missing endpoints).
// Node scope, run and task ids are kept; revisions and times are the new
// store's. The snapshot should pass Verify (opts.Verify, or before).
func Import(f *snapshot.File, s *lmdbstore.Store, opts ImportOptions) (stats ImportStats, err error) {
	verified := make(chan error, 1)
	if opts.Verify != nil {
		go func() { verified <- opts.Verify() }()
	} else {
		verified <- nil
	}
	var verr error
	waited := false
	wait := func() error { // before anything is written, and before returning
		if !waited {
			waited, verr = true, <-verified
		}
		return verr
	}
	defer func() {
		if verr := wait(); verr != nil {
			err = verr
		}
	}()
	if err := importRelations(f, s, &stats, wait); err != nil {
		return stats, err
	}
	b := s.NewBulk(lmdbstore.WriteMeta{})
	b.AllChange() // a verified snapshot's nodes and edges are distinct
	if err := importNodes(f, b, &stats); err != nil {
		return stats, err
	}
	if err := wait(); err != nil {
		return stats, err
	}
	c, err := b.Commit()
	if err != nil {
		return stats, err
	}
	if c.Rev != 0 {
		stats.Revisions++
	}
	return stats, nil
}

// importNodes adds every node and edge of f to b. Edges name their
// endpoints by reference (node index → KeyRef, taken once) and their
// relation by id (the store's ids are the snapshot's: importRelations).
func importNodes(f *snapshot.File, b *lmdbstore.Bulk, stats *ImportStats) error {
	n := uint32(f.NumNodes())
	str := func(id uint32) string {
		v, _ := f.String(id)
		return v
	}
	// Every key once (missing nodes' too: edges name them).
	keys := make([]string, n)
	for i := uint32(0); i < n; i++ {
		key, err := f.Key(i)
		if err != nil {
			return err
		}
		keys[i] = key
	}
	refs, err := b.Keys(keys)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		row := f.NodeRows()[i]
		if row.Flags&snapshot.NodeFlagMissing != 0 {
			continue
		}
		key := keys[i]
		payload, err := f.Payload(i)
		if err != nil {
			return err
		}
		var valid lmdbstore.Validity
		if row.Flags&snapshot.NodeFlagValidFrom != 0 {
			valid.From = time.Unix(0, row.ValidFrom).UTC()
		}
		if row.Flags&snapshot.NodeFlagValidUntil != 0 {
			valid.Until = time.Unix(0, row.ValidUntil).UTC()
		}
		if err := b.PutNodePrepared(lmdbstore.NodePut{
			Key: key, Type: str(row.Type), Payload: payload, Valid: valid,
			Scope: str(row.Scope), RunID: str(row.RunID), TaskID: str(row.TaskID),
		}, b.Prepared(refs[i], key)); err != nil {
			return fmt.Errorf("node %q: %w", key, err)
		}
		stats.Nodes++
	}
	targets, rels, weights := f.FwdTargets(), f.FwdRels(), f.FwdWeights()
	var relIDs []lmdbstore.RelID
	var dsts []lmdbstore.KeyRef
	for src := uint32(0); src < n; src++ {
		lo, hi, err := f.OutRange(src)
		if err == nil {
			err = f.CheckFwdEdges(lo, hi)
		}
		if err != nil {
			return err
		}
		if lo == hi {
			continue
		}
		relIDs, dsts = relIDs[:0], dsts[:0]
		for p := lo; p < hi; p++ {
			relIDs = append(relIDs, lmdbstore.RelID(rels[p]))
			dsts = append(dsts, refs[targets[p]])
		}
		before := b.Len()
		if err := b.PutEdgeRefs(refs[src], relIDs, dsts, weights[lo:hi]); err != nil {
			p := lo
			var opErr *lmdbstore.BulkOpError
			if errors.As(err, &opErr) {
				p, err = lo+uint64(opErr.Op-before), opErr.Err
			}
			return fmt.Errorf("edge %s -%s-> %s: %w", keys[src], relName(f, rels[p]), keys[targets[p]], err)
		}
		stats.Edges += int(hi - lo)
	}
	return nil
}

// relName is the name of relation id in f, for an error.
func relName(f *snapshot.File, id uint32) string {
	for _, r := range f.Relations() {
		if r.ID == id {
			name, _ := f.String(r.Name)
			return name
		}
	}
	return fmt.Sprint(id)
}

// importRelations checks the store's existing relations (the built-ins)
// agree with the snapshot's, and adds the others so they get the same ids.
// It calls before just before it writes (when it does).
func importRelations(f *snapshot.File, s *lmdbstore.Store, stats *ImportStats, before func() error) error {
	var existing []lmdbstore.Relation
	if err := s.View(func(r *lmdbstore.ReadTxn) error {
		var err error
		existing, err = r.Relations()
		return err
	}); err != nil {
		return err
	}
	have := map[lmdbstore.RelID]lmdbstore.Relation{}
	for _, r := range existing {
		have[r.ID] = r
	}
	var add []lmdbstore.Relation
	for _, row := range f.Relations() {
		name, err := f.String(row.Name)
		if err != nil {
			return err
		}
		want := lmdbstore.Relation{
			ID: lmdbstore.RelID(row.ID), Name: name, DefaultWeight: row.DefaultWeight,
			Bidirectional: row.Flags&snapshot.RelBidirectional != 0, Inhibitory: row.Flags&snapshot.RelInhibitory != 0,
			Role: row.Role(),
		}
		if got, ok := have[want.ID]; ok {
			if got != want {
				return fmt.Errorf("%w: relation %d is %+v in the snapshot and %+v in the store", ErrImport, want.ID, want, got)
			}
			continue
		}
		add = append(add, want)
	}
	if len(add) == 0 {
		return nil
	}
	if err := before(); err != nil {
		return err
	}
	_, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		for _, want := range add {
			id, err := tx.AddRelation(want)
			if err != nil {
				return err
			}
			if id != want.ID {
				return fmt.Errorf("%w: relation %q gets id %d in this store, %d in the snapshot", ErrImport, want.Name, id, want.ID)
			}
		}
		return nil
	})
	stats.Relations = len(add)
	return err
}
