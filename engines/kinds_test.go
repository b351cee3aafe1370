package engines

import (
	"fmt"
	"testing"
)

// TestKindSetLearnt: isKind answers exactly whether a node's written type
// is the kind, the first time (read) and again (from the set, asked in a
// different order); surelyNot is true only for a node asked about whose
// type differs.
func TestKindSetLearnt(t *testing.T) {
	const n = 100 // more than one 32-bit word of the set
	g := testGraph{types: map[int]string{}}
	want := map[int]bool{}
	for i := 0; i < n; i++ {
		g.keys = append(g.keys, fmt.Sprintf("k%03d", i))
		switch i % 3 {
		case 0:
			g.types[i], want[i] = "file", true
		case 1:
			g.types[i] = "symbol"
		}
	}
	e := buildEngine(t, g)
	ks := e.nodesOfKind("file")
	if ks != e.nodesOfKind("file") {
		t.Fatal("nodesOfKind made a second set for the same kind")
	}
	keyOf := func(i int) uint32 { return node(t, e, g.keys[i]) }
	for i := 0; i < n; i++ {
		if ks.surelyNot(keyOf(i)) {
			t.Fatalf("node %d: surelyNot before it was asked about", i)
		}
	}
	for _, order := range [][2]int{{0, 1}, {n - 1, -1}} { // asked, then asked again backwards
		for i := order[0]; i >= 0 && i < n; i += order[1] {
			v := keyOf(i)
			got, err := e.isKind(ks, "file", v)
			if err != nil {
				t.Fatal(err)
			}
			if got != want[i] {
				t.Errorf("isKind(node %d of type %q) = %v", i, g.types[i], got)
			}
			if ks.surelyNot(v) != !want[i] {
				t.Errorf("surelyNot(node %d of type %q) = %v after asking", i, g.types[i], ks.surelyNot(v))
			}
		}
	}
}
