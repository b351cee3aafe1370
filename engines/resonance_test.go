package engines

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResonatePathHandComputed follows the pulses on the path a-b-c from
// seed a at frequency 1 (a quarter turn per hop), damping .85. Each hop
// multiplies the amplitude by .85 and turns the phase by π/2; the ends
// reflect with an extra π. Pulse j (amplitude .85^j) visits a, b, c, b, a,
// b, c, ... with phases 0, π/2, π, π/2, π, π/2, π, ...: a gets 1 at phase 0
// and .85^(4i) at phase π; b gets every odd power at π/2; c gets .85^(4i+2)
// at π. The first amplitude under .01 is .85^29, so 29 pulses are sent.
func TestResonatePathHandComputed(t *testing.T) {
	e := buildEngine(t, testGraph{keys: []string{"a", "b", "c"}, edges: []testEdge{{0, 1, 1, 1}, {1, 2, 1, 1}}})
	p := DefaultResonanceParams()
	p.TopK = 0
	w, err := e.Resonate([]Seed{{node(t, e, "a"), 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	var za, zb, zc complex128
	za = 1
	for j := 1; j <= 28; j++ {
		amp := math.Pow(.85, float64(j))
		switch j % 4 {
		case 0:
			za += complex(amp, 0) * cmplx.Rect(1, math.Pi)
		case 1, 3:
			zb += complex(amp, 0) * cmplx.Rect(1, math.Pi/2)
		case 2:
			zc += complex(amp, 0) * cmplx.Rect(1, math.Pi)
		}
	}
	want := []keyed{{"b", cmplx.Abs(zb)}, {"c", cmplx.Abs(zc)}, {"a", cmplx.Abs(za)}}
	if d := cmp.Diff(want, byKey(t, e, w.Nodes), approx); d != "" {
		t.Errorf("amplitudes (-want +got):\n%s", d)
	}
	if w.Pulses != 29 {
		t.Errorf("pulses = %d, want 29", w.Pulses)
	}
	wantEnergy := real(za*cmplx.Conj(za)) + real(zb*cmplx.Conj(zb)) + real(zc*cmplx.Conj(zc))
	if math.Abs(w.Energy-wantEnergy) > 1e-12 {
		t.Errorf("energy = %v, want %v", w.Energy, wantEnergy)
	}
}

// TestResonateHubReflects: a hub (degree > 4 × average) sends 30% back with
// a π shift and splits the other 70% over its other neighbours.
func TestResonateHubReflects(t *testing.T) {
	// Star: hub h with 12 leaves; the seed is leaf l00.
	g := testGraph{keys: []string{"h"}}
	for i := range 12 {
		g.keys = append(g.keys, fmt.Sprintf("l%02d", i))
		g.edges = append(g.edges, testEdge{0, i + 1, 1, 1})
	}
	e := buildEngine(t, g)
	// Average degree 24/13; hub threshold 4 × that ≈ 7.4 < 12.
	p := DefaultResonanceParams()
	p.TopK = 0
	p.Budget = 3 // l00, then h, then h's first emissions
	l0 := node(t, e, "l00")
	w, err := e.Resonate([]Seed{{l0, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	// Pulse 1: l00 (1, phase 0). Pulse 2: h (.85, π/2). At h: reflect
	// .85 × .85 × .3 to l00 with phase π/2 + π + π/2 = 2π, in phase with the
	// seed (sent third; the budget is then spent).
	want := []keyed{{"l00", 1 + .85*.85*.3}, {"h", .85}}
	if d := cmp.Diff(want, byKey(t, e, w.Nodes), approx); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Without a budget limit every other leaf gets .85 × .85 × .7, split
	// among the hub's 11 other edges (each 1/√11 of it: the energy sent is
	// what arrived). The leaves reflect .85 × that to h (.129); what h then
	// sends on (.033 back, .023 to each leaf) is under min amplitude .1.
	p.Budget = DefaultPulseBudget
	p.MinAmplitude = .1
	w, err = e.Resonate([]Seed{{l0, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	leaf := .85 * .85 * .7 / math.Sqrt(11)
	leaves := 0
	for _, r := range w.Nodes {
		k := keyOf(t, e, r.Node)
		if k == "h" || k == "l00" {
			continue
		}
		leaves++
		if math.Abs(r.Score-leaf) > 1e-12 {
			t.Errorf("leaf %s = %v, want %v", k, r.Score, leaf)
		}
	}
	if leaves != 11 {
		t.Errorf("%d leaves reached, want 11", leaves)
	}
	// 1 seed pulse, h, the reflection to l00 (.217), l00's own reflection
	// (a dead end: .184), 11 leaves, 11 reflections.
	if w.Pulses != 26 {
		t.Errorf("pulses = %d, want 26", w.Pulses)
	}
}

// TestResonateSplitsAmplitude: a pulse leaving a node is split among its
// edges by weight, w/√(Σw²): from a (seed), b and c (weights 1 and .5) get
// .85 × 1/√1.25 and .85 × .5/√1.25; both are dead ends and reflect.
func TestResonateSplitsAmplitude(t *testing.T) {
	e := buildEngine(t, testGraph{keys: []string{"a", "b", "c"}, edges: []testEdge{{0, 1, 1, 1}, {0, 2, 1, .5}}})
	p := DefaultResonanceParams()
	p.TopK = 0
	p.Budget = 3
	w, err := e.Resonate([]Seed{{node(t, e, "a"), 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	n := math.Sqrt(1.25)
	want := []keyed{{"a", 1}, {"b", .85 / n}, {"c", .85 * .5 / n}}
	if d := cmp.Diff(want, byKey(t, e, w.Nodes), approx); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Σ amplitude² sent from a = .85²: the split keeps the energy.
	if got := (.85/n)*(.85/n) + (.85*.5/n)*(.85*.5/n); math.Abs(got-.85*.85) > 1e-12 {
		t.Errorf("energy sent %v", got)
	}
}

// cyclicGraph: a ring of 7 with two chords and a tail, undirected in effect.
func cyclicGraph() testGraph {
	g := testGraph{}
	for i := range 9 {
		g.keys = append(g.keys, fmt.Sprintf("r%d", i))
	}
	for i := range 7 {
		g.edges = append(g.edges, testEdge{i, (i + 1) % 7, 1, 1})
	}
	g.edges = append(g.edges, testEdge{0, 3, 1, 1}, testEdge{2, 5, 1, 0.5}, testEdge{6, 7, 1, 1}, testEdge{7, 8, 1, 1})
	return g
}

// pattern is a run's amplitude vector over every node, scaled so its
// largest entry is 1 and rounded to 1e-9, as a comparable string.
func pattern(t *testing.T, e *Engine, seeds []Seed, p ResonanceParams) string {
	t.Helper()
	p.TopK = 0
	w, err := e.Resonate(seeds, p)
	if err != nil {
		t.Fatal(err)
	}
	amps := make([]float64, e.numNodes)
	peak := 0.0
	for _, r := range w.Nodes {
		amps[r.Node] = r.Score
		peak = math.Max(peak, r.Score)
	}
	s := ""
	for _, a := range amps {
		s += fmt.Sprintf("%.9f ", a/peak)
	}
	return s
}

// TestSweepDistinctFrequenciesDistinctPatterns: on a graph with cycles every
// swept frequency gives its own interference pattern, and the resonant
// frequencies are the interior local maxima of the energy curve.
func TestSweepDistinctFrequenciesDistinctPatterns(t *testing.T) {
	e := buildEngine(t, cyclicGraph())
	seeds := []Seed{{0, 1}}
	sp := DefaultSweepParams()
	sp.Base.Budget = 4000 // keeps the test fast under -race
	sw, err := e.Sweep(seeds, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Spectrum) != sp.Steps {
		t.Fatalf("spectrum has %d entries, want %d", len(sw.Spectrum), sp.Steps)
	}
	seen := map[string]float64{}
	for _, h := range sw.Spectrum {
		rp := sp.Base
		rp.Frequency = h.Frequency
		pat := pattern(t, e, seeds, rp)
		if f, dup := seen[pat]; dup {
			t.Errorf("frequencies %v and %v give the same pattern", f, h.Frequency)
		}
		seen[pat] = h.Frequency
	}
	if len(sw.Resonant) == 0 {
		t.Fatal("no resonant frequency")
	}
	groups := map[string]bool{}
	for _, h := range sw.Resonant {
		i := int(math.Round((h.Frequency - sp.Min) / (sp.Max - sp.Min) * float64(sp.Steps-1)))
		if i == 0 || i == sp.Steps-1 || sw.Spectrum[i-1].Energy >= h.Energy || sw.Spectrum[i+1].Energy >= h.Energy {
			t.Errorf("frequency %v (energy %v) is not a local maximum", h.Frequency, h.Energy)
		}
		if len(h.Antinodes) == 0 {
			t.Errorf("frequency %v has no antinodes", h.Frequency)
		}
		groups[fmt.Sprint(h.Antinodes)] = true
	}
	if len(sw.Resonant) > 1 && len(groups) < 2 {
		t.Errorf("all %d resonant frequencies share one antinode group", len(sw.Resonant))
	}
	// Deterministic.
	again, err := e.Sweep(seeds, sp)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sw, again); d != "" {
		t.Errorf("second sweep differs:\n%s", d)
	}
}

func TestResonateBudgetBoundsWork(t *testing.T) {
	e := buildEngine(t, cyclicGraph())
	p := DefaultResonanceParams()
	p.Budget = 10
	p.MinAmplitude = 1e-12
	w, err := e.Resonate([]Seed{{0, 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if w.Pulses != 10 {
		t.Errorf("pulses = %d, want the budget 10", w.Pulses)
	}
	for name, mut := range map[string]func(*ResonanceParams){
		"freq0":   func(p *ResonanceParams) { p.Frequency = 0 },
		"budget0": func(p *ResonanceParams) { p.Budget = 0 },
		"hub2":    func(p *ResonanceParams) { p.HubReflection = 2 },
	} {
		q := DefaultResonanceParams()
		mut(&q)
		if _, err := e.Resonate([]Seed{{0, 1}}, q); !isInvalid(err) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
