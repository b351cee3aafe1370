package engines

import (
	"encoding/binary"
	"math"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// PageRankSection is the exporter's hook (snapshot.WriterOptions.Extra): it
// computes PageRank with the default parameters (unweighted) over the
// finished core file and returns it as the optional KindPageRank section,
// one little-endian float64 per node index.
func PageRankSection(f *snapshot.File) ([]snapshot.ExtraSection, error) {
	e, err := New(csr.New(f))
	if err != nil {
		return nil, err
	}
	ranks, _, err := e.PageRank(DefaultPageRankParams())
	if err != nil {
		return nil, err
	}
	data := make([]byte, 8*len(ranks))
	for i, r := range ranks {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(r))
	}
	return []snapshot.ExtraSection{{Kind: snapshot.KindPageRank, Data: data}}, nil
}

// StoredOrComputedPageRank returns the snapshot's stored PageRank section
// when it has one and weighted is false (the section holds the unweighted
// defaults); otherwise it computes PageRank with the defaults.
func StoredOrComputedPageRank(e *Engine, weighted bool) ([]float64, error) {
	if !weighted && e.graph != nil {
		ranks, ok, err := e.graph.PageRank()
		if err != nil {
			return nil, err
		}
		if ok {
			if len(ranks) != e.numNodes {
				return nil, corruptf("pagerank section has %d entries for %d nodes", len(ranks), e.numNodes)
			}
			for i, r := range ranks {
				if !(r >= 0 && r <= 1) {
					return nil, corruptf("pagerank section: node %d has rank %v", i, r)
				}
			}
			return ranks, nil
		}
	}
	p := DefaultPageRankParams()
	p.Weighted = weighted
	ranks, _, err := e.PageRank(p)
	return ranks, err
}
