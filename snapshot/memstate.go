package snapshot

import (
	"cmp"
	"slices"
)

// MemState is a State held in memory: tests, fuzzers and tools that build a
// graph without a store (engines' hand-checked graphs) use it. Call Sort
// after filling it; Nodes must include a Missing record for every edge
// endpoint that is not a live node.
type MemState struct {
	Rev  uint64
	Time int64
	// ValidAtTime, InclSuperseded, InclExpired answer ValidAt and Includes.
	ValidAtTime                 int64
	InclSuperseded, InclExpired bool
	Rels                        []RelationRecord
	NodeList                    []NodeRecord
	EdgeList                    []EdgeRecord
}

// Sort puts relations, nodes and edges in the order State requires.
func (s *MemState) Sort() {
	slices.SortFunc(s.Rels, func(a, b RelationRecord) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(s.NodeList, func(a, b NodeRecord) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(s.EdgeList, func(a, b EdgeRecord) int {
		if c := cmp.Compare(a.Src, b.Src); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Rel, b.Rel); c != 0 {
			return c
		}
		return cmp.Compare(a.Dst, b.Dst)
	})
}

func (s *MemState) Revision() uint64                     { return s.Rev }
func (s *MemState) CommitTime() int64                    { return s.Time }
func (s *MemState) ValidAt() int64                       { return s.ValidAtTime }
func (s *MemState) Includes() (bool, bool)               { return s.InclSuperseded, s.InclExpired }
func (s *MemState) Relations() ([]RelationRecord, error) { return s.Rels, nil }

func (s *MemState) Nodes(fn func(NodeRecord) error) error {
	for _, n := range s.NodeList {
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

func (s *MemState) Edges(fn func(EdgeRecord) error) error {
	for _, e := range s.EdgeList {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
