package engines

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
)

// roleRels are relations with the roles ingest gives them: 1 contains
// (structure, bidirectional), 2 defines (structure), 3 calls (usage), 4
// co_changed (history, bidirectional), 5 blocks (inhibitory, memory), 6
// custom (memory, the role of a relation added without one).
var roleRels = []testRel{
	{1, "contains", true, false, roles.Structure}, {2, "defines", false, false, roles.Structure}, {3, "calls", false, false, roles.Usage},
	{4, "co_changed", true, false, roles.History}, {5, "blocks", false, true, roles.Memory}, {6, "custom", false, false, roles.Memory},
}

// codeGraph: file F contains symbols s1, s2; file G contains t1; s1 calls
// t1 (.5); F co_changed H (.5).
var codeGraph = testGraph{
	keys: []string{"F", "G", "H", "s1", "s2", "t1"},
	rels: roleRels,
	edges: []testEdge{
		{0, 3, 1, 1}, {0, 4, 1, 1}, {1, 5, 1, 1}, {3, 5, 3, 0.5}, {0, 2, 4, 0.5},
	},
	types: map[int]string{0: "file", 1: "file", 2: "file", 3: "symbol", 4: "symbol", 5: "symbol"},
}

func relatedNoTime() RelatedParams {
	p := DefaultRelatedParams()
	p.Temporal = 0
	p.PerContainer = 0
	p.TopK = 0
	return p
}

func TestRelatedHandComputed(t *testing.T) {
	e := buildEngine(t, codeGraph)
	F := node(t, e, "F")
	// Worked by hand (SPEC §8.2.1), roles structure 1, usage .5, history .3.
	// Step 1: F's edges weigh s1 1, s2 1, H .3×.5 = .15 (total 2.15), so
	// s1 = s2 = 1/2.15, H = .15/2.15. Step 2: s1 splits between t1 (calls
	// out, .5×.5 = .25) and F (contains in, 1): t1 gets .2 of it, F .8; s2
	// and H send everything back to F. So F = 1 + (.8+1+.15)/2.15.
	k := 2.15
	depth2 := []keyed{{"F", 1 + 1.95/k}, {"s1", 1 / k}, {"s2", 1 / k}, {"t1", .2 / k}, {"H", .15 / k}}
	p := relatedNoTime()
	p.Depth = 2
	got, err := e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(depth2, byKey(t, e, got), approx); d != "" {
		t.Errorf("depth 2 (-want +got):\n%s", d)
	}
	// Depth 3 reaches G through t1 (contains in-edge 1 of t1's 1.25: .8).
	p.Depth = 3
	got, err = e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	scores := map[string]float64{}
	for _, r := range byKey(t, e, got) {
		scores[r.Key] = r.Score
	}
	if want := .2 / k * .8; math.Abs(scores["G"]-want) > 1e-12 {
		t.Errorf("depth 3: G = %v, want %v", scores["G"], want)
	}
	// Files only, seed included: F, then s1's file-level effects.
	p.Kind = "file"
	got, err = e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range byKey(t, e, got) {
		keys = append(keys, r.Key)
	}
	if d := cmp.Diff([]string{"F", "H", "G"}, keys); d != "" {
		t.Errorf("files only (-want +got):\n%s", d)
	}
	// A relation filter to calls alone: F has no calls edge, nothing spreads.
	p = relatedNoTime()
	p.Relations = []uint32{3}
	got, err = e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]keyed{{"F", 1}}, byKey(t, e, got), approx); d != "" {
		t.Errorf("calls only (-want +got):\n%s", d)
	}
}

// TestRelatedRoleWeights: weights come from roles. Usage 0 cuts the calls
// edge, history 0 drops H; a relation added without a role is memory.
func TestRelatedRoleWeights(t *testing.T) {
	e := buildEngine(t, codeGraph)
	F := node(t, e, "F")
	p := relatedNoTime()
	p.Roles[roles.Usage] = RoleWeight{}
	p.Roles[roles.History] = RoleWeight{}
	got, err := e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range byKey(t, e, got) {
		if r.Key == "H" || r.Key == "t1" || r.Key == "G" {
			t.Errorf("%s reached with usage and history weighted 0", r.Key)
		}
	}
	g := codeGraph
	g.edges = append(slices.Clone(g.edges), testEdge{0, 1, 6, 1}, testEdge{0, 2, 5, 1})
	e = buildEngine(t, g)
	p = relatedNoTime()
	p.Depth = 1
	got, err = e.Related([]Seed{{F, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	// F → G custom (none, .5), s1 1, s2 1, H .15; blocks is inhibitory and
	// not followed: total 2.65.
	want := []keyed{{"F", 1}, {"s1", 1 / 2.65}, {"s2", 1 / 2.65}, {"G", .5 / 2.65}, {"H", .15 / 2.65}}
	if d := cmp.Diff(want, byKey(t, e, got), approx); d != "" {
		t.Errorf("custom relation (-want +got):\n%s", d)
	}
}

func gitPayload(changes int, last string) string {
	return fmt.Sprintf(`{"git":{"changes":%d,"first_change":"2020-01-01T00:00:00Z","last_change":%q,"last_commit":"x"}}`, changes, last)
}

// TestRelatedTemporalAndTieBreak: the recency term multiplies a file's
// score by 1 + τ/(1 + rank); equal scores are ordered by recency, then
// PageRank, then node index.
func TestRelatedTemporalAndTieBreak(t *testing.T) {
	// Star: seed S co_changed with A, B, C, D (all weight .5): equal scores.
	g := testGraph{
		keys:  []string{"A", "B", "C", "D", "S"},
		rels:  roleRels,
		edges: []testEdge{{0, 4, 4, .5}, {1, 4, 4, .5}, {2, 4, 4, .5}, {3, 4, 4, .5}},
		// C changed last (rank 0), A next (rank 1); B and D have no history.
		payloads: map[int]string{0: gitPayload(3, "2024-01-02T00:00:00Z"), 2: gitPayload(1, "2024-03-01T00:00:00Z")},
	}
	e := buildEngine(t, g)
	S := node(t, e, "S")
	p := relatedNoTime()
	p.Depth = 1
	got, err := e.Related([]Seed{{S, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	// Without the term all four score .25: C (rank 0), A (rank 1), then B
	// and D by node index (no PageRank section).
	want := []keyed{{"S", 1}, {"C", .25}, {"A", .25}, {"B", .25}, {"D", .25}}
	if d := cmp.Diff(want, byKey(t, e, got), approx); d != "" {
		t.Errorf("tie-break (-want +got):\n%s", d)
	}
	p.Temporal = 2
	got, err = e.Related([]Seed{{S, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	want = []keyed{{"S", 1}, {"C", .25 * 3}, {"A", .25 * 2}, {"B", .25}, {"D", .25}}
	if d := cmp.Diff(want, byKey(t, e, got), approx); d != "" {
		t.Errorf("temporal (-want +got):\n%s", d)
	}
	// With a PageRank section, B and D are ordered by rank: D gets more
	// (an extra in-edge from B).
	g.edges = append(g.edges, testEdge{1, 3, 3, 1})
	b := snapshotBytes(t, g, snapshot.WriterOptions{Extra: PageRankSection})
	e, err = engineFromBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	p.Temporal = 0
	p.Roles[roles.Usage] = RoleWeight{} // keep the scores equal
	got, err = e.Related([]Seed{{S, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	want = []keyed{{"S", 1}, {"C", .25}, {"A", .25}, {"D", .25}, {"B", .25}}
	if d := cmp.Diff(want, byKey(t, e, got), approx); d != "" {
		t.Errorf("PageRank tie-break (-want +got):\n%s", d)
	}
}

// TestRelatedPerContainer: a file's symbols do not swamp the list.
func TestRelatedPerContainer(t *testing.T) {
	g := testGraph{rels: roleRels, types: map[int]string{}}
	g.keys = append(g.keys, "file:big", "file:other")
	g.types[0], g.types[1] = "file", "file"
	for i := range 6 {
		g.keys = append(g.keys, fmt.Sprintf("sym:big.S%d", i))
		g.types[len(g.keys)-1] = "symbol"
		g.edges = append(g.edges, testEdge{0, len(g.keys) - 1, 1, 1})
	}
	g.edges = append(g.edges, testEdge{0, 1, 4, .5})
	e := buildEngine(t, g)
	seed := node(t, e, "file:big")
	p := relatedNoTime()
	p.PerContainer = 2
	got, err := e.Related([]Seed{{seed, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range byKey(t, e, got) {
		keys = append(keys, r.Key)
	}
	if d := cmp.Diff([]string{"file:big", "sym:big.S0", "sym:big.S1", "file:other"}, keys); d != "" {
		t.Errorf("per container 2 (-want +got):\n%s", d)
	}
}

// modelRelated is SPEC §8.2.1 written as dense vector arithmetic.
func modelRelated(g testGraph, seeds map[int]float64, p RelatedParams) []float64 {
	n := len(g.keys)
	role := map[uint32]roles.Role{}
	flags := map[uint32]testRel{}
	for _, r := range g.rels {
		role[r.id] = r.role
		flags[r.id] = r
	}
	allowed := func(r uint32) bool {
		return (len(p.Relations) == 0 || slices.Contains(p.Relations, r)) && !flags[r].inhib
	}
	clamp := func(w float32) float64 {
		if !(w > 0) {
			return 0
		}
		return math.Min(1, float64(w))
	}
	// c[u] lists (t, weight) of u's usable edges.
	type link struct {
		t int
		c float64
	}
	links := make([][]link, n)
	for _, e := range g.edges {
		if !allowed(e.rel) || e.src == e.dst {
			continue
		}
		w := p.Roles[role[e.rel]]
		in := w.In
		if flags[e.rel].bidi {
			in = w.Out
		}
		links[e.src] = append(links[e.src], link{e.dst, w.Out * clamp(e.w)})
		links[e.dst] = append(links[e.dst], link{e.src, in * clamp(e.w)})
	}
	acc := make([]float64, n)
	x := make([]float64, n)
	for v, s := range seeds {
		x[v] = math.Min(s, p.SaturationCap)
		acc[v] = x[v]
	}
	for range p.Depth {
		next := make([]float64, n)
		for u := range n {
			if x[u] < p.Threshold {
				continue
			}
			total := 0.0
			for _, l := range links[u] {
				total += l.c
			}
			if total <= 0 {
				continue
			}
			for _, l := range links[u] {
				next[l.t] += x[u] * p.Decay * l.c / total
			}
		}
		for v := range n {
			acc[v] += next[v]
		}
		x = next
	}
	return acc
}

func TestRelatedMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for trial := range 300 {
		n := 2 + rng.IntN(40)
		g := randomGraph(rng, n, rng.IntN(4*n))
		g.rels = roleRels
		for i := range g.edges {
			g.edges[i].rel = uint32(1 + rng.IntN(len(roleRels)))
		}
		// Duplicate (src, dst, rel) edges are not allowed in a snapshot.
		slices.SortFunc(g.edges, func(a, b testEdge) int {
			if a.src != b.src {
				return a.src - b.src
			}
			if a.dst != b.dst {
				return a.dst - b.dst
			}
			return int(a.rel) - int(b.rel)
		})
		g.edges = slices.CompactFunc(g.edges, func(a, b testEdge) bool { return a.src == b.src && a.dst == b.dst && a.rel == b.rel })
		e := buildEngine(t, g)
		p := relatedNoTime()
		p.Depth = 1 + rng.IntN(5)
		p.Decay = []float64{1, .55, .8}[rng.IntN(3)]
		p.Threshold = []float64{1e-4, .01, .1}[rng.IntN(3)]
		if rng.IntN(4) == 0 {
			p.Relations = []uint32{uint32(1 + rng.IntN(len(roleRels)))}
		}
		seeds := map[int]float64{}
		var ss []Seed
		for range 1 + rng.IntN(3) {
			v := rng.IntN(n)
			s := []float64{1, .5, 2}[rng.IntN(3)]
			if old, ok := seeds[v]; !ok || s > old {
				seeds[v] = s
			}
			ss = append(ss, Seed{uint32(v), s})
		}
		want := modelRelated(g, seeds, p)
		got, err := e.Related(ss, p)
		if err != nil {
			t.Fatal(err)
		}
		gotBy := map[int]float64{}
		for _, r := range got {
			gotBy[int(r.Node)] = r.Score
		}
		for v := range n {
			if math.Abs(want[v]-gotBy[v]) > 1e-12*math.Max(1, want[v]) {
				t.Fatalf("trial %d node %d: got %v, model %v (params %+v)", trial, v, gotBy[v], want[v], p)
			}
		}
		for i := 1; i < len(got); i++ {
			if got[i].Score > got[i-1].Score {
				t.Fatalf("trial %d: not ranked: %v", trial, got)
			}
		}
	}
}

func TestRelatedRejectsBadParams(t *testing.T) {
	e := buildEngine(t, codeGraph)
	for name, mut := range map[string]func(*RelatedParams){
		"depth 0":      func(p *RelatedParams) { p.Depth = 0 },
		"depth 21":     func(p *RelatedParams) { p.Depth = 21 },
		"decay 0":      func(p *RelatedParams) { p.Decay = 0 },
		"threshold 0":  func(p *RelatedParams) { p.Threshold = 0 },
		"temporal -1":  func(p *RelatedParams) { p.Temporal = -1 },
		"temporal NaN": func(p *RelatedParams) { p.Temporal = math.NaN() },
		"negative":     func(p *RelatedParams) { p.Roles[roles.Usage].In = -1 },
		"cap -1":       func(p *RelatedParams) { p.PerContainer = -1 },
		"relation":     func(p *RelatedParams) { p.Relations = []uint32{99} },
	} {
		p := DefaultRelatedParams()
		mut(&p)
		if _, err := e.Related([]Seed{{0, 1}}, p); !isInvalid(err) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := e.Related([]Seed{{99, 1}}, DefaultRelatedParams()); !isInvalid(err) {
		t.Errorf("seed out of range: err = %v", err)
	}
}

// TestRelatedTopKIsPrefix: with a TopK the lazily ordered results are
// exactly the first K of the fully sorted ones (random graphs, random
// seeds, with and without the per-container cap).
func TestRelatedTopKIsPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 12))
	for trial := 0; trial < 40; trial++ {
		g := randomGraph(rng, 30+rng.IntN(40), 60+rng.IntN(200))
		if trial%2 == 1 {
			g.rels = roleRels // ids 1–3: contains, defines (structure: the cap applies), calls
		}
		e := buildEngine(t, g)
		seeds := []Seed{{Node: uint32(rng.IntN(len(g.keys))), Score: 1}}
		for _, perContainer := range []int{0, 2} {
			p := relatedNoTime()
			p.PerContainer = perContainer
			all, err := e.Related(seeds, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 3, 10, len(all) + 5} {
				p.TopK = k
				top, err := e.Related(seeds, p)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(all[:min(k, len(all))], top); d != "" {
					t.Fatalf("trial %d, cap %d, top %d (-prefix of all +top):\n%s", trial, perContainer, k, d)
				}
			}
		}
	}
}

// TestRelatedTopKIsPrefixLarge: TestRelatedTopKIsPrefix on graphs large
// enough that a top-k ranking heaps only the candidates above the k-th
// best score's threshold, and the lexical fusion sorts only the nodes
// above its own: files with terms among symbols, the mixed and the
// files-only (fused) views, with and without the per-container cap.
func TestRelatedTopKIsPrefixLarge(t *testing.T) {
	words := []string{"store", "page", "cursor", "flag", "cobra", "zeta", "tree", "node", "edge", "hash", "lock", "map"}
	rng := rand.New(rand.NewPCG(22, 13))
	for trial := 0; trial < 4; trial++ {
		g := randomGraph(rng, 1500, 9000)
		g.rels = roleRels
		g.types, g.payloads = map[int]string{}, map[int]string{}
		for i := range g.keys {
			if rng.IntN(3) > 0 {
				g.types[i] = "symbol"
				continue
			}
			g.types[i] = "file"
			terms := map[string]int{}
			for range 1 + rng.IntN(5) {
				terms[words[rng.IntN(len(words))]] = 1 + rng.IntN(4)
			}
			b, _ := json.Marshal(map[string]any{"path": g.keys[i] + ".go", "terms": terms})
			g.payloads[i] = string(b)
		}
		e := buildEngine(t, g)
		seeds := []Seed{{Node: uint32(rng.IntN(len(g.keys))), Score: 1}}
		for _, kind := range []string{"", "file"} {
			for _, perContainer := range []int{0, 2} {
				p := relatedNoTime()
				p.Kind, p.PerContainer = kind, perContainer
				all, err := e.Related(seeds, p)
				if err != nil {
					t.Fatal(err)
				}
				// Enough to take the threshold paths: ranking's (more
				// than 4(2k+64) candidates) and the fusion's (2k).
				if need := map[string]int{"": 4 * (2*10 + 64), "file": 2 * 40}[kind]; len(all) <= need {
					t.Fatalf("trial %d, kind %q: %d ranked, too few to take the threshold path", trial, kind, len(all))
				}
				for _, k := range []int{1, 10, 40} {
					p.TopK = k
					top, err := e.Related(seeds, p)
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(all[:min(k, len(all))], top); d != "" {
						t.Fatalf("trial %d, kind %q, cap %d, top %d (-prefix of all +top):\n%s", trial, kind, perContainer, k, d)
					}
				}
			}
		}
	}
}

// TestRelatedTopKPastThreshold: symbols only, at most one per file, over
// files of 40 symbols that call within their file or the next: the best
// scores all fall in the few files nearest the strongest seed, so taking
// the top k runs past the threshold's part into the rest; the result is
// still the first k of the full ranking, ties broken as there.
func TestRelatedTopKPastThreshold(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 14))
	g := testGraph{rels: roleRels, types: map[int]string{}}
	const files, per = 50, 40
	for f := range files {
		g.keys = append(g.keys, fmt.Sprintf("f%02d", f))
		g.types[f] = "file"
	}
	for f := range files {
		for s := range per {
			g.keys = append(g.keys, fmt.Sprintf("s%02d_%02d", f, s))
			g.types[len(g.keys)-1] = "symbol"
			g.edges = append(g.edges, testEdge{src: f, dst: len(g.keys) - 1, rel: 2, w: 1})
		}
	}
	calls := map[[2]int]bool{}
	for range 3000 {
		f := rng.IntN(files)
		a := files + f*per + rng.IntN(per)
		b := files + (f+rng.IntN(2))%files*per + rng.IntN(per)
		if a != b && !calls[[2]int{a, b}] {
			calls[[2]int{a, b}] = true
			g.edges = append(g.edges, testEdge{src: a, dst: b, rel: 3, w: 1})
		}
	}
	// PageRank breaks the ties of equal scores (every call weighs 1).
	e := mustEngine(t, snapshotBytes(t, g, snapshot.WriterOptions{Extra: PageRankSection}))
	seeds := []Seed{{Node: 0, Score: 1}}
	for f := 1; f < files; f++ {
		seeds = append(seeds, Seed{Node: uint32(f), Score: 0.001})
	}
	p := relatedNoTime()
	p.Kind, p.PerContainer = "symbol", 1
	all, err := e.Related(seeds, p)
	if err != nil {
		t.Fatal(err)
	}
	const k = 30
	if len(all) < k {
		t.Fatalf("%d ranked, want at least %d", len(all), k)
	}
	p.TopK = k
	top, err := e.Related(seeds, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(all[:k], top); d != "" {
		t.Fatalf("top %d (-prefix of all +top):\n%s", k, d)
	}
}
