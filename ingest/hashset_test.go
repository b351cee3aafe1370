package ingest

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSentSetMatchesMap runs random puts, deletes and lookups against a
// map, the structure hashSet replaces: across resizes, and with the table
// three quarters full, where deletes move long probe runs back (and
// around the table's end).
func TestSentSetMatchesMap(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var s hashSet
		model := map[string]uint32{}
		keys := 1000 + rng.IntN(3000)
		key := func() string { return fmt.Sprintf("sym:example.com/p%d.F%d", rng.IntN(keys)%97, rng.IntN(keys)) }
		for op := range 40000 {
			k := key()
			switch r := rng.IntN(10); {
			case r < 6:
				tag := rng.Uint32()
				s.put(k, tag)
				model[k] = tag
			case r < 8:
				s.del(k)
				delete(model, k)
			default:
				tag, ok := s.get(k)
				if mt, mok := model[k]; ok != mok || tag != mt {
					t.Fatalf("seed %d op %d: get(%q) = %d %v, want %d %v", seed, op, k, tag, ok, mt, mok)
				}
			}
			if s.len() != len(model) {
				t.Fatalf("seed %d op %d: %d keys, want %d", seed, op, s.len(), len(model))
			}
		}
		for k, mt := range model {
			if tag, ok := s.get(k); !ok || tag != mt {
				t.Fatalf("seed %d: %q lost (%d %v, want %d)", seed, k, tag, ok, mt)
			}
		}
		if 4*s.len() > 3*len(s.slots) {
			t.Fatalf("seed %d: %d keys in %d slots", seed, s.len(), len(s.slots))
		}
	}
}

// TestGraphSentNodes: a node sent to a stream stays a node of the graph
// (HasNode, Node, NumNodes, its tag) without being held, until added again.
func TestGraphSentNodes(t *testing.T) {
	g := NewGraph()
	g.AddNode(Node{Key: "a", Type: TypeFile, Payload: []byte(`{}`)})
	g.AddNode(Node{Key: "b", Type: TypeFile})
	g.markSent("a", 7)
	if !g.HasNode("a") || g.NumNodes() != 2 {
		t.Fatalf("after markSent: HasNode %v, %d nodes", g.HasNode("a"), g.NumNodes())
	}
	if n, ok := g.Node("a"); !ok || n.Key != "a" || n.Payload != nil {
		t.Fatalf("Node(a) = %+v %v", n, ok)
	}
	if tag, ok := g.sentTag("a"); !ok || tag != 7 {
		t.Fatalf("sentTag(a) = %d %v", tag, ok)
	}
	if _, ok := g.sentTag("b"); ok {
		t.Fatal("b was never sent")
	}
	g.AddNode(Node{Key: "a", Type: TypeFile, Payload: []byte(`{"x":1}`)})
	if _, ok := g.sentTag("a"); ok || g.NumNodes() != 2 {
		t.Fatalf("a added again: still sent, or %d nodes", g.NumNodes())
	}
}

// TestGraphScopes: the symbols sent in a package's scope are nodes of the
// graph until the scope is dropped, which the graph then still counts;
// other keys sent in a scope, and symbols sent outside one, stay.
func TestGraphScopes(t *testing.T) {
	g := NewGraph()
	for _, k := range []string{"sym:p.F", "file:p/a.go", "sym:q.G"} {
		g.AddNode(Node{Key: k, Type: TypeSymbol, Payload: []byte(`{}`)})
	}
	g.markSent("sym:q.G", 0)
	g.setScope("p")
	g.markSent("sym:p.F", 3)
	g.markSent("file:p/a.go", 0)
	g.setScope("")
	if tag, ok := g.sentTag("sym:p.F"); !ok || tag != 3 || !g.HasNode("sym:p.F") {
		t.Fatalf("sym:p.F in scope: tag %d, %v", tag, ok)
	}
	if g.scoped["p"].len() != 1 || g.sent.len() != 2 {
		t.Fatalf("scope holds %d keys, the graph's set %d: want 1 and 2", g.scoped["p"].len(), g.sent.len())
	}
	g.dropScope("p")
	if g.HasNode("sym:p.F") {
		t.Error("a symbol of a dropped scope is still a node")
	}
	if !g.HasNode("file:p/a.go") || !g.HasNode("sym:q.G") {
		t.Error("keys sent outside the scope's symbols were dropped with it")
	}
	if n := g.NumNodes(); n != 3 {
		t.Errorf("NumNodes %d after the scope is dropped, want 3", n)
	}
}

// Parked sets answer as they did in memory: every symbol sent in a scope
// (one with a dot in its import path's last element among them) is a node
// with its tag after its set is parked and read back, none other is, and
// the count of nodes does not move.
func TestGraphParkedScopes(t *testing.T) {
	g := NewGraph()
	g.parkAt(t.TempDir())
	defer g.closePark()
	want := map[string]uint32{}
	pkgs := []string{"example.com/a", "gopkg.in/yaml.v3", "example.com/a/b"}
	for i, p := range pkgs {
		g.setScope(p)
		for j := range 3000 {
			k := fmt.Sprintf("sym:%s.F%d", p, j)
			g.AddNode(Node{Key: k, Type: TypeSymbol})
			g.markSent(k, uint32(i*10000+j))
			want[k] = uint32(i*10000 + j)
		}
		g.setScope("")
	}
	g.AddNode(Node{Key: "sym:example.com/c.G", Type: TypeSymbol})
	g.setScope("example.com/a")
	g.markSent("sym:example.com/c.G", 7) // another package's symbol: the graph's own set
	g.setScope("")
	want["sym:example.com/c.G"] = 7
	n := g.NumNodes()
	g.parkScope("example.com/a")
	g.parkScope("gopkg.in/yaml.v3")
	if len(g.scoped) != 1 || len(g.parked) != 2 || g.park.parked != 6000 {
		t.Fatalf("%d sets in memory, %d parked (%d symbols): want 1, 2 (6000)", len(g.scoped), len(g.parked), g.park.parked)
	}
	if g.NumNodes() != n {
		t.Errorf("NumNodes %d once parked, want %d", g.NumNodes(), n)
	}
	for k, tag := range want {
		if got, ok := g.sentTag(k); !ok || got != tag {
			t.Fatalf("%s: tag %d, %v; want %d", k, got, ok, tag)
		}
	}
	if g.park.unparked != 6000 || len(g.parked) != 0 {
		t.Errorf("%d symbols read back, %d sets still parked: want 6000, 0", g.park.unparked, len(g.parked))
	}
	for _, k := range []string{"sym:example.com/a.F3000", "sym:gopkg.in/yaml.v3.G", "sym:example.com/a/b.F-1", "sym:gopkg.in/yaml.F1"} {
		if g.HasNode(k) {
			t.Errorf("%s is a node; it was never sent", k)
		}
	}
	// A package that sent no symbol yet (its set has no seeds): parked,
	// then sent to.
	g.setScope("example.com/e")
	g.setScope("")
	g.parkScope("example.com/e")
	g.AddNode(Node{Key: "sym:example.com/e.H", Type: TypeSymbol})
	g.setScope("example.com/e")
	g.markSent("sym:example.com/e.H", 9)
	g.setScope("")
	g.parkScope("example.com/e")
	if tag, ok := g.sentTag("sym:example.com/e.H"); !ok || tag != 9 {
		t.Errorf("sym:example.com/e.H after an empty set was parked: tag %d, %v", tag, ok)
	}
	n++
	g.parkScope("example.com/a/b")
	g.dropScope("example.com/a/b")
	if g.HasNode("sym:example.com/a/b.F1") || g.NumNodes() != n {
		t.Errorf("a dropped parked set still answers, or NumNodes %d moved (want %d)", g.NumNodes(), n)
	}
}
