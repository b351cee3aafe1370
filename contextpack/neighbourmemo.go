package contextpack

import (
	"strings"
	"sync"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// maxMemoNeighbours bounds the places a neighbourMemo keeps.
const maxMemoNeighbours = 1 << 16

// neighbourMemo keeps, for one engine snapshot and one view revision, what
// the store says about the nodes the related ranking placed: whether each
// is a live file or symbol, not superseded, and its item (key, path,
// lines, provenance) and valid time. The committed state of a revision
// never changes, so a long-lived Assembler (the MCP server) reads and
// decodes a node once per revision instead of once per pack that places
// it (the places of neighbouring targets overlap: on the Go standard
// library, reading them was a fifth of a pack). Whether a node is valid at
// the request's valid-at time, and whether it is a target, are decided per
// call. A new snapshot or view starts the memo over.
type neighbourMemo struct {
	mu    sync.Mutex
	snap  *enginesnap.Snap // identity only: the memo holds no reference
	view  lmdbstore.Revision
	items map[csr.NodeIndex]placed
}

// placed is what a revision says about one node: ok when it is a live,
// current file or symbol, with its item (no score) and valid time.
type placed struct {
	ok    bool
	nb    Neighbour
	valid lmdbstore.Validity
}

func (m *neighbourMemo) get(snap *enginesnap.Snap, view lmdbstore.Revision, n csr.NodeIndex) (placed, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap != snap || m.view != view {
		return placed{}, false
	}
	p, ok := m.items[n]
	return p, ok
}

// put keeps p, its strings copied out of the snapshot's mapping (which
// may be unmapped while the memo still holds them).
func (m *neighbourMemo) put(snap *enginesnap.Snap, view lmdbstore.Revision, n csr.NodeIndex, p placed) {
	p.nb.Key, p.nb.Path = strings.Clone(p.nb.Key), strings.Clone(p.nb.Path)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap != snap || m.view != view || len(m.items) >= maxMemoNeighbours {
		m.snap, m.view, m.items = snap, view, make(map[csr.NodeIndex]placed)
	}
	m.items[n] = p
}
