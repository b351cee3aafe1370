package engines

import (
	"math/bits"
	"slices"
)

// kthLargest returns the k-th largest of xs (1-based; k in [1, len(xs)]),
// reordering xs. Quickselect with a median-of-three pivot: linear on
// average; after 2·log2(n) rounds without finishing it sorts what is left,
// so no input makes it quadratic. xs must hold no NaN.
func kthLargest(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	want := k - 1 // index in descending order
	for rounds := 2 * bits.Len(uint(len(xs))); lo < hi; rounds-- {
		if rounds == 0 {
			part := xs[lo : hi+1]
			slices.Sort(part)
			return part[len(part)-1-(want-lo)]
		}
		// Median of three as the pivot, descending partition (Hoare).
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		p := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for xs[i] > p {
				i++
			}
			for xs[j] < p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		// xs[lo..j] >= p, xs[i..hi] <= p, anything between equals p.
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return p
		}
	}
	return xs[want]
}
