package engines

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// keyed is a result by key, for readable diffs.
type keyed struct {
	Key   string
	Score float64
}

func byKey(t *testing.T, e *Engine, rs []Scored) []keyed {
	t.Helper()
	out := make([]keyed, len(rs))
	for i, r := range rs {
		out[i] = keyed{keyOf(t, e, r.Node), r.Score}
	}
	return out
}

var approx = cmpopts.EquateApprox(0, 1e-12)

// handGraph: a→b (1), b→c (0.5), a→c (0.25), c→d (1), e -related→ a (1,
// bidirectional), a -blocks→ f (1, inhibitory), b→f (1).
var handGraph = testGraph{
	keys: []string{"a", "b", "c", "d", "e", "f"},
	edges: []testEdge{
		{0, 1, 1, 1}, {1, 2, 1, 0.5}, {0, 2, 1, 0.25}, {2, 3, 1, 1},
		{4, 0, 2, 1}, {0, 5, 3, 1}, {1, 5, 1, 1},
	},
}

func TestActivateHandComputed(t *testing.T) {
	e := buildEngine(t, handGraph)
	a := node(t, e, "a")
	// Worked by hand (SPEC §8.2). Step 1: a fires 1 → b .55, c .1375, e .55
	// (in-edge of a bidirectional relation). Step 2: b fires .55 → c .15125,
	// f .3025; c fires .1375 → d .075625; e fires → a .3025 (no raise). Step 3:
	// c fires .15125 → d .0831875. Inhibition: a fired with 1, so f receives
	// 1 × .5 × .55 = .275 and ends at .0275. b and e tie: lower index first.
	full := []keyed{{"a", 1}, {"b", .55}, {"e", .55}, {"c", .15125}, {"d", .0831875}, {"f", .0275}}
	// Depth 2 stops before c's second firing: d keeps .075625.
	depth2 := []keyed{{"a", 1}, {"b", .55}, {"e", .55}, {"c", .15125}, {"d", .075625}, {"f", .0275}}
	// Only "uses": no e, no inhibition.
	usesOnly := []keyed{{"a", 1}, {"b", .55}, {"f", .3025}, {"c", .15125}, {"d", .0831875}}
	for _, st := range []Strategy{StrategyWavefront, StrategyHeap, StrategyAuto} {
		t.Run(st.String(), func(t *testing.T) {
			p := DefaultActivationParams()
			p.Strategy = st
			got, err := e.Activate([]Seed{{a, 1}}, p)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(full, byKey(t, e, got), approx); d != "" {
				t.Errorf("defaults (-want +got):\n%s", d)
			}
			p.MaxDepth = 2
			got, err = e.Activate([]Seed{{a, 1}}, p)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(depth2, byKey(t, e, got), approx); d != "" {
				t.Errorf("depth 2 (-want +got):\n%s", d)
			}
			p.MaxDepth = 5
			p.Relations = []uint32{1}
			got, err = e.Activate([]Seed{{a, 1}}, p)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(usesOnly, byKey(t, e, got), approx); d != "" {
				t.Errorf("uses only (-want +got):\n%s", d)
			}
			p.Relations = nil
			p.TopK = 2
			got, err = e.Activate([]Seed{{a, 1}}, p)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(full[:2], byKey(t, e, got), approx); d != "" {
				t.Errorf("top 2 (-want +got):\n%s", d)
			}
		})
	}
}

func TestActivateThresholdAndCap(t *testing.T) {
	e := buildEngine(t, handGraph)
	a := node(t, e, "a")
	p := DefaultActivationParams()
	// A seed of .05 fires (>= .04) but its neighbours (.0275) do not.
	got, err := e.Activate([]Seed{{a, .05}}, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []keyed{{"a", .05}, {"b", .0275}, {"e", .0275}, {"c", .006875}, {"f", 0.0275 - .05*.5*.55}}
	// f: E = 0 from b (b does not fire), so f is never excited: absent.
	want = want[:4]
	if d := cmp.Diff(want, byKey(t, e, got), approx); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Seed scores above the saturation cap are capped.
	got, err = e.Activate([]Seed{{a, 7}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Score != 1 {
		t.Errorf("capped seed = %v, want 1", got[0].Score)
	}
	// Depth 0: only the seed.
	p.MaxDepth = 0
	got, err = e.Activate([]Seed{{a, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]keyed{{"a", 1}}, byKey(t, e, got)); d != "" {
		t.Errorf("depth 0 (-want +got):\n%s", d)
	}
}

func TestActivateRejectsBadParams(t *testing.T) {
	e := buildEngine(t, handGraph)
	for name, mut := range map[string]func(*ActivationParams){
		"decay0":     func(p *ActivationParams) { p.Decay = 0 },
		"decayNaN":   func(p *ActivationParams) { p.Decay = math.NaN() },
		"depth21":    func(p *ActivationParams) { p.MaxDepth = 21 },
		"threshold0": func(p *ActivationParams) { p.Threshold = 0 },
		"rel":        func(p *ActivationParams) { p.Relations = []uint32{99} },
	} {
		p := DefaultActivationParams()
		mut(&p)
		if _, err := e.Activate([]Seed{{0, 1}}, p); !isInvalid(err) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := e.Activate([]Seed{{99, 1}}, DefaultActivationParams()); !isInvalid(err) {
		t.Errorf("seed out of range: err = %v", err)
	}
}

// randomGraph builds a random graph over the three default relations with
// weights that include 0, values above 1 and NaN.
func randomGraph(rng *rand.Rand, n, m int) testGraph {
	g := testGraph{}
	for i := range n {
		g.keys = append(g.keys, fmt.Sprintf("n%03d", i))
	}
	type k struct {
		s, d int
		r    uint32
	}
	seen := map[k]bool{}
	for range m {
		e := testEdge{src: rng.IntN(n), dst: rng.IntN(n), rel: uint32(1 + rng.IntN(3))}
		if seen[k{e.src, e.dst, e.rel}] {
			continue
		}
		seen[k{e.src, e.dst, e.rel}] = true
		switch rng.IntN(10) {
		case 0:
			e.w = 0
		case 1:
			e.w = 1.5
		default:
			e.w = float32(rng.Float64())
		}
		g.edges = append(g.edges, e)
	}
	return g
}

// modelActivation is SPEC §8.2 written as plainly as possible: best[v] after
// k rounds is the best activation over walks of at most k hops, every node
// that fires on the way having fired at >= threshold.
func modelActivation(g testGraph, seeds map[int]float64, p ActivationParams) map[int]float64 {
	n := len(g.keys)
	flags := map[uint32]testRel{}
	for _, r := range defaultRels {
		flags[r.id] = r
	}
	allowed := func(r uint32) bool { return len(p.Relations) == 0 || slices.Contains(p.Relations, r) }
	w := func(x float32) float64 {
		if !(x > 0) {
			return 0
		}
		return math.Min(1, float64(x))
	}
	best := make([]float64, n)
	for v, s := range seeds {
		best[v] = math.Min(s, p.SaturationCap)
	}
	// signal walks each usable edge of u of the given polarity.
	signal := func(u int, inhib bool, fn func(t int, f float64)) {
		for _, e := range g.edges {
			r := flags[e.rel]
			if !allowed(e.rel) || r.inhib != inhib {
				continue
			}
			if e.src == u {
				fn(e.dst, w(e.w))
			}
			if r.bidi && e.dst == u {
				fn(e.src, w(e.w))
			}
		}
	}
	for range p.MaxDepth {
		next := slices.Clone(best)
		for u := range n {
			if best[u] < p.Threshold {
				continue
			}
			signal(u, false, func(t int, f float64) { next[t] = math.Max(next[t], best[u]*p.Decay*f) })
		}
		best = next
	}
	// fire[u]: best over walks of at most MaxDepth-1 hops (what u fires with).
	fire := make([]float64, n)
	{
		b := make([]float64, n)
		for v, s := range seeds {
			b[v] = math.Min(s, p.SaturationCap)
		}
		for range max(0, p.MaxDepth-1) {
			next := slices.Clone(b)
			for u := range n {
				if b[u] >= p.Threshold {
					signal(u, false, func(t int, f float64) { next[t] = math.Max(next[t], b[u]*p.Decay*f) })
				}
			}
			b = next
		}
		if p.MaxDepth > 0 {
			for u := range n {
				if b[u] >= p.Threshold {
					fire[u] = b[u]
				}
			}
		}
	}
	recv := make([]float64, n)
	for u := range n {
		if fire[u] > 0 {
			signal(u, true, func(t int, f float64) { recv[t] += fire[u] * p.InhibitoryFactor * p.Decay * f })
		}
	}
	out := map[int]float64{}
	for v := range n {
		if best[v] > 0 {
			if a := best[v] - recv[v]; a > 0 {
				out[v] = a
			}
		}
	}
	return out
}

// TestActivateStrategiesAgree is the property: on random graphs with every
// kind of relation, the wavefront and heap strategies return identical
// results (same nodes, same order, same bits), and both match the plain
// model of SPEC §8.2.
func TestActivateStrategiesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 8))
	trials := 300
	if testing.Short() {
		trials = 60
	}
	for trial := range trials {
		n := 1 + rng.IntN(40)
		g := randomGraph(rng, n, rng.IntN(4*n+1))
		e := buildEngine(t, g)
		p := DefaultActivationParams()
		p.TopK = 0
		p.MaxDepth = rng.IntN(7)
		p.Threshold = []float64{0.04, 0.01, 0.2}[rng.IntN(3)]
		p.Decay = []float64{0.55, 0.9, 1}[rng.IntN(3)]
		if rng.IntN(4) == 0 {
			p.Relations = []uint32{uint32(1 + rng.IntN(3)), uint32(1 + rng.IntN(3))}
		}
		var seeds []Seed
		model := map[int]float64{}
		for range 1 + rng.IntN(4) {
			v := rng.IntN(n)
			s := []float64{1, 0.5, 2, 0.03}[rng.IntN(4)]
			seeds = append(seeds, Seed{uint32(v), s}) // node index = position: keys sort like ids
			model[v] = math.Max(model[v], s)
		}
		p.Strategy = StrategyWavefront
		wave, err := e.Activate(seeds, p)
		if err != nil {
			t.Fatal(err)
		}
		p.Strategy = StrategyHeap
		heap, err := e.Activate(seeds, p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wave, heap); d != "" {
			t.Fatalf("trial %d: wavefront vs heap (-wave +heap):\n%s\ngraph %+v\nseeds %v params %+v", trial, d, g, seeds, p)
		}
		want := map[int]float64{}
		for _, r := range wave {
			want[int(r.Node)] = r.Score
		}
		if d := cmp.Diff(modelActivation(g, model, p), want, approx); d != "" {
			t.Fatalf("trial %d: model vs engine (-model +engine):\n%s\ngraph %+v\nseeds %v params %+v", trial, d, g, seeds, p)
		}
	}
}

func TestActivateDeterministicAndConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := randomGraph(rng, 300, 1200)
	e := buildEngine(t, g)
	p := DefaultActivationParams()
	seeds := []Seed{{3, 1}, {77, 1}, {150, 0.8}}
	want, err := e.Activate(seeds, p)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			for i := range 50 {
				q := p
				q.Strategy = Strategy(1 + (w+i)%2)
				got, err := e.Activate(seeds, q)
				if err == nil && !cmp.Equal(want, got) {
					err = fmt.Errorf("worker %d query %d: results differ", w, i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
