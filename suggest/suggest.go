// Package suggest finds the known name closest to a misspelt one, for "did
// you mean" hints in errors (unknown relations, commands, batch ops).
package suggest

// Nearest returns the candidate with the smallest edit distance to name, or
// "" when even that one is too far to be a plausible typo (more than
// max(2, len(name)/2) edits). Ties go to the earliest candidate.
func Nearest(name string, candidates []string) string {
	best, bestDist := "", max(2, len(name)/2)+1
	for _, c := range candidates {
		if d := Distance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the Levenshtein edit distance between a and b, over bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
