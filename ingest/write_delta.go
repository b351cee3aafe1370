package ingest

// A write that compares only what changed. WriteCodeTx reads a language's
// whole share of the store to find the difference (a scan of every node):
// tens of milliseconds on a 1,000-file tree, the most of a refresh after a
// one-file edit. A caller that holds the graph its last write wrote (a
// long-lived process refreshing one tree, SPEC.md §9.10) knows where the
// new graph can differ from the store: where it differs from that graph.

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
)

// WriteCodeDeltaTx is WriteCodeTx for a caller that knows the store's
// share of langs equals prev (the graph its last write of that share
// wrote, directories included): it adds the directories of otherFiles (the
// file nodes of the languages not written, WriteStats.OtherFiles of that
// write) to g as WriteCodeTx does, then reads and compares only the nodes
// whose type, payload or out-edges differ between prev and g. The store
// ends as WriteCodeTx would leave it, provided prev is what it holds
// (nodes of prev that langs do not own are ignored).
func WriteCodeDeltaTx(tx *lmdbstore.WriteTxn, g, prev *Graph, langs, otherFiles []string, progress func(Progress)) (WriteStats, error) {
	ownsKey := func(n Node) bool {
		o := OwnerOf(lmdbstore.Node{Key: n.Key, Payload: n.Payload})
		return o == sharedOwner || o != "" && slices.Contains(langs, o)
	}
	rels, err := ensureRelations(tx, GoRelations)
	if err != nil {
		return WriteStats{}, err
	}
	for _, p := range otherFiles {
		AddDirs(g, p)
	}
	changed := make(map[string]bool)
	for key, n := range g.nodes {
		if old, ok := prev.nodes[key]; !ok || old.Type != n.Type || !bytes.Equal(old.Payload, n.Payload) {
			changed[key] = true
		}
	}
	for key, n := range prev.nodes {
		if _, ok := g.nodes[key]; !ok && ownsKey(n) {
			changed[key] = true
		}
	}
	for k, w := range g.edges {
		if old, ok := prev.edges[k]; !ok || old != w {
			changed[k.src] = true
		}
	}
	for k := range prev.edges {
		if _, ok := g.edges[k]; ok || changed[k.src] {
			continue
		}
		if n, ok := prev.nodes[k.src]; ok && ownsKey(n) {
			changed[k.src] = true
		}
	}
	// The stored state of the changed keys only, read as readState does.
	r := tx.Reader()
	relIDs := make(map[lmdbstore.RelID]bool, len(rels))
	for _, rel := range rels {
		relIDs[rel.ID] = true
	}
	st := &storedState{nodes: make(map[string]lmdbstore.Node), edges: make(map[idEdge]float32),
		others: make(map[string]lmdbstore.Node)}
	sub := NewGraph()
	for key := range changed {
		if n, ok := g.nodes[key]; ok {
			sub.AddNode(n)
		}
		n, err := r.GetNode(key, lmdbstore.At{})
		if errors.Is(err, lmdbstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return WriteStats{}, err
		}
		n.Payload = bytes.Clone(n.Payload)
		o := OwnerOf(n)
		switch {
		case o == sharedOwner || o != "" && slices.Contains(langs, o):
			st.nodes[key] = n
			err := r.ScanOut(n.ID, 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool {
				if relIDs[e.Rel] {
					st.edges[idEdge{src: n.ID, dst: e.Peer, rel: e.Rel}] = e.Weight
				}
				return true
			})
			if err != nil {
				return WriteStats{}, err
			}
		case strings.HasPrefix(key, "file:"):
			st.others[key] = n
		}
	}
	for k, w := range g.edges {
		if changed[k.src] {
			sub.edges[k] = w
		}
	}
	p, err := diff(r, sub, st, rels, keepGitField)
	if err != nil {
		return WriteStats{}, err
	}
	debugf("write: delta of %d keys", len(changed))
	return applyPlan(tx, st, p, progress)
}
