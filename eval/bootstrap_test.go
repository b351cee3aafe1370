package eval

import (
	"math"
	"slices"
	"testing"
)

// enumerated are all nⁿ ordered draws of n units: the exact bootstrap
// distribution, each draw equally likely.
func enumerated(n int) Resamples {
	r := Resamples{n: n}
	d := make([]int, n)
	var rec func(i int)
	rec = func(i int) {
		if i == n {
			r.draws = append(r.draws, slices.Clone(d))
			return
		}
		for j := range n {
			d[i] = j
			rec(i + 1)
		}
	}
	rec(0)
	return r
}

// exactQuantile computes the p-quantile (the smallest value whose
// cumulative probability reaches p) of the exact bootstrap distribution of
// Σ sum ÷ Σ count another way: over multisets of units (how many times
// each is drawn), each with its multinomial probability n!/(∏cᵢ!)/nⁿ.
func exactQuantile(sum, count []float64, p float64) float64 {
	n := len(sum)
	type point struct{ v, prob float64 }
	var pts []point
	c := make([]int, n)
	fact := func(k int) float64 {
		f := 1.0
		for i := 2; i <= k; i++ {
			f *= float64(i)
		}
		return f
	}
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == n-1 {
			c[i] = left
			s, k, w := 0.0, 0.0, fact(n)
			for j := range n {
				s += float64(c[j]) * sum[j]
				k += float64(c[j]) * count[j]
				w /= fact(c[j])
			}
			v := 0.0
			if k > 0 {
				v = s / k
			}
			pts = append(pts, point{v, w / math.Pow(float64(n), float64(n))})
			return
		}
		for x := 0; x <= left; x++ {
			c[i] = x
			rec(i+1, left-x)
		}
	}
	rec(0, n)
	slices.SortFunc(pts, func(a, b point) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	cum := 0.0
	for i, pt := range pts {
		cum += pt.prob
		// Values equal up to rounding are one value: step over the rest.
		if i+1 < len(pts) && math.Abs(pts[i+1].v-pt.v) < 1e-12 {
			continue
		}
		if cum >= p-1e-12 {
			return pt.v
		}
	}
	return pts[len(pts)-1].v
}

// Five commits with unequal numbers of queries: per-commit sums of
// recall for two predictors, and query counts.
var (
	bsCount = []float64{2, 3, 2, 4, 2}
	bsA     = []float64{2, 1.5, 0, 3, 1}
	bsB     = []float64{1, 1.5, 0.5, 1, 0}
)

// TestBootstrapExact: over every one of the 5⁵ draws, the interval is the
// exact bootstrap distribution's 2.5 % and 97.5 % quantiles, for a score
// and for a paired difference, as computed over multisets independently.
func TestBootstrapExact(t *testing.T) {
	all := enumerated(len(bsCount))
	if len(all.draws) != 3125 {
		t.Fatalf("%d draws", len(all.draws))
	}
	diff := make([]float64, len(bsA))
	for i := range bsA {
		diff[i] = bsA[i] - bsB[i]
	}
	for _, tc := range []struct {
		name string
		got  Interval
		sum  []float64
	}{
		{"score", all.Ratio(bsA, bsCount), bsA},
		{"paired", all.Paired(bsA, bsB, bsCount), diff},
	} {
		mean := 0.0
		for i := range tc.sum {
			mean += tc.sum[i]
		}
		mean /= 13
		lo, hi := exactQuantile(tc.sum, bsCount, 0.025), exactQuantile(tc.sum, bsCount, 0.975)
		if math.Abs(tc.got.Mean-mean) > 1e-12 || math.Abs(tc.got.Lo-lo) > 1e-12 || math.Abs(tc.got.Hi-hi) > 1e-12 {
			t.Errorf("%s: %v, want %.6f [%.6f, %.6f]", tc.name, tc.got, mean, lo, hi)
		}
		if !(tc.got.Lo < tc.got.Mean && tc.got.Mean < tc.got.Hi) {
			t.Errorf("%s: %v does not surround its mean", tc.name, tc.got)
		}
	}
}

// TestBootstrapSeeded: the seeded resamples are reproducible and land
// near the exact interval (1000 resamples of a distribution with 126
// support points: within a few hundredths).
func TestBootstrapSeeded(t *testing.T) {
	a := NewResamples(len(bsCount), BootstrapResamples, BootstrapSeed).Ratio(bsA, bsCount)
	b := NewResamples(len(bsCount), BootstrapResamples, BootstrapSeed).Ratio(bsA, bsCount)
	if a != b {
		t.Fatalf("same seed, %v then %v", a, b)
	}
	if slices.EqualFunc(NewResamples(5, 10, BootstrapSeed).draws, NewResamples(5, 10, BootstrapSeed+1).draws, slices.Equal) {
		t.Error("another seed drew the same resamples")
	}
	lo, hi := exactQuantile(bsA, bsCount, 0.025), exactQuantile(bsA, bsCount, 0.975)
	if math.Abs(a.Lo-lo) > 0.05 || math.Abs(a.Hi-hi) > 0.05 {
		t.Errorf("seeded %v, exact [%.3f, %.3f]", a, lo, hi)
	}
}

// TestBootstrapPaired: the margin's interval comes from the same draws,
// not from the two intervals. When one predictor is ahead of the other by
// 0.1 on every query, every draw's margin is 0.1 exactly, however much
// the two scores vary from commit to commit.
func TestBootstrapPaired(t *testing.T) {
	count := []float64{2, 2, 3, 1, 4, 2}
	b := []float64{0, 2, 0.3, 1, 0.4, 1.8}
	a := make([]float64, len(b))
	for i := range b {
		a[i] = b[i] + 0.1*count[i]
	}
	rs := NewResamples(len(count), BootstrapResamples, BootstrapSeed)
	ia, ib, d := rs.Ratio(a, count), rs.Ratio(b, count), rs.Paired(a, b, count)
	if math.Abs(d.Mean-0.1) > 1e-12 || math.Abs(d.Lo-0.1) > 1e-12 || math.Abs(d.Hi-0.1) > 1e-12 {
		t.Errorf("paired margin %v, want 0.1 [0.1, 0.1]", d)
	}
	if ia.Hi-ia.Lo < 0.3 || ib.Hi-ib.Lo < 0.3 {
		t.Errorf("scores %v, %v: want wide intervals (the commits differ)", ia, ib)
	}
}

// TestPercentile: t_⌈pB⌉ of sorted values, by hand.
func TestPercentile(t *testing.T) {
	vals := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(i + 1)
		}
		return out
	}
	for _, tc := range []struct {
		n, perMille int
		want        float64
	}{
		{1000, 25, 25}, {1000, 975, 975}, // ⌈25⌉, ⌈975⌉
		{40, 25, 1}, {40, 975, 39}, // ⌈1⌉, ⌈39⌉
		{10, 25, 1}, {10, 975, 10}, // ⌈0.25⌉, ⌈9.75⌉
		{2000, 25, 50}, {2000, 975, 1950},
		{1, 25, 1}, {1, 975, 1},
	} {
		if got := percentile(vals(tc.n), tc.perMille); got != tc.want {
			t.Errorf("percentile of 1..%d at %d‰ = %v, want %v", tc.n, tc.perMille, got, tc.want)
		}
	}
}

// TestBootstrapEdges: no commits, or draws with no queries.
func TestBootstrapEdges(t *testing.T) {
	if iv := NewResamples(0, 10, BootstrapSeed).Ratio(nil, nil); iv != (Interval{}) {
		t.Errorf("no commits: %v", iv)
	}
	// One commit of two queries: every draw is that commit.
	if iv := NewResamples(1, 10, BootstrapSeed).Ratio([]float64{1.5}, []float64{2}); iv != (Interval{0.75, 0.75, 0.75}) {
		t.Errorf("one commit: %v", iv)
	}
}
