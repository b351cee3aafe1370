package contextpack

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/enginesnap"
)

// maxMemoViews bounds the walks a relatedMemo keeps.
const maxMemoViews = 64

// relatedMemo keeps the ranked views of the related walk (RelatedViews)
// of one engine snapshot by seeds and top-k, so that a long-lived
// Assembler (the MCP server) asked again about a target walks and ranks
// once per snapshot: the walk and its ranking are most of a warm call (on
// the Go standard library, ~15 of ~20 ms CPU). They are a pure function of
// the snapshot and the parameters; everything that depends on the store's
// view (which places are live and current) is decided per call from them.
// A new snapshot starts the memo over. Walks with a feedback overlay
// (read from the store at the view) are not kept.
type relatedMemo struct {
	mu    sync.Mutex
	snap  *enginesnap.Snap // identity only: the memo holds no reference
	views map[string][][]engines.Scored
}

// memoKey is the seeds (node, score, in order) and topK as bytes.
func memoKey(seeds []engines.Seed, topK int) string {
	b := make([]byte, 0, 8+12*len(seeds))
	b = binary.LittleEndian.AppendUint64(b, uint64(topK))
	for _, s := range seeds {
		b = binary.LittleEndian.AppendUint32(b, s.Node)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.Score))
	}
	return string(b)
}

// get returns the views kept for key in snap. The slices are shared:
// callers must not modify them.
func (m *relatedMemo) get(snap *enginesnap.Snap, key string) ([][]engines.Scored, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap != snap {
		return nil, false
	}
	v, ok := m.views[key]
	return v, ok
}

func (m *relatedMemo) put(snap *enginesnap.Snap, key string, views [][]engines.Scored) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap != snap || len(m.views) >= maxMemoViews {
		m.snap, m.views = snap, make(map[string][][]engines.Scored)
	}
	m.views[key] = views
}
