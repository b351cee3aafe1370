package engines

import (
	"slices"
	"testing"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
)

// testRel is a relation of a test graph.
type testRel struct {
	id          uint32
	name        string
	bidi, inhib bool
	role        roles.Role
}

// testEdge is an edge of a test graph, by node position in testGraph.keys.
type testEdge struct {
	src, dst int
	rel      uint32
	w        float32
}

// testGraph describes a small graph: node i has NodeID i+1 and key keys[i].
type testGraph struct {
	keys  []string
	rels  []testRel
	edges []testEdge
	// types and payloads by node position (default type "t", no payload).
	types    map[int]string
	payloads map[int]string
}

// defaultRels: 1 "uses" (plain), 2 "related" (bidirectional), 3 "blocks"
// (inhibitory).
var defaultRels = []testRel{{1, "uses", false, false, roles.Usage}, {2, "related", true, false, roles.Memory}, {3, "blocks", false, true, roles.Memory}}

// memState feeds a testGraph to the snapshot writer.
type memState struct{ g testGraph }

func (m memState) Revision() uint64       { return 1 }
func (m memState) CommitTime() int64      { return 1 }
func (m memState) ValidAt() int64         { return 0 }
func (m memState) Includes() (bool, bool) { return false, false }
func (m memState) Relations() ([]snapshot.RelationRecord, error) {
	var out []snapshot.RelationRecord
	for _, r := range m.g.rels {
		out = append(out, snapshot.RelationRecord{ID: r.id, Name: r.name, DefaultWeight: 1, Bidirectional: r.bidi, Inhibitory: r.inhib, Role: r.role})
	}
	return out, nil
}
func (m memState) Nodes(fn func(snapshot.NodeRecord) error) error {
	for i, k := range m.g.keys {
		typ := "t"
		if t, ok := m.g.types[i]; ok {
			typ = t
		}
		var payload []byte
		if p, ok := m.g.payloads[i]; ok {
			payload = []byte(p)
		}
		if err := fn(snapshot.NodeRecord{ID: uint64(i + 1), Key: k, Type: typ, Payload: payload, Rev: 1, CreatedRev: 1, CreatedTS: 1, UpdatedTS: 1}); err != nil {
			return err
		}
	}
	return nil
}
func (m memState) Edges(fn func(snapshot.EdgeRecord) error) error {
	es := slices.Clone(m.g.edges)
	slices.SortFunc(es, func(a, b testEdge) int {
		if a.src != b.src {
			return a.src - b.src
		}
		if a.rel != b.rel {
			return int(a.rel) - int(b.rel)
		}
		return a.dst - b.dst
	})
	for _, e := range es {
		if err := fn(snapshot.EdgeRecord{Src: uint64(e.src + 1), Dst: uint64(e.dst + 1), Rel: e.rel, Weight: e.w, Rev: 1, TS: 1}); err != nil {
			return err
		}
	}
	return nil
}

// snapshotBytes writes g as a snapshot file image.
func snapshotBytes(t testing.TB, g testGraph, opts snapshot.WriterOptions) []byte {
	t.Helper()
	if g.rels == nil {
		g.rels = defaultRels
	}
	b, _, err := snapshot.Write(memState{g}, opts)
	if err != nil {
		t.Fatalf("snapshot.Write: %v", err)
	}
	return b
}

// engineFromBytes mounts a snapshot image and builds an engine over it.
func engineFromBytes(t testing.TB, b []byte) (*Engine, error) {
	t.Helper()
	g, err := csr.FromBytes(b)
	if err != nil {
		return nil, err
	}
	return New(g)
}

// buildEngine writes g as a snapshot and mounts it.
func buildEngine(t testing.TB, g testGraph) *Engine {
	t.Helper()
	e, err := engineFromBytes(t, snapshotBytes(t, g, snapshot.WriterOptions{}))
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	return e
}

// node returns the node index of key in e's graph.
func node(t testing.TB, e *Engine, key string) csr.NodeIndex {
	t.Helper()
	n, ok, err := e.keys.LookupKey(key)
	if err != nil || !ok {
		t.Fatalf("key %q: ok=%v err=%v", key, ok, err)
	}
	return n
}

// keyOf returns the key of n.
func keyOf(t testing.TB, e *Engine, n csr.NodeIndex) string {
	t.Helper()
	k, err := e.keys.Key(n)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
