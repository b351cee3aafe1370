package engines

import (
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// fileGraph is a stand-in for *csr.Graph over a snapshot.File until csr
// lands: the same accessors, read in place.
type fileGraph struct{ f *snapshot.File }

func newEngineOverFile(f *snapshot.File) (*Engine, error) {
	g := fileGraph{f}
	var rels []csr.Relation
	for _, r := range f.Relations() {
		name, err := f.String(r.Name)
		if err != nil {
			return nil, err
		}
		rels = append(rels, csr.Relation{ID: r.ID, Name: name, DefaultWeight: r.DefaultWeight,
			Bidirectional: r.Flags&snapshot.RelBidirectional != 0, Inhibitory: r.Flags&snapshot.RelInhibitory != 0})
	}
	e, err := newEngine(g, rels)
	if err != nil {
		return nil, err
	}
	e.keys = g
	return e, nil
}

func (g fileGraph) NumNodes() int { return g.f.NumNodes() }
func (g fileGraph) NumEdges() int { return g.f.NumEdges() }
func (g fileGraph) Out(n uint32) ([]uint32, []uint32, []float32, error) {
	lo, hi, err := g.f.OutRange(n)
	if err != nil {
		return nil, nil, nil, err
	}
	return g.f.FwdTargets()[lo:hi], g.f.FwdRels()[lo:hi], g.f.FwdWeights()[lo:hi], nil
}
func (g fileGraph) In(n uint32) ([]uint32, []uint32, []float32, error) {
	lo, hi, err := g.f.InRange(n)
	if err != nil {
		return nil, nil, nil, err
	}
	return g.f.RevSources()[lo:hi], g.f.RevRels()[lo:hi], g.f.RevWeights()[lo:hi], nil
}
func (g fileGraph) Key(n uint32) (string, error) { return g.f.Key(n) }
func (g fileGraph) LookupKey(key string) (uint32, bool, error) {
	order := g.f.KeyOrder()
	lo, hi := 0, len(order)
	for lo < hi {
		mid := (lo + hi) / 2
		k, err := g.f.Key(order[mid])
		if err != nil {
			return 0, false, err
		}
		if k < key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(order) {
		k, err := g.f.Key(order[lo])
		if err != nil {
			return 0, false, err
		}
		if k == key {
			return order[lo], true, nil
		}
	}
	return 0, false, nil
}
func (g fileGraph) KeyOrder() []uint32                    { return g.f.KeyOrder() }
func (g fileGraph) Postings(tri uint32) ([]uint32, error) { return g.f.Postings(tri) }
