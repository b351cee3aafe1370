// Package csr is the graph view of a mounted snapshot: the forward and
// reverse CSR arrays as slices over the mapping, never copied.
//
// Invariants and caveats:
//   - Node indices are dense, 0..NumNodes-1, in ascending NodeID order.
//   - Out-lists are sorted by (relation, target); in-lists by (source,
//     relation). Both contain every live edge exactly once.
//   - Every slice and string returned points into the mapping and is valid
//     until Close. A Graph is immutable and safe for concurrent use.
//   - Open checks the header, directory and section bounds in O(1) of the
//     graph size. Accessors check every offset they follow, so a damaged
//     file returns an error matching snapshot.ErrCorrupt, never a panic. An
//     index array whose values were damaged but stay in range (a target
//     index flipped to another valid index) is only caught by Verify, which
//     checks every CRC and structural invariant; callers that mount
//     untrusted files run Verify once after Open.
//   - Element values from the edge arrays (targets, sources) are < NumNodes
//     after Verify; without it, use CheckIndex before following one.
//
// Seed-finding indexes (for engines):
//   - LookupKey: exact canonical key, O(log n) over KeyOrder.
//   - KeyOrder / PrefixRange: node indices sorted by key bytes; the nodes
//     whose key starts with a prefix are KeyOrder()[lo:hi].
//   - TrigramPostings: sorted node indices whose ASCII-lower-cased key
//     contains a byte trigram (substring and fuzzy matching).
//   - PageRank: the optional per-node rank section written at export.
package csr

import (
	"fmt"
	"strings"

	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
)

// NodeIndex is a dense node index: 0..NumNodes-1, in ascending NodeID order.
type NodeIndex = uint32

// Graph is an immutable CSR view. Safe for concurrent use.
type Graph struct {
	f *snapshot.File
}

// Open maps the snapshot at path (O(1) in the graph size).
func Open(path string) (*Graph, error) {
	f, err := snapshot.Open(path)
	if err != nil {
		return nil, err
	}
	return &Graph{f: f}, nil
}

// FromBytes views an in-memory snapshot (tests, fuzzing).
func FromBytes(b []byte) (*Graph, error) {
	f, err := snapshot.FromBytes(b)
	if err != nil {
		return nil, err
	}
	return &Graph{f: f}, nil
}

// New views an already open file; Close on the Graph closes it.
func New(f *snapshot.File) *Graph { return &Graph{f: f} }

// Close unmaps the file; nothing obtained from g may be used afterwards.
func (g *Graph) Close() error { return g.f.Close() }

// File is the underlying snapshot file.
func (g *Graph) File() *snapshot.File { return g.f }

// Verify checks every CRC and structural invariant (linear in the file).
func (g *Graph) Verify() error { return g.f.Verify() }

// Revision and CommitTime are the store revision the snapshot represents
// and its commit time in unix nanoseconds (both 0 in a logical export).
func (g *Graph) Revision() uint64  { return g.f.Header().Revision }
func (g *Graph) CommitTime() int64 { return g.f.Header().CommitTime }

func (g *Graph) NumNodes() int     { return g.f.NumNodes() }
func (g *Graph) NumEdges() int     { return g.f.NumEdges() }
func (g *Graph) NumRelations() int { return g.f.NumRelations() }

// CheckIndex reports whether n is a valid node index.
func (g *Graph) CheckIndex(n NodeIndex) error {
	if uint64(n) >= uint64(g.f.NumNodes()) {
		return fmt.Errorf("%w: node index %d not in [0, %d)", snapshot.ErrOutOfRange, n, g.f.NumNodes())
	}
	return nil
}

// Out returns the out-edges of n as parallel sub-slices of the mapped
// arrays: target node indices, relation ids, weights. Indices are checked
// against NumNodes lazily by callers via CheckIndex or fully by Verify.
func (g *Graph) Out(n NodeIndex) (targets []uint32, rels []uint32, weights []float32, err error) {
	lo, hi, err := g.f.OutRange(n)
	if err != nil {
		return nil, nil, nil, err
	}
	return g.f.FwdTargets()[lo:hi], g.f.FwdRels()[lo:hi], g.f.FwdWeights()[lo:hi], nil
}

// OutChecked is Out with every stored target and relation checked: a
// target that is not a node index or a relation missing from the table is
// a *snapshot.FormatError naming the section (damage, exit 3 in the CLI),
// never ErrOutOfRange. For callers that follow edges without Verify.
func (g *Graph) OutChecked(n NodeIndex) (targets []uint32, rels []uint32, weights []float32, err error) {
	lo, hi, err := g.f.OutRange(n)
	if err == nil {
		err = g.f.CheckFwdEdges(lo, hi)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return g.f.FwdTargets()[lo:hi], g.f.FwdRels()[lo:hi], g.f.FwdWeights()[lo:hi], nil
}

// InChecked is In with every stored source and relation checked (see
// OutChecked).
func (g *Graph) InChecked(n NodeIndex) (sources []uint32, rels []uint32, weights []float32, err error) {
	lo, hi, err := g.f.InRange(n)
	if err == nil {
		err = g.f.CheckRevEdges(lo, hi)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return g.f.RevSources()[lo:hi], g.f.RevRels()[lo:hi], g.f.RevWeights()[lo:hi], nil
}

// OutRevs returns the revisions of n's out-edges, parallel to Out.
func (g *Graph) OutRevs(n NodeIndex) ([]uint64, error) {
	lo, hi, err := g.f.OutRange(n)
	if err != nil {
		return nil, err
	}
	return g.f.FwdRevs()[lo:hi], nil
}

// In returns the in-edges of n: source node indices, relation ids, weights.
func (g *Graph) In(n NodeIndex) (sources []uint32, rels []uint32, weights []float32, err error) {
	lo, hi, err := g.f.InRange(n)
	if err != nil {
		return nil, nil, nil, err
	}
	return g.f.RevSources()[lo:hi], g.f.RevRels()[lo:hi], g.f.RevWeights()[lo:hi], nil
}

// OutDegree and InDegree are O(1).
func (g *Graph) OutDegree(n NodeIndex) (int, error) {
	lo, hi, err := g.f.OutRange(n)
	return int(hi - lo), err
}

func (g *Graph) InDegree(n NodeIndex) (int, error) {
	lo, hi, err := g.f.InRange(n)
	return int(hi - lo), err
}

// EdgeRev returns the revision of the edge src -rel-> dst (found by binary
// search in src's out-list); ok is false if there is no such edge. In-edge
// revisions are read this way: the reverse CSR does not repeat them.
func (g *Graph) EdgeRev(src NodeIndex, rel uint32, dst NodeIndex) (rev uint64, ok bool, err error) {
	p, ok, err := g.f.FindOut(src, rel, dst)
	if err != nil || !ok {
		return 0, false, err
	}
	return g.f.FwdRevs()[p], true, nil
}

// RevisionTime is the commit time (unix ns) of a node or edge revision;
// ok is false in a logical export.
func (g *Graph) RevisionTime(rev uint64) (int64, bool) { return g.f.RevisionTime(rev) }

// Lookup maps a NodeID to its dense index without building anything
// (binary search over the sorted id array, O(log n)).
func (g *Graph) Lookup(id uint64) (NodeIndex, bool, error) {
	i, ok := g.f.Lookup(id)
	return i, ok, nil
}

// LookupKey maps a canonical key to its dense index (binary search over
// KeyOrder, O(log n) key comparisons). A damaged key_order entry is a
// *snapshot.FormatError naming key_order.
func (g *Graph) LookupKey(key string) (NodeIndex, bool, error) {
	var err error
	i := searchInts(len(g.f.KeyOrder()), func(pos int) bool { return g.keyAt(pos, &err) >= key })
	if err != nil {
		return 0, false, err
	}
	if i == len(g.f.KeyOrder()) {
		return 0, false, nil
	}
	n, k, err := g.f.KeyAt(i)
	if err != nil || k != key {
		return 0, false, err
	}
	return n, true, nil
}

// keyAt is the key at KeyOrder position pos; the first error is kept in
// *err (and "" returned) so binary searches can run to the end.
func (g *Graph) keyAt(pos int, err *error) string {
	_, k, kerr := g.f.KeyAt(pos)
	if kerr != nil && *err == nil {
		*err = kerr
	}
	return k
}

// KeyOrder is every node index sorted by canonical key bytes. Entries are
// node indices after Verify; without it, read keys through LookupKey or
// PrefixRange, or check entries with CheckIndex.
func (g *Graph) KeyOrder() ([]uint32, error) { return g.f.KeyOrder(), nil }

// PrefixRange returns the bounds in KeyOrder of the keys starting with
// prefix: KeyOrder()[lo:hi], in key order. O(log n).
func (g *Graph) PrefixRange(prefix string) (lo, hi int, err error) {
	n := len(g.f.KeyOrder())
	lo = searchInts(n, func(pos int) bool { return g.keyAt(pos, &err) >= prefix })
	hi = lo + searchInts(n-lo, func(i int) bool { return !strings.HasPrefix(g.keyAt(lo+i, &err), prefix) })
	if err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}

func searchInts(n int, ok func(int) bool) int {
	a, b := 0, n
	for a < b {
		mid := int(uint(a+b) >> 1)
		if !ok(mid) {
			a = mid + 1
		} else {
			b = mid
		}
	}
	return a
}

// TrigramPostings returns the sorted node indices whose key, with ASCII
// letters lower-cased, contains the three bytes tri (lower-cased here too).
// Keys shorter than three bytes are in no posting list.
func (g *Graph) TrigramPostings(tri [3]byte) ([]uint32, error) {
	return g.f.Postings(snapshot.TrigramOf(tri[0], tri[1], tri[2]))
}

// NumTrigrams is the number of distinct trigrams in the index.
func (g *Graph) NumTrigrams() int { return len(g.f.TriKeys()) }

// PageRank returns the optional PageRank section (one float64 per node
// index); ok is false when the export did not include it.
func (g *Graph) PageRank() ([]float64, bool, error) {
	pr, ok := g.f.PageRank()
	return pr, ok, nil
}

// NodeID and Key describe node n.
func (g *Graph) NodeID(n NodeIndex) (uint64, error) {
	if err := g.CheckIndex(n); err != nil {
		return 0, err
	}
	return g.f.NodeIDs()[n], nil
}

func (g *Graph) Key(n NodeIndex) (string, error) { return g.f.Key(n) }

func (g *Graph) Type(n NodeIndex) (string, error) {
	return g.f.NodeType(n)
}

// NodesOfType is the bitmap of the nodes of type typ, and of those whose
// type cannot be read (snapshot.File.NodesOfType).
func (g *Graph) NodesOfType(typ string) (match, bad []uint64) { return g.f.NodesOfType(typ) }

// Node is every attribute of one node. Strings are zero-copy.
type Node struct {
	Index      NodeIndex
	ID         uint64
	Key        string
	Type       string
	Scope      string
	RunID      string
	TaskID     string
	CreatedTS  int64
	UpdatedTS  int64
	CreatedRev uint64
	Rev        uint64
	// Valid time (unix ns), each bound only when its Has flag is set.
	ValidFrom, ValidUntil       int64
	HasValidFrom, HasValidUntil bool
	// Superseded, Expired: the item's status at the export (set only in
	// files that include such items).
	Superseded, Expired bool
	// Missing: an edge endpoint with no live node (only ID, Key and
	// Superseded are set).
	Missing bool
}

// Node returns node n's attributes (not its payload: see Payload).
func (g *Graph) Node(n NodeIndex) (Node, error) {
	if err := g.CheckIndex(n); err != nil {
		return Node{}, err
	}
	row := g.f.NodeRows()[n]
	out := Node{Index: n, ID: g.f.NodeIDs()[n], CreatedTS: row.CreatedTS, UpdatedTS: row.UpdatedTS,
		CreatedRev: row.CreatedRev, Rev: row.Rev, Missing: row.Flags&snapshot.NodeFlagMissing != 0,
		ValidFrom: row.ValidFrom, ValidUntil: row.ValidUntil,
		HasValidFrom: row.Flags&snapshot.NodeFlagValidFrom != 0, HasValidUntil: row.Flags&snapshot.NodeFlagValidUntil != 0,
		Superseded: row.Flags&snapshot.NodeFlagSuperseded != 0, Expired: row.Flags&snapshot.NodeFlagExpired != 0}
	var err error
	if out.Key, err = g.f.Key(n); err != nil {
		return Node{}, err
	}
	out.Type, out.Scope, out.RunID, out.TaskID, err = g.f.NodeStrings(n)
	if err != nil {
		return Node{}, err
	}
	return out, nil
}

// Payload returns node n's JSON payload (nil for none); decompressed
// payloads are new slices, raw ones point into the mapping.
func (g *Graph) Payload(n NodeIndex) ([]byte, error) { return g.f.Payload(n) }

// Relation describes relation id r (name, default weight, flags).
func (g *Graph) Relation(r uint32) (Relation, error) {
	row, ok := g.f.RelationByID(r)
	if !ok {
		// A damaged table out of order can hide an id from the binary
		// search: that is corruption, not an unknown relation.
		if err := g.f.CheckRelationOrder(); err != nil {
			return Relation{}, err
		}
		return Relation{}, fmt.Errorf("%w: relation %d", snapshot.ErrOutOfRange, r)
	}
	return g.relation(row)
}

func (g *Graph) relation(row snapshot.RelationRow) (Relation, error) {
	name, err := g.f.String(row.Name)
	if err != nil {
		return Relation{}, err
	}
	return Relation{
		ID:            row.ID,
		Name:          name,
		DefaultWeight: row.DefaultWeight,
		Bidirectional: row.Flags&snapshot.RelBidirectional != 0,
		Inhibitory:    row.Flags&snapshot.RelInhibitory != 0,
		Role:          row.Role(),
	}, nil
}

// Relations lists the relation table in id order.
func (g *Graph) Relations() ([]Relation, error) {
	rows := g.f.Relations()
	out := make([]Relation, 0, len(rows))
	for _, row := range rows {
		r, err := g.relation(row)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RelationByName finds a relation by name (linear in the relation table,
// which is small).
func (g *Graph) RelationByName(name string) (Relation, bool, error) {
	for _, row := range g.f.Relations() {
		r, err := g.relation(row)
		if err != nil {
			return Relation{}, false, err
		}
		if r.Name == name {
			return r, true, nil
		}
	}
	return Relation{}, false, nil
}

// Relation is one entry of the snapshot's relation table.
type Relation struct {
	ID            uint32
	Name          string
	DefaultWeight float32
	Bidirectional bool
	Inhibitory    bool
	Role          roles.Role
}
