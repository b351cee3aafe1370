package enginesnap

// Comparing two snapshots' logical content (what `memctl snapshot diff`
// lists): the rules `snapshot hash` applies, as changes.

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/memctl/memctl/csr"
)

// Change is one difference between two snapshots.
type Change struct {
	Change string // added, removed, changed
	Kind   string // node, edge
	Key    string // a node's
	// Fields a changed node differs in: type, scope, payload, valid,
	// status.
	Fields        []string
	Src, Rel, Dst string  // an edge's
	Weight        float32 // an edge's (B's when changed)
	OldWeight     float32 // a changed edge's weight in A
}

// outEdge is one out-edge in comparable terms.
type outEdge struct {
	rel, dst string
	weight   float32
}

// Diff lists the changes from a to b: a node changes when its type,
// scope, payload, valid time or status (superseded, expired) does, an
// edge when its weight does; revisions and times are ignored. Nodes are
// matched by id, edges by (source key, relation name, destination key).
// Nodes come first, by key; then edges by (source, relation, destination).
func Diff(a, b *csr.Graph) ([]Change, error) {
	var nodes, edges []Change
	ia, ib := uint32(0), uint32(0)
	na, nb := uint32(a.NumNodes()), uint32(b.NumNodes())
	for ia < na || ib < nb {
		var ida, idb uint64
		var err error
		if ia < na {
			if ida, err = a.NodeID(ia); err != nil {
				return nil, err
			}
		}
		if ib < nb {
			if idb, err = b.NodeID(ib); err != nil {
				return nil, err
			}
		}
		var inA, inB bool
		switch {
		case ib >= nb || (ia < na && ida < idb):
			inA = true
		case ia >= na || idb < ida:
			inB = true
		default:
			inA, inB = true, true
		}
		var nodeA, nodeB csr.Node
		var outA, outB []outEdge
		if inA {
			if nodeA, err = a.Node(ia); err != nil {
				return nil, err
			}
			if outA, err = outList(a, ia); err != nil {
				return nil, err
			}
		}
		if inB {
			if nodeB, err = b.Node(ib); err != nil {
				return nil, err
			}
			if outB, err = outList(b, ib); err != nil {
				return nil, err
			}
		}
		liveA, liveB := inA && !nodeA.Missing, inB && !nodeB.Missing
		key := nodeA.Key
		if !inA {
			key = nodeB.Key
		}
		switch {
		case liveA && !liveB:
			nodes = append(nodes, Change{Change: "removed", Kind: "node", Key: key})
		case liveB && !liveA:
			nodes = append(nodes, Change{Change: "added", Kind: "node", Key: key})
		case liveA && liveB:
			fields, err := nodeChanges(a, ia, nodeA, b, ib, nodeB)
			if err != nil {
				return nil, err
			}
			if len(fields) > 0 {
				nodes = append(nodes, Change{Change: "changed", Kind: "node", Key: key, Fields: fields})
			}
		}
		edges = append(edges, edgeChanges(key, outA, outB)...)
		if inA {
			ia++
		}
		if inB {
			ib++
		}
	}
	slices.SortFunc(nodes, func(x, y Change) int { return cmp.Compare(x.Key, y.Key) })
	slices.SortFunc(edges, func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Src, y.Src), cmp.Compare(x.Rel, y.Rel), cmp.Compare(x.Dst, y.Dst))
	})
	return append(nodes, edges...), nil
}

func nodeChanges(a *csr.Graph, ia csr.NodeIndex, na csr.Node, b *csr.Graph, ib csr.NodeIndex, nb csr.Node) ([]string, error) {
	var fields []string
	if na.Type != nb.Type {
		fields = append(fields, "type")
	}
	if na.Scope != nb.Scope {
		fields = append(fields, "scope")
	}
	pa, err := a.Payload(ia)
	if err != nil {
		return nil, err
	}
	pb, err := b.Payload(ib)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pa, pb) {
		fields = append(fields, "payload")
	}
	if na.HasValidFrom != nb.HasValidFrom || na.ValidFrom != nb.ValidFrom || na.HasValidUntil != nb.HasValidUntil || na.ValidUntil != nb.ValidUntil {
		fields = append(fields, "valid")
	}
	if na.Superseded != nb.Superseded || na.Expired != nb.Expired {
		fields = append(fields, "status")
	}
	return fields, nil
}

// outList is node i's out-list by (relation name, destination key).
func outList(g *csr.Graph, i csr.NodeIndex) ([]outEdge, error) {
	tg, rels, ws, err := g.OutChecked(i)
	if err != nil {
		return nil, err
	}
	out := make([]outEdge, 0, len(tg))
	for j := range tg {
		dst, err := g.Key(tg[j])
		if err != nil {
			return nil, err
		}
		rel, err := g.Relation(rels[j])
		if err != nil {
			return nil, err
		}
		out = append(out, outEdge{rel: rel.Name, dst: dst, weight: ws[j]})
	}
	slices.SortFunc(out, func(x, y outEdge) int { return cmp.Or(cmp.Compare(x.rel, y.rel), cmp.Compare(x.dst, y.dst)) })
	return out, nil
}

func edgeChanges(src string, a, b []outEdge) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var c int
		switch {
		case i >= len(a):
			c = 1
		case j >= len(b):
			c = -1
		default:
			c = cmp.Or(cmp.Compare(a[i].rel, b[j].rel), cmp.Compare(a[i].dst, b[j].dst))
		}
		switch {
		case c < 0:
			out = append(out, Change{Change: "removed", Kind: "edge", Src: src, Rel: a[i].rel, Dst: a[i].dst, Weight: a[i].weight})
			i++
		case c > 0:
			out = append(out, Change{Change: "added", Kind: "edge", Src: src, Rel: b[j].rel, Dst: b[j].dst, Weight: b[j].weight})
			j++
		default:
			if a[i].weight != b[j].weight {
				out = append(out, Change{Change: "changed", Kind: "edge", Src: src, Rel: a[i].rel, Dst: a[i].dst,
					Weight: b[j].weight, OldWeight: a[i].weight})
			}
			i++
			j++
		}
	}
	return out
}
