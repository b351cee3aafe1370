package engines

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/snapshot"
)

// randomTextGraph: n nodes with random text payloads over a small
// vocabulary, some without any.
func randomTextGraph(rng *rand.Rand, n int) testGraph {
	g := testGraph{rels: defaultRels, types: map[int]string{}, payloads: map[int]string{}}
	for i := range n {
		g.keys = append(g.keys, fmt.Sprintf("note:n%03d", i))
		g.types[i] = []string{"note", "decision"}[rng.IntN(2)]
		if rng.IntN(4) > 0 {
			g.payloads[i] = randomText(rng)
		}
	}
	return g
}

func randomText(rng *rand.Rand) string {
	words := []string{"retry", "backoff", "cache", "budget", "limit", "server", "overload", "lunch", "menu"}
	s := ""
	for range 1 + rng.IntN(8) {
		s += words[rng.IntN(len(words))] + " "
	}
	return fmt.Sprintf(`{"text":%q}`, s)
}

// TestTextIndexFromBase: a text index built from a base (the documents of
// the nodes whose key, type and payload did not change taken from it,
// the others and the kv entries tokenized) equals the one built from
// scratch, over random graphs and random changes (payloads and types
// changed, nodes added and removed at the end, kv entries changed).
func TestTextIndexFromBase(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 40 {
		a := randomTextGraph(rng, 1+rng.IntN(40))
		kvA := []KVEntry{{Address: "kv:r/n/a", Payload: []byte(randomText(rng))}}
		_, ab := indexed(t, a, kvA)
		af, err := snapshot.FromBytes(ab)
		if err != nil {
			t.Fatal(err)
		}
		ax, ok := af.TextIndex()
		if !ok {
			t.Fatal("the base has no text index")
		}
		// b: a changed.
		b := testGraph{rels: a.rels, keys: append([]string(nil), a.keys...), types: map[int]string{}, payloads: map[int]string{}}
		for i, typ := range a.types {
			b.types[i] = typ
		}
		for i, p := range a.payloads {
			b.payloads[i] = p
		}
		if cut := rng.IntN(len(b.keys) + 1); rng.IntN(3) == 0 {
			b.keys = b.keys[:max(cut, 1)]
		}
		for i := len(b.keys); i < len(a.keys)+rng.IntN(5); i++ {
			b.keys = append(b.keys, fmt.Sprintf("note:added%03d", i))
			b.payloads[i] = randomText(rng)
		}
		changed := map[int]bool{}
		for range rng.IntN(5) {
			i := rng.IntN(len(b.keys))
			changed[i] = true
			if rng.IntN(2) == 0 {
				b.payloads[i] = randomText(rng)
			} else {
				b.types[i] = "constraint"
			}
		}
		kvB := []KVEntry{{Address: "kv:r/n/b", Payload: []byte(randomText(rng))}, kvA[0]}
		e, _ := indexed(t, b, kvB)
		same := make([]uint32, len(b.keys))
		for v := range same {
			same[v] = NoBaseDoc
			if v < len(a.keys) && b.keys[v] == a.keys[v] && !changed[v] {
				same[v] = uint32(v)
			}
		}
		want, err := e.BuildTextIndex(kvB)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.BuildTextIndexFrom(kvB, &TextIndexBase{Index: ax, Same: same})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("round %d: from the base (-scratch +base):\n%s", round, d)
		}
	}
}

// TestTextIndexFromBaseRefuses: a base that does not fit the graph is an
// invalid argument, not a misread.
func TestTextIndexFromBaseRefuses(t *testing.T) {
	g := randomTextGraph(rand.New(rand.NewPCG(1, 1)), 5)
	e, b := indexed(t, g, nil)
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := f.TextIndex()
	for name, same := range map[string][]uint32{
		"too few nodes":     {0, 1},
		"document past end": {0, 1, 2, 3, 99},
		"out of order":      {0, 2, 1, 3, 4},
	} {
		if _, err := e.BuildTextIndexFrom(nil, &TextIndexBase{Index: x, Same: same}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
