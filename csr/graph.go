// Package csr is the graph view of a mounted snapshot: the forward and
// reverse CSR arrays as slices over the mapping, never copied.
//
// STUB: the API below is the contract engines/ and cli/ build against; the
// snapshot implementer fills in the bodies.
package csr

import "errors"

var errUnimplemented = errors.New("csr: not implemented yet")

// NodeIndex is a dense node index: 0..NumNodes-1, in ascending NodeID order.
type NodeIndex = uint32

// Graph is an immutable CSR view. Safe for concurrent use.
type Graph struct{}

func (g *Graph) NumNodes() int     { return 0 }
func (g *Graph) NumEdges() int     { return 0 }
func (g *Graph) NumRelations() int { return 0 }

// Out returns the out-edges of n as parallel sub-slices of the mapped
// arrays: target node indices, relation ids, weights. Indices are checked
// against NumNodes lazily by callers via CheckIndex or fully by Verify.
func (g *Graph) Out(n NodeIndex) (targets []uint32, rels []uint32, weights []float32, err error) {
	return nil, nil, nil, errUnimplemented
}

// In returns the in-edges of n: source node indices, relation ids, weights.
func (g *Graph) In(n NodeIndex) (sources []uint32, rels []uint32, weights []float32, err error) {
	return nil, nil, nil, errUnimplemented
}

// OutDegree and InDegree are O(1).
func (g *Graph) OutDegree(n NodeIndex) (int, error) { return 0, errUnimplemented }
func (g *Graph) InDegree(n NodeIndex) (int, error)  { return 0, errUnimplemented }

// Lookup maps a NodeID to its dense index without building anything.
func (g *Graph) Lookup(id uint64) (NodeIndex, bool, error) { return 0, false, errUnimplemented }

// LookupKey maps a canonical key to its dense index.
func (g *Graph) LookupKey(key string) (NodeIndex, bool, error) { return 0, false, errUnimplemented }

// NodeID and Key describe node n.
func (g *Graph) NodeID(n NodeIndex) (uint64, error) { return 0, errUnimplemented }
func (g *Graph) Key(n NodeIndex) (string, error)    { return "", errUnimplemented }
func (g *Graph) Type(n NodeIndex) (string, error)   { return "", errUnimplemented }

// Relation describes relation id r (name, default weight, flags).
func (g *Graph) Relation(r uint32) (Relation, error) { return Relation{}, errUnimplemented }

// Relation is one entry of the snapshot's relation table.
type Relation struct {
	ID            uint32
	Name          string
	DefaultWeight float32
	Bidirectional bool
	Inhibitory    bool
}
