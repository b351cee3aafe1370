package gen

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"testing"
)

func digest(g *Graph) [32]byte {
	h := sha256.New()
	var b [12]byte
	for i, n := range g.Nodes {
		h.Write([]byte(n.Key))
		h.Write([]byte{byte(n.Type)})
		h.Write(g.Payload(uint32(i), nil))
	}
	for _, e := range append(slices.Clone(g.Edges), g.Extra...) {
		binary.LittleEndian.PutUint32(b[0:], e.Src)
		binary.LittleEndian.PutUint32(b[4:], e.Dst)
		b[8] = byte(e.Rel)
		h.Write(b[:9])
	}
	return [32]byte(h.Sum(nil))
}

func TestDeterministic(t *testing.T) {
	c := Config{Nodes: 3000, Seed: 7, ExtraEdges: 50}
	a, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(c)
	if digest(a) != digest(b) {
		t.Fatal("same config gave different graphs")
	}
	c.Seed = 8
	d, _ := Generate(c)
	if digest(a) == digest(d) {
		t.Fatal("different seeds gave the same graph")
	}
}

func TestInvariants(t *testing.T) {
	g, err := Generate(Config{Nodes: 5000, Seed: 1, ExtraEdges: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 5000 {
		t.Fatalf("nodes = %d, want 5000", len(g.Nodes))
	}
	seen := map[Edge]bool{}
	keys := map[string]bool{}
	for _, n := range g.Nodes {
		if keys[n.Key] {
			t.Fatalf("duplicate key %q", n.Key)
		}
		keys[n.Key] = true
	}
	for _, e := range append(slices.Clone(g.Edges), g.Extra...) {
		if seen[e] {
			t.Fatalf("duplicate edge %+v", e)
		}
		seen[e] = true
		if int(e.Src) >= len(g.Nodes) || int(e.Dst) >= len(g.Nodes) || e.Rel < 1 || int(e.Rel) > NumRels {
			t.Fatalf("edge out of range %+v", e)
		}
	}
	perNode := float64(len(g.Edges)) / float64(len(g.Nodes))
	if perNode < 6.5 || perNode > 9.5 {
		t.Fatalf("edges per node = %.2f, want about 8", perNode)
	}
	out, in := g.Degrees()
	if slices.Max(out) < 50 || slices.Max(in) < 100 {
		t.Fatalf("no hubs: max out %d, max in %d", slices.Max(out), slices.Max(in))
	}
	for i := range g.Nodes {
		p := g.Payload(uint32(i), nil)
		if len(p) < 40 || p[0] != '{' || p[len(p)-1] != '}' {
			t.Fatalf("payload %d = %q", i, p)
		}
	}
}
