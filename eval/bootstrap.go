package eval

// Bootstrap intervals over commits (SPEC.md §11.1, §11.4).
//
// A run's queries are not independent: the queries of one commit share
// its files, its parent's memory and often its answers. So every interval
// resamples commits, not queries: a resample draws n commits with
// replacement from the run's n, a drawn commit brings all its queries, and
// the statistic is the mean over the drawn queries (Σ of the drawn
// commits' per-query sums ÷ Σ of their query counts), the estimator the
// run reports. The interval is the percentile bootstrap's: the 2.5th and
// 97.5th percentiles of the statistic over the resamples, the p-th
// percentile of B sorted values t₁ ≤ … ≤ t_B being t_⌈pB⌉ (the smallest
// value at least a share p of the resamples reach).
//
// A difference between two predictors (a margin) is computed on the same
// resamples from each commit's difference of sums: the pairing keeps what
// the two share (a commit hard for both), which two separate intervals
// cannot.
//
// Draws come from math/rand/v2's PCG seeded with (BootstrapSeed, 0), so a
// run is reproducible for a given repository, window and toolchain.

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// BootstrapResamples is the number of resamples of `eval cochange`'s
// intervals.
const BootstrapResamples = 1000

// BootstrapSeed seeds the PCG that draws the resamples.
const BootstrapSeed = 30

// Interval is a mean with its bootstrap 95 % interval.
type Interval struct{ Mean, Lo, Hi float64 }

func (i Interval) String() string {
	return fmt.Sprintf("%.3f [%.3f, %.3f]", i.Mean, i.Lo, i.Hi)
}

// Resamples are bootstrap draws over n units (commits): each draw lists n
// unit indices drawn with replacement.
type Resamples struct {
	n     int
	draws [][]int
}

// NewResamples draws b resamples of n units from a PCG seeded with
// (seed, 0).
func NewResamples(n, b int, seed uint64) Resamples {
	rng := rand.New(rand.NewPCG(seed, 0))
	r := Resamples{n: n, draws: make([][]int, b)}
	if n == 0 {
		return r
	}
	for i := range r.draws {
		d := make([]int, n)
		for j := range d {
			d[j] = rng.IntN(n)
		}
		r.draws[i] = d
	}
	return r
}

// Ratio is the mean Σsum ÷ Σcount over every unit with its interval over
// the resamples: unit i contributes sum[i] (its queries' total of a
// metric) and count[i] (its number of queries). A draw whose count is 0
// counts as 0; so does the mean of no queries.
func (r Resamples) Ratio(sum, count []float64) Interval {
	if len(sum) != r.n || len(count) != r.n {
		panic(fmt.Sprintf("eval: bootstrap over %d units given %d sums and %d counts", r.n, len(sum), len(count)))
	}
	ratio := func(s, c float64) float64 {
		if c == 0 {
			return 0
		}
		return s / c
	}
	var s, c float64
	for i := range sum {
		s += sum[i]
		c += count[i]
	}
	iv := Interval{Mean: ratio(s, c)}
	if len(r.draws) == 0 || r.n == 0 {
		iv.Lo, iv.Hi = iv.Mean, iv.Mean
		return iv
	}
	stats := make([]float64, len(r.draws))
	for b, d := range r.draws {
		s, c := 0.0, 0.0
		for _, j := range d {
			s += sum[j]
			c += count[j]
		}
		stats[b] = ratio(s, c)
	}
	slices.Sort(stats)
	iv.Lo, iv.Hi = percentile(stats, 25), percentile(stats, 975)
	return iv
}

// Paired is the interval of the difference Σa÷Σcount − Σb÷Σcount over the
// same resamples (a and b: two predictors' per-unit sums over the same
// queries).
func (r Resamples) Paired(a, b, count []float64) Interval {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return r.Ratio(d, count)
}

// percentile is t_⌈pB⌉ of the sorted values, p given in thousandths.
func percentile(sorted []float64, perMille int) float64 {
	k := (perMille*len(sorted) + 999) / 1000 // ⌈p·B⌉, 1-based
	return sorted[max(k, 1)-1]
}

// DefaultBootstrap is the number of resamples of `eval impact`'s
// intervals.
const DefaultBootstrap = 2000

// BootstrapMean is the mean of xs with its bootstrap 95 % interval, each
// value a unit of its own (eval impact resamples its scored symbols): the
// percentile interval of the mean over n resamples (DefaultBootstrap when
// n ≤ 0) drawn as NewResamples draws them.
func BootstrapMean(xs []float64, n int) Interval {
	if n <= 0 {
		n = DefaultBootstrap
	}
	ones := make([]float64, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	return NewResamples(len(xs), n, BootstrapSeed).Ratio(xs, ones)
}
