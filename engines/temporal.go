package engines

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// History is the version-control history of the graph's nodes, read from
// the "git" field of their payloads (SPEC.md §9.3: changes, last_change),
// as the temporal term of the related profile uses it.
type History struct {
	// rank[n] is the number of nodes whose last change is strictly more
	// recent than n's (0 for the most recently changed); -1 when n has no
	// history.
	rank    []int32
	last    []int64 // last change, unix seconds (0: none)
	changes []int32
	nodes   int // nodes with a history
}

type temporalOnce struct {
	once sync.Once
	h    *History
	err  error
}

// History reads the git history of every node once per engine: from the
// snapshot's node_history section when it has one (SPEC.md §7.10.1,
// mapped), else by scanning the payloads of the nodes that have a "git"
// field. An engine without node information has an empty history.
func (e *Engine) History() (*History, error) {
	e.temporal.once.Do(func() {
		var recs []snapshot.NodeHistory
		mapped := false
		if e.graph != nil {
			recs, mapped = e.graph.File().NodeHistory()
		}
		if !mapped {
			if recs, e.temporal.err = e.BuildNodeHistory(); e.temporal.err != nil {
				return
			}
		}
		e.temporal.h, e.temporal.err = e.newHistory(recs)
	})
	return e.temporal.h, e.temporal.err
}

// BuildNodeHistory reads the "git" field of every payload: one record per
// node with a history, in node order (what the export stores).
func (e *Engine) BuildNodeHistory() ([]snapshot.NodeHistory, error) {
	var out []snapshot.NodeHistory
	err := e.eachPayloadWith("git", func(v uint32, p []byte) error {
		var payload struct {
			Git *struct {
				Changes    int    `json:"changes"`
				LastChange string `json:"last_change"`
			} `json:"git"`
		}
		if json.Unmarshal(p, &payload) != nil || payload.Git == nil {
			return nil // not the ingest shape: no history, not damage
		}
		t, err := time.Parse(time.RFC3339, payload.Git.LastChange)
		if err != nil {
			return nil
		}
		out = append(out, snapshot.NodeHistory{Node: v, Changes: int32(min(max(payload.Git.Changes, 0), 1<<30)), LastChange: t.Unix()})
		return nil
	})
	return out, err
}

// newHistory ranks the records (checked: nodes strictly ascending and in
// range, so damage in a mapped section is ErrCorrupt).
func (e *Engine) newHistory(recs []snapshot.NodeHistory) (*History, error) {
	if len(recs) == 0 {
		// No per-node arrays: every accessor answers "no history" past
		// their end, and filling a rank array of -1 would touch a page
		// per thousand nodes of a store ingested without git history.
		return &History{}, nil
	}
	n := e.numNodes
	h := &History{rank: make([]int32, n), last: make([]int64, n), changes: make([]int32, n)}
	for i := range h.rank {
		h.rank[i] = -1
	}
	with := make([]uint32, 0, len(recs))
	for i, r := range recs {
		if int(r.Node) >= n || (i > 0 && r.Node <= recs[i-1].Node) {
			return nil, corruptf("node history: record %d names node %d (out of order or beyond %d nodes)", i, r.Node, n)
		}
		h.last[r.Node] = r.LastChange
		h.changes[r.Node] = r.Changes
		with = append(with, r.Node)
	}
	// Newest first; equal times share a rank.
	slices.SortStableFunc(with, func(a, b uint32) int {
		switch {
		case h.last[a] > h.last[b]:
			return -1
		case h.last[a] < h.last[b]:
			return 1
		}
		return 0
	})
	for i, v := range with {
		if i > 0 && h.last[v] == h.last[with[i-1]] {
			h.rank[v] = h.rank[with[i-1]]
		} else {
			h.rank[v] = int32(i)
		}
	}
	h.nodes = len(with)
	return h, nil
}

// eachPayloadWith calls fn with every node whose payload holds the JSON
// key field, in node order (a byte search first, so only those payloads
// are decoded). An engine without node information has none.
func (e *Engine) eachPayloadWith(field string, fn func(v uint32, payload []byte) error) error {
	if e.info == nil {
		return nil
	}
	needle := []byte(`"` + field + `"`)
	for v := 0; v < e.numNodes; v++ {
		p, err := e.info.Payload(csr.NodeIndex(v))
		if err != nil {
			return err
		}
		if bytes.Contains(p, needle) {
			if err := fn(uint32(v), p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Recency is 1/(1 + rank) for a node with history (1 for the most recently
// changed nodes) and 0 for one without.
func (h *History) Recency(n csr.NodeIndex) float64 {
	if h == nil || int(n) >= len(h.rank) || h.rank[n] < 0 {
		return 0
	}
	return 1 / (1 + float64(h.rank[n]))
}

// LastChange is the node's last change in unix seconds (0: no history).
func (h *History) LastChange(n csr.NodeIndex) int64 {
	if h == nil || int(n) >= len(h.last) {
		return 0
	}
	return h.last[n]
}

// Changes is the node's number of changes (0: no history).
func (h *History) Changes(n csr.NodeIndex) int {
	if h == nil || int(n) >= len(h.changes) {
		return 0
	}
	return int(h.changes[n])
}

// Len is the number of nodes with a history.
func (h *History) Len() int {
	if h == nil {
		return 0
	}
	return h.nodes
}
