package engines

import (
	"math"
)

// Resonance defaults. A pulse at frequency f advances its phase by
// 2π·f/UnitWavelength per hop, so with the default unit wavelength of 4
// hops the sweep range (0, 2] covers phase steps (0, π]; beyond that phase
// steps alias (f and 4−f give mirror-image phases and the same amplitudes).
const (
	DefaultFrequency      = 1.0
	DefaultUnitWavelength = 4.0
	DefaultDamping        = 0.85
	DefaultMinAmplitude   = 0.01
	DefaultPulseBudget    = 50_000
	DefaultHubFactor      = 4.0
	DefaultHubReflection  = 0.3
	DefaultSweepMin       = 0.1
	DefaultSweepMax       = 2.0
	DefaultSweepSteps     = 20
	DefaultAntinodeRatio  = 0.5
)

// ResonanceParams configures a standing-wave query.
type ResonanceParams struct {
	Frequency      float64 // > 0
	UnitWavelength float64 // wavelength in hops at frequency 1 (> 0)
	Damping        float64 // amplitude factor per hop, in (0, 1]
	MinAmplitude   float64 // pulses weaker than this are not sent (> 0)
	Budget         int     // most pulses sent per run (> 0)
	HubFactor      float64 // a hub has degree > HubFactor × average degree
	HubReflection  float64 // share of a pulse a hub reflects, in [0, 1]
	Relations      []uint32
	TopK           int // <= 0: all nodes reached
}

// DefaultResonanceParams returns the documented defaults with TopK 20.
func DefaultResonanceParams() ResonanceParams {
	return ResonanceParams{
		Frequency:      DefaultFrequency,
		UnitWavelength: DefaultUnitWavelength,
		Damping:        DefaultDamping,
		MinAmplitude:   DefaultMinAmplitude,
		Budget:         DefaultPulseBudget,
		HubFactor:      DefaultHubFactor,
		HubReflection:  DefaultHubReflection,
		TopK:           20,
	}
}

func (p *ResonanceParams) validate() error {
	switch {
	case !finite(p.Frequency) || p.Frequency <= 0:
		return invalidf("frequency %v must be > 0", p.Frequency)
	case !finite(p.UnitWavelength) || p.UnitWavelength <= 0:
		return invalidf("unit wavelength %v must be > 0", p.UnitWavelength)
	case !finite(p.Damping) || p.Damping <= 0 || p.Damping > 1:
		return invalidf("damping %v not in (0, 1]", p.Damping)
	case !finite(p.MinAmplitude) || p.MinAmplitude <= 0:
		return invalidf("min amplitude %v must be > 0", p.MinAmplitude)
	case p.Budget <= 0:
		return invalidf("pulse budget %d must be > 0", p.Budget)
	case !finite(p.HubFactor) || p.HubFactor <= 0:
		return invalidf("hub factor %v must be > 0", p.HubFactor)
	case !finite(p.HubReflection) || p.HubReflection < 0 || p.HubReflection > 1:
		return invalidf("hub reflection %v not in [0, 1]", p.HubReflection)
	}
	return nil
}

// noPrev marks a pulse that starts at a seed.
const noPrev = math.MaxUint32

// pulse is one wave packet arriving at node from prev along an edge of
// weight w (clamped).
type pulse struct {
	node, prev uint32
	amp, phase float64
	w          float64
}

// Wave is the standing-wave response of one run.
type Wave struct {
	// Nodes are the TopK nodes by resultant amplitude |Σ a·e^{iφ}|, best
	// first.
	Nodes []Scored
	// Energy is Σ |z|² over every node reached.
	Energy float64
	// Pulses is how many pulses were sent (seed pulses included).
	Pulses int
}

// Resonate propagates pulses from seeds (amplitude = seed score, phase 0)
// and returns the interference pattern. SPEC.md §8.3 defines the rules.
func (e *Engine) Resonate(seeds []Seed, p ResonanceParams) (Wave, error) {
	var w Wave
	err := e.resonate(seeds, p, func(s *scratch, gen uint32, energy float64, pulses int) {
		w.Energy, w.Pulses = energy, pulses
		w.Nodes = topK(amplitudes(s, gen), p.TopK)
	})
	return w, err
}

// amplitudes lists |z| of every node the run reached.
func amplitudes(s *scratch, gen uint32) []Scored {
	out := make([]Scored, 0, len(s.touched))
	for _, v := range s.touched {
		re, im := s.f1.e[v].v, s.f2.e[v].v
		out = append(out, Scored{Node: v, Score: math.Hypot(re, im)})
	}
	return out
}

// resonate runs the pulses and hands the scratch (f1 = real part, f2 =
// imaginary part, both under gen; touched = nodes reached in first-reached
// order) to done before the scratch goes back to the pool.
func (e *Engine) resonate(seeds []Seed, p ResonanceParams, done func(s *scratch, gen uint32, energy float64, pulses int)) error {
	if err := p.validate(); err != nil {
		return err
	}
	mask, err := e.relationMask(p.Relations)
	if err != nil {
		return err
	}
	for _, sd := range seeds {
		if err := e.checkNode(sd.Node); err != nil {
			return err
		}
	}
	s := e.getScratch()
	defer e.putScratch(s)
	s.f1.need(s.n)
	s.f2.need(s.n)
	gen := s.nextGen()
	s.touched = s.touched[:0]
	q := s.pulses[:0]
	defer func() { s.pulses = q[:0] }()

	step := 2 * math.Pi * p.Frequency / p.UnitWavelength
	hubDegree := math.Inf(1)
	if e.numNodes > 0 {
		hubDegree = p.HubFactor * 2 * float64(e.numEdges) / float64(e.numNodes)
	}
	sent := 0
	send := func(pl pulse) {
		if sent >= p.Budget || !(pl.amp >= p.MinAmplitude) {
			return
		}
		pl.phase = math.Mod(pl.phase, 2*math.Pi)
		q = append(q, pl)
		sent++
	}
	for _, sd := range seeds {
		if sd.Score > 0 && finite(sd.Score) {
			send(pulse{node: sd.Node, prev: noPrev, amp: sd.Score, w: 1})
		}
	}
	for head := 0; head < len(q); head++ {
		pl := q[head]
		v := pl.node
		sin, cos := math.Sincos(pl.phase)
		if _, ok := s.f1.get(v, gen); !ok {
			s.f1.set(v, gen, 0)
			s.f2.set(v, gen, 0)
			s.touched = append(s.touched, v)
		}
		s.f1.e[v].v += pl.amp * cos
		s.f2.e[v].v += pl.amp * sin
		if sent >= p.Budget {
			continue
		}
		outs, outRels, outW, err := e.out(v)
		if err != nil {
			return err
		}
		ins, inRels, inW, err := e.in(v)
		if err != nil {
			return err
		}
		// Transmission goes to every usable neighbour except the one the
		// pulse came from (and never along a self-loop).
		usable := func(t, rel uint32, w float32) bool {
			return mask[rel] != 0 && t != v && t != pl.prev && edgeWeight(w) > 0
		}
		k, sumW := 0, 0.0 // usable edges and Σ clamp(w)² over them
		for i, t := range outs {
			if usable(t, outRels[i], outW[i]) {
				k++
				sumW += edgeWeight(outW[i]) * edgeWeight(outW[i])
			}
		}
		for i, t := range ins {
			if usable(t, inRels[i], inW[i]) {
				k++
				sumW += edgeWeight(inW[i]) * edgeWeight(inW[i])
			}
		}
		share := 1.0
		if pl.prev != noPrev {
			reflect := 0.0
			switch {
			case k == 0:
				reflect = 1 // dead end: everything comes back
			case float64(len(outs)+len(ins)) > hubDegree:
				reflect = p.HubReflection
				share = 1 - p.HubReflection
			}
			if reflect > 0 {
				send(pulse{node: pl.prev, prev: v, amp: pl.amp * p.Damping * pl.w * reflect,
					phase: pl.phase + math.Pi + step, w: pl.w})
			}
		}
		if k == 0 {
			continue
		}
		// The amplitude is split among the edges: each gets w/√(Σw²) of
		// it, so the energy sent (Σ amplitude²) is what arrived, whatever
		// the degree, and a hub passes each neighbour a small share.
		a := pl.amp * p.Damping * share / math.Sqrt(sumW)
		for i, t := range outs {
			if usable(t, outRels[i], outW[i]) {
				w := edgeWeight(outW[i])
				send(pulse{node: t, prev: v, amp: a * w, phase: pl.phase + step, w: w})
			}
		}
		for i, t := range ins {
			if usable(t, inRels[i], inW[i]) {
				w := edgeWeight(inW[i])
				send(pulse{node: t, prev: v, amp: a * w, phase: pl.phase + step, w: w})
			}
		}
	}
	energy := 0.0
	for _, v := range s.touched {
		re, im := s.f1.e[v].v, s.f2.e[v].v
		energy += re*re + im*im
	}
	done(s, gen, energy, sent)
	return nil
}

// SweepParams configures a harmonic sweep: Steps frequencies evenly spaced
// from Min to Max inclusive, each run with Base (whose Frequency is
// ignored).
type SweepParams struct {
	Base          ResonanceParams
	Min, Max      float64
	Steps         int     // >= 2
	AntinodeRatio float64 // antinodes have amplitude >= ratio × the largest
}

// DefaultSweepParams returns the documented sweep defaults.
func DefaultSweepParams() SweepParams {
	return SweepParams{
		Base:          DefaultResonanceParams(),
		Min:           DefaultSweepMin,
		Max:           DefaultSweepMax,
		Steps:         DefaultSweepSteps,
		AntinodeRatio: DefaultAntinodeRatio,
	}
}

// Harmonic is one frequency of a sweep.
type Harmonic struct {
	Frequency float64
	Energy    float64
	// Antinodes are the nodes whose amplitude is at least AntinodeRatio ×
	// the largest amplitude at this frequency, best first, at most TopK.
	Antinodes []Scored
}

// Sweep is the result of a harmonic sweep.
type Sweep struct {
	// Spectrum has one entry per swept frequency, in frequency order.
	Spectrum []Harmonic
	// Resonant lists the interior local maxima of Energy over the
	// spectrum: entries whose energy exceeds both neighbours' (the first
	// and last entries never count).
	Resonant []Harmonic
}

// Sweep runs Resonate over a range of frequencies and reports the resonant
// ones.
func (e *Engine) Sweep(seeds []Seed, p SweepParams) (Sweep, error) {
	if p.Steps < 2 || !finite(p.Min) || !finite(p.Max) || p.Min <= 0 || p.Max <= p.Min {
		return Sweep{}, invalidf("sweep needs 0 < min < max and steps >= 2 (got %v, %v, %d)", p.Min, p.Max, p.Steps)
	}
	if !finite(p.AntinodeRatio) || p.AntinodeRatio < 0 || p.AntinodeRatio > 1 {
		return Sweep{}, invalidf("antinode ratio %v not in [0, 1]", p.AntinodeRatio)
	}
	var out Sweep
	for i := 0; i < p.Steps; i++ {
		rp := p.Base
		rp.Frequency = p.Min + (p.Max-p.Min)*float64(i)/float64(p.Steps-1)
		h := Harmonic{Frequency: rp.Frequency}
		err := e.resonate(seeds, rp, func(s *scratch, gen uint32, energy float64, _ int) {
			h.Energy = energy
			amps := amplitudes(s, gen)
			peak := 0.0
			for _, a := range amps {
				peak = max(peak, a.Score)
			}
			kept := amps[:0]
			for _, a := range amps {
				if a.Score > 0 && a.Score >= p.AntinodeRatio*peak {
					kept = append(kept, a)
				}
			}
			h.Antinodes = topK(kept, rp.TopK)
		})
		if err != nil {
			return Sweep{}, err
		}
		out.Spectrum = append(out.Spectrum, h)
	}
	// A peak needs a fall on both sides: the ends of the range never count
	// (energy that keeps rising towards an end says nothing of a resonance
	// inside the range).
	for i := 1; i+1 < len(out.Spectrum); i++ {
		h := out.Spectrum[i]
		if h.Energy > out.Spectrum[i-1].Energy && h.Energy > out.Spectrum[i+1].Energy {
			out.Resonant = append(out.Resonant, h)
		}
	}
	return out, nil
}
