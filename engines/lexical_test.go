package engines

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/internal/testcmp"
)

// lexGraph: files F, A, B, C, D with vocabularies; F co-changed with A
// (weight .9) and B (.5); C and D are linked to nothing.
var lexTerms = map[string]map[string]int{
	"F": {"store": 3, "page": 2, "cursor": 1},
	"A": {"flag": 2, "cobra": 1},
	"B": {"store": 1, "page": 1, "zeta": 1},
	"C": {"store": 2, "page": 2, "cursor": 1},
	"D": {"other": 1},
}

func lexGraph() testGraph {
	g := testGraph{
		keys:     []string{"F", "A", "B", "C", "D"},
		rels:     roleRels,
		edges:    []testEdge{{0, 1, 4, 0.9}, {0, 2, 4, 0.5}},
		types:    map[int]string{},
		payloads: map[int]string{},
	}
	for i, k := range g.keys {
		g.types[i] = "file"
		b, _ := json.Marshal(map[string]any{"path": k + ".go", "terms": lexTerms[k]})
		g.payloads[i] = string(b)
	}
	return g
}

// tfidfCosine is the lexical similarity of SPEC §8.2.1 written out over
// maps: weights (1 + ln tf) · ln(N/df), cosine of the two vectors.
func tfidfCosine(docs map[string]map[string]int, a, b string) float64 {
	df := map[string]int{}
	for _, d := range docs {
		for t := range d {
			df[t]++
		}
	}
	vec := func(d map[string]int) map[string]float64 {
		v := map[string]float64{}
		for t, c := range d {
			v[t] = (1 + math.Log(float64(c))) * math.Log(float64(len(docs))/float64(df[t]))
		}
		return v
	}
	va, vb := vec(docs[a]), vec(docs[b])
	dot, na, nb := 0.0, 0.0, 0.0
	for t, w := range va {
		dot += w * vb[t]
		na += w * w
	}
	for _, w := range vb {
		nb += w * w
	}
	return dot / math.Sqrt(na*nb)
}

func TestLexiconHandComputed(t *testing.T) {
	e := buildEngine(t, lexGraph())
	lex, err := e.Lexicon()
	if err != nil {
		t.Fatal(err)
	}
	if lex.Len() != 5 {
		t.Fatalf("lexicon of %d nodes, want 5", lex.Len())
	}
	got := byKey(t, e, lex.Similar([]Seed{{node(t, e, "F"), 1}}))
	want := []keyed{{"C", tfidfCosine(lexTerms, "F", "C")}, {"B", tfidfCosine(lexTerms, "F", "B")}}
	if d := gocmp.Diff(want, got, approx); d != "" {
		t.Errorf("Similar(F) (-want +got):\n%s", d)
	}
	if !(want[0].Score > want[1].Score && want[1].Score > 0) {
		t.Fatalf("the fixture should rank C above B above nothing: %v", want)
	}
	// Two seeds: their vectors add up, scaled by the seed scores.
	got = byKey(t, e, lex.Similar([]Seed{{node(t, e, "F"), 1}, {node(t, e, "A"), 0.5}}))
	want = []keyed{{"C", tfidfCosine(lexTerms, "F", "C")}, {"B", tfidfCosine(lexTerms, "F", "B")}}
	if d := gocmp.Diff(want, got, approx); d != "" {
		t.Errorf("Similar(F, A/2) (-want +got):\n%s", d)
	}
}

func TestRelatedFusesLexicalSimilarity(t *testing.T) {
	e := buildEngine(t, lexGraph())
	F := node(t, e, "F")
	p := relatedNoTime()
	p.Kind = "file"
	// The graph alone: F (the seed), then A (co-changed .9), then B (.5).
	p.Lexical = false
	graph, err := e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, e, graph); !gocmp.Equal(got, []string{"F", "A", "B"}) {
		t.Fatalf("graph ranking %v, want F A B", got)
	}
	// Fused with k = 60: activation ranks F 1, A 2, B 3; lexical ranks C 1,
	// B 2. B: 1/63 + 1/62; F and C: 1/61 each, F first (activated);
	// A: 1/62.
	p.Lexical = true
	fused, err := e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []keyed{{"B", 1.0/63 + 1.0/62}, {"F", 1.0 / 61}, {"C", 1.0 / 61}, {"A", 1.0 / 62}}
	if d := gocmp.Diff(want, byKey(t, e, fused), approx); d != "" {
		t.Errorf("fused ranking (-want +got):\n%s", d)
	}
	p.TopK = 2
	if top, err := e.Related([]Seed{{F, 1}}, p); err != nil || !gocmp.Equal(keysOf(t, e, top), []string{"B", "F"}) {
		t.Errorf("fused top 2: %v, %v", keysOf(t, e, top), err)
	}
	// Without the file filter the ranking is the graph's (no fusion).
	p.Kind, p.TopK = "", 0
	mixed, err := e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, e, mixed); !gocmp.Equal(got, []string{"F", "A", "B"}) {
		t.Errorf("mixed kinds %v, want the graph's F A B", got)
	}
	p.Kind, p.LexicalK = "file", 0
	if _, err := e.Related([]Seed{{F, 1}}, p); !isInvalid(err) {
		t.Errorf("k 0: %v, want an invalid-argument error", err)
	}
}

func keysOf(t *testing.T, e *Engine, rs []Scored) []string {
	t.Helper()
	var out []string
	for _, r := range rs {
		out = append(out, keyOf(t, e, r.Node))
	}
	return out
}

// TestRelatedViews: one walk ranked per kind answers, view by view, what
// Related answers with that kind (the fusion of the file view included),
// on lexGraph with symbols added to the files and on random graphs whose
// nodes have random kinds.
func TestRelatedViews(t *testing.T) {
	g := lexGraph()
	for _, f := range []int{0, 1, 2} { // a symbol defined in F, A and B
		g.keys = append(g.keys, "S"+g.keys[f])
		g.types[len(g.keys)-1] = "symbol"
		g.edges = append(g.edges, testEdge{f, len(g.keys) - 1, 2, 1})
	}
	graphs := []testGraph{g}
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := []string{"file", "symbol", "dir"}
	for trial := 0; trial < 20; trial++ {
		r := randomGraph(rng, 20+rng.IntN(30), 40+rng.IntN(120))
		r.rels = roleRels
		r.types = map[int]string{}
		for i := range r.keys {
			r.types[i] = kinds[rng.IntN(len(kinds))]
		}
		graphs = append(graphs, r)
	}
	for gi, g := range graphs {
		e := buildEngine(t, g)
		seeds := []Seed{{Node: 0, Score: 1}}
		p := relatedNoTime()
		p.TopK = 4
		views, err := e.RelatedViews(seeds, p, "", "file", "symbol")
		if err != nil {
			t.Fatal(err)
		}
		for i, kind := range []string{"", "file", "symbol"} {
			q := p
			q.Kind = kind
			want, err := e.Related(seeds, q)
			if err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(want, views[i]); d != "" {
				t.Errorf("graph %d, kind %q (-Related +view):\n%s", gi, kind, d)
			}
		}
		if gi == 0 && len(views[1]) > 0 && keyOf(t, e, views[1][0].Node) != "B" {
			t.Errorf("the file view is not fused: %v", keysOf(t, e, views[1]))
		}
	}
}

// similarByMap is Similar as first written, over maps: the reference the
// dense accumulator must equal bit for bit.
func similarByMap(l *Lexicon, seeds []Seed) []Scored {
	acc := map[uint32]float64{}
	isSeed := map[uint32]bool{}
	for _, sd := range seeds {
		isSeed[sd.Node] = true
		if !(sd.Score > 0) || math.IsInf(sd.Score, 0) {
			continue
		}
		terms, ws, _ := l.a.Vector(sd.Node)
		for i, t := range terms {
			ns, pws, _ := l.a.Postings(t)
			for j, v := range ns {
				acc[v] += sd.Score * ws[i] * pws[j]
			}
		}
	}
	var out []Scored
	for v, s := range acc {
		if s > 0 && !isSeed[v] {
			out = append(out, Scored{Node: v, Score: s})
		}
	}
	slices.SortFunc(out, func(a, b Scored) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Node, b.Node)
	})
	return out
}

// TestSimilarEqualsMapSums: on random vocabularies, Similar (one reused
// dense accumulator) equals the map-based reference exactly, call after
// call, for one seed, several, repeated and zero-scored ones.
func TestSimilarEqualsMapSums(t *testing.T) {
	words := []string{"store", "page", "cursor", "flag", "cobra", "zeta", "tree", "node", "edge", "hash", "lock", "map"}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 2 + rng.IntN(40)
		g := testGraph{rels: roleRels, types: map[int]string{}, payloads: map[int]string{}}
		for i := range n {
			g.keys = append(g.keys, fmt.Sprintf("f%d", i))
			terms := map[string]int{}
			for range rng.IntN(6) {
				terms[words[rng.IntN(len(words))]] = 1 + rng.IntN(4)
			}
			g.types[i] = "file"
			b, _ := json.Marshal(map[string]any{"path": g.keys[i] + ".go", "terms": terms})
			g.payloads[i] = string(b)
		}
		e := buildEngine(t, g)
		lex, err := e.Lexicon()
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for range 10 {
			var seeds []Seed
			for range 1 + rng.IntN(3) {
				seeds = append(seeds, Seed{Node: uint32(rng.IntN(n)), Score: []float64{1, 0.5, 0, 2}[rng.IntN(4)]})
			}
			want := similarByMap(lex, seeds)
			got := lex.Similar(seeds)
			if diff := gocmp.Diff(want, got, testcmp.EquateEmpty()); diff != "" {
				t.Fatalf("seed %d, seeds %v (-map +dense):\n%s", seed, seeds, diff)
			}
			compared += len(want)
		}
		if seed == 0 && compared == 0 {
			t.Fatal("nothing compared")
		}
	}
}
