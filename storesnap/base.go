package storesnap

// An export that starts from an earlier one (SPEC.md §12.5, "Incremental
// export"). Reading and decoding every live node from the store is the
// largest part of an export that grows with the store rather than with
// the change; a Base file already holds, for every node that no revision
// since touched, the record a new export would write: key, type, scope,
// run and task ids, times, revisions, valid time, and the payload entry as
// the writer stores it. So the node pass reads from the store only
//
//   - the nodes the log since the base's revision names (put_node,
//     del_node; the target of a supersedes edge put or deleted, whose
//     status may change; the address of a kv entry put or deleted), and
//   - the endpoints of the live edges that the base holds no row for
//     (a node the base left out as history, or that is new),
//
// and takes every other node from the base, its payload entry copied as
// stored (snapshot.NodeRecord.Stored). Edges, relations and kv entries are
// read from the store as by a full export. The file written is the one a
// full export at the same revision and valid-at time writes, byte for
// byte (TestIncrementalExportIsFullExport); when that cannot be shown —
// the base is of another history, filter or window, or the log between is
// long — the export is a full one.
//
// Why the nodes a base left out need not be known: an untouched node the
// base has no row for is either not live (then not live now: only put_node
// makes a node live), or was left out as history. Superseded, it still is
// unless a supersedes edge to it changed (then it was read, see above);
// expired at the base's valid-at time, it still is at a valid-at time in
// the base's window [ValidAt, ValidUntil), in which no node's valid time
// begins or ends. Either way it is left out now, with every edge touching
// it — and those edges' endpoints are read from the store, so the edge
// passes see it as the full export does.

import (
	"errors"
	"slices"
	"time"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
)

// Base is an earlier export of the same store an export may start from:
// its file (which must stay mapped during the export) and the valid-at
// window its content holds for (InMemory's ValidAt and ValidUntil; zero
// ValidUntil: none).
type Base struct {
	File                *snapshot.File
	ValidAt, ValidUntil time.Time
}

// An export reads at most a quarter of the base's node count in log
// operations, and at least baseOpsFloor, to start from it: past that,
// reading the changed nodes costs about what reading all of them does,
// and the export is a full one.
const baseOpsFloor = 256

// errLongLog and errPastView stop the log read: the log is too long to
// start from the base, or the rest is past the exported revision.
var (
	errLongLog  = errors.New("log too long to start from the base")
	errPastView = errors.New("past the exported revision")
)

// base is what an export started from a base reads from it.
type base struct {
	f       *snapshot.File
	fetched []lmdbstore.Node // read from the store, ascending id
	skip    map[uint64]bool  // base rows not to take: touched since
	until   time.Time        // the base's ValidUntil
	// merged: the merge of the first pass, replayed by the later ones
	// when it fits the state's budget (its strings and payload entries
	// are the mapped file's: only the records take heap).
	merged []node
	kept   bool
}

// useBase sets st to take its nodes from b where it can; false (and st
// unchanged) when st must be a full export. It reads the log since b's
// revision and the live edges.
func (st *State) useBase(b *Base) (bool, error) {
	if b == nil || b.File == nil || !st.baseFits(b) {
		return false, nil
	}
	f := b.File
	h := f.Header()
	touched := map[uint64]bool{}
	if uint64(st.rev) > h.Revision {
		supRel := roles.RelSupersedes
		limit := max(f.NumNodes()/4, baseOpsFloor)
		n := 0
		err := st.r.DiffSince(lmdbstore.AtRevision(lmdbstore.Revision(h.Revision)), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			if op.Rev > st.rev {
				return errPastView // st is a past view: its log is read
			}
			if n++; n > limit {
				return errLongLog
			}
			switch op.Kind {
			case lmdbstore.OpPutNode, lmdbstore.OpDelNode:
				touched[uint64(lmdbstore.IDOf(op.NodeKey))] = true
			case lmdbstore.OpPutEdge, lmdbstore.OpDelEdge:
				if op.Rel == supRel {
					touched[uint64(lmdbstore.IDOf(op.Dst))] = true
				}
			case lmdbstore.OpPutKV, lmdbstore.OpDelKV:
				touched[uint64(lmdbstore.IDOf(lmdbstore.KVAddress(op.Scope, op.Namespace, op.Key)))] = true
			}
			return nil
		})
		if errors.Is(err, errLongLog) {
			return false, nil
		}
		if err != nil && !errors.Is(err, errPastView) {
			return false, err
		}
	}
	st.fromBase = true // the edge pass below loads the edges only
	if st.edges == nil && !st.loaded && !st.rescan {
		// About the base's edges: one allocation, not a doubling series.
		st.edges = make([]lmdbstore.Edge, 0, min(f.NumEdges()+f.NumEdges()/8+64, keepBudget/edgeBytes))
	}
	// The endpoints of the live edges the base has no row for.
	read := map[uint64]bool{}
	for id := range touched {
		read[id] = true
	}
	check := func(id uint64) {
		if !read[id] { // read holds the touched ids
			if _, ok := f.Lookup(id); !ok {
				read[id] = true
			}
		}
	}
	lastSrc := ^uint64(0)
	if err := st.eachEdge(func(e lmdbstore.Edge) error {
		if src := uint64(e.Src); src != lastSrc { // edges come by source
			lastSrc = src
			check(src)
		}
		check(uint64(e.Dst))
		return nil
	}); err != nil {
		return false, err
	}
	ids := make([]uint64, 0, len(read))
	for id := range read {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var fetched []lmdbstore.Node
	for _, id := range ids {
		n, err := st.r.GetNodeByID(lmdbstore.NodeID(id), st.at)
		if errors.Is(err, lmdbstore.ErrNotFound) {
			continue // not live at the revision
		}
		if err != nil {
			return false, err
		}
		fetched = append(fetched, n)
	}
	st.base = &base{f: f, fetched: fetched, skip: read, until: b.ValidUntil}
	return true, nil
}

// baseFits reports whether b can stand for the nodes of st's revision it
// holds: a file of this writer's format version, a plain export (not
// logical, nothing included) of a revision of this history at or before
// st's, at or after the store's horizon, whose valid-at window holds st's
// valid-at time.
func (st *State) baseFits(b *Base) bool {
	h := b.File.Header()
	f := st.filter
	if h.Version != snapshot.FormatNewest {
		return false // what it copies is defined by this writer's version
	}
	if f.IncludeSuperseded || f.IncludeExpired || h.Flags&(snapshot.FlagLogical|snapshot.FlagIncludesSuperseded|snapshot.FlagIncludesExpired) != 0 {
		return false
	}
	if b.ValidAt.IsZero() || h.ValidAt != b.ValidAt.UnixNano() || f.ValidAt.Before(b.ValidAt) ||
		(!b.ValidUntil.IsZero() && !f.ValidAt.Before(b.ValidUntil)) {
		return false
	}
	rev := lmdbstore.Revision(h.Revision)
	if horizon, err := st.r.Horizon(); err != nil || rev > st.rev || rev < horizon {
		return false
	}
	if rev == 0 {
		return h.CommitTime == 0
	}
	ts, err := st.time(rev)
	return err == nil && ts == h.CommitTime
}

// baseNodes calls fn for every live node at st's revision, ascending id:
// the base's rows not read again, merged with the nodes read.
func (st *State) baseNodes(fn func(node) error) error {
	b := st.base
	if b.kept {
		for _, n := range b.merged {
			if err := fn(n); err != nil {
				return err
			}
		}
		return nil
	}
	budget := st.keepBytes
	if budget == 0 {
		budget = keepBudget
	}
	keep := !st.rescan && (b.f.NumNodes()+len(b.fetched))*nodeBytes <= budget
	if keep {
		b.merged = make([]node, 0, b.f.NumNodes()+len(b.fetched)) // at most: no row taken twice
	}
	if err := b.merge(func(n node) error {
		if keep {
			b.merged = append(b.merged, n)
		}
		return fn(n)
	}); err != nil {
		b.merged = nil
		return err
	}
	b.kept = keep
	return nil
}

// merge calls fn for every live node at the export's revision, ascending
// id: the base's rows not read again, merged with the nodes read.
func (b *base) merge(fn func(node) error) error {
	f := b.f
	ids, rows := f.NodeIDs(), f.NodeRows()
	j := 0
	for i := range ids {
		id := ids[i]
		for j < len(b.fetched) && uint64(b.fetched[j].ID) < id {
			if err := fn(node{Node: b.fetched[j]}); err != nil {
				return err
			}
			j++
		}
		row := rows[i]
		if row.Flags&snapshot.NodeFlagMissing != 0 || b.skip[id] {
			continue
		}
		n, err := baseNode(f, uint32(i), row)
		if err != nil {
			return err
		}
		if err := fn(n); err != nil {
			return err
		}
	}
	for ; j < len(b.fetched); j++ {
		if err := fn(node{Node: b.fetched[j]}); err != nil {
			return err
		}
	}
	return nil
}

// baseNode is row i of f as the store's node it was exported from, with
// its payload entry as stored.
func baseNode(f *snapshot.File, i uint32, row snapshot.NodeRow) (node, error) {
	key, err := f.Key(i)
	if err != nil {
		return node{}, err
	}
	typ, scope, run, task, err := f.NodeStrings(i)
	if err != nil {
		return node{}, err
	}
	stored, err := f.StoredPayload(i)
	if err != nil {
		return node{}, err
	}
	n := lmdbstore.Node{
		ID: lmdbstore.NodeID(f.NodeIDs()[i]), Key: key, Type: typ, Scope: scope, RunID: run, TaskID: task,
		CreatedTS: time.Unix(0, row.CreatedTS), UpdatedTS: time.Unix(0, row.UpdatedTS),
		CreatedRev: lmdbstore.Revision(row.CreatedRev), Rev: lmdbstore.Revision(row.Rev),
	}
	if row.Flags&snapshot.NodeFlagValidFrom != 0 {
		n.Valid.From = time.Unix(0, row.ValidFrom)
	}
	if row.Flags&snapshot.NodeFlagValidUntil != 0 {
		n.Valid.Until = time.Unix(0, row.ValidUntil)
	}
	return node{Node: n, stored: stored}, nil
}

// textBase is the base's text index with, for each node of f (the
// export's finished core file), the base's document when the node was
// taken from the base (engines.TextIndexBase); nil without a base or when
// the base has no text index.
func (st *State) textBase(f *snapshot.File) *engines.TextIndexBase {
	b := st.base
	if b == nil {
		return nil
	}
	x, ok := b.f.TextIndex()
	if !ok {
		return nil
	}
	ids, rows, baseRows := f.NodeIDs(), f.NodeRows(), b.f.NodeRows()
	same := make([]uint32, len(ids))
	for v, id := range ids {
		same[v] = engines.NoBaseDoc
		if rows[v].Flags&snapshot.NodeFlagMissing != 0 || b.skip[id] {
			continue
		}
		if u, ok := b.f.Lookup(id); ok && baseRows[u].Flags&snapshot.NodeFlagMissing == 0 {
			same[v] = u // baseNodes took it from the base
		}
	}
	return &engines.TextIndexBase{Index: x, Same: same}
}
