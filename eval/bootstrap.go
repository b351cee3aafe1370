package eval

import (
	"math/rand/v2"
	"slices"
)

// DefaultBootstrap is the number of resamples of a bootstrap interval.
const DefaultBootstrap = 2000

// BootstrapMean is the mean of xs with its bootstrap 95 % interval: the
// 2.5th and 97.5th percentiles of the mean over n resamples of xs with
// replacement. The generator is seeded with a constant, so a run is
// deterministic.
func BootstrapMean(xs []float64, n int) Interval {
	if len(xs) == 0 {
		return Interval{}
	}
	if n <= 0 {
		n = DefaultBootstrap
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	iv := Interval{Mean: sum / float64(len(xs))}
	rng := rand.New(rand.NewPCG(30, 5))
	means := make([]float64, n)
	for b := range means {
		s := 0.0
		for range xs {
			s += xs[rng.IntN(len(xs))]
		}
		means[b] = s / float64(len(xs))
	}
	slices.Sort(means)
	iv.Lo, iv.Hi = means[n*25/1000], means[min(n-1, n*975/1000)]
	return iv
}
