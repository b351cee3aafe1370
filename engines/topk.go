package engines

import (
	"cmp"
	"math"
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

// sortByScore orders xs by score, highest first, then by node, lowest
// first: what slices.SortFunc with that comparison gives (the order is
// total), for scores that are positive (+Inf included, no NaN). A long
// list is radix-sorted (least significant byte first, stable, a byte
// that is the same everywhere skipped) on the node, then on the score's
// bits, which order like the scores themselves for positive floats; tmp
// is reused scratch, returned grown.
func sortByScore(xs, tmp []Scored) []Scored {
	const minRadix = 256
	if len(xs) < minRadix {
		slices.SortFunc(xs, func(a, b Scored) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return cmp.Compare(a.Node, b.Node)
		})
		return tmp
	}
	if cap(tmp) < len(xs) {
		tmp = make([]Scored, len(xs))
	}
	tmp = tmp[:len(xs)]
	src, dst := xs, tmp
	// One stable counting pass on byte shift/8 of the node (score false)
	// or of the score's complemented bits.
	pass := func(shift uint, score bool) {
		var count [256]int
		key := func(x Scored) byte {
			if score {
				return byte(^math.Float64bits(x.Score) >> shift)
			}
			return byte(x.Node >> shift)
		}
		for _, x := range src {
			count[key(x)]++
		}
		if count[key(src[0])] == len(src) {
			return // one value everywhere: the order stays
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for _, x := range src {
			d := key(x)
			dst[count[d]] = x
			count[d]++
		}
		src, dst = dst, src
	}
	for shift := uint(0); shift < 32; shift += 8 {
		pass(shift, false)
	}
	for shift := uint(0); shift < 64; shift += 8 {
		pass(shift, true)
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
	return tmp
}

// sortRankCands orders cs as slices.SortFunc with cmp would, where cmp
// orders by score, highest first, before anything else: a long list of
// positive scores (+Inf included, no NaN) is radix-sorted on the scores'
// bits (stable, as sortByScore), then each run of equal scores is sorted
// with cmp. tmp is reused scratch, returned grown.
func sortRankCands(cs, tmp []rankCand, cmp func(a, b rankCand) int) []rankCand {
	const minRadix = 256
	positive := len(cs) >= minRadix
	for i := 0; positive && i < len(cs); i++ {
		positive = cs[i].Score > 0
	}
	if !positive {
		slices.SortFunc(cs, cmp)
		return tmp
	}
	if cap(tmp) < len(cs) {
		tmp = make([]rankCand, len(cs))
	}
	tmp = tmp[:len(cs)]
	src, dst := cs, tmp
	for shift := uint(0); shift < 64; shift += 8 {
		key := func(c *rankCand) byte { return byte(^math.Float64bits(c.Score) >> shift) }
		var count [256]int
		for i := range src {
			count[key(&src[i])]++
		}
		if count[key(&src[0])] == len(src) {
			continue // one value everywhere: the order stays
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for i := range src {
			d := key(&src[i])
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &cs[0] {
		copy(cs, src)
	}
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].Score == cs[i].Score {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(cs[i:j], cmp)
		}
		i = j
	}
	return tmp
}
