package engines

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func isInvalid(err error) bool { return errors.Is(err, ErrInvalidArgument) }

// TestTopKMatchesSort checks the bounded-heap selection against a full sort.
func TestTopKMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		n := rng.IntN(50)
		cands := make([]Scored, n)
		for i := range cands {
			cands[i] = Scored{Node: uint32(rng.IntN(1000)), Score: float64(rng.IntN(5))}
		}
		k := rng.IntN(60) - 5
		want := slices.Clone(cands)
		slices.SortFunc(want, func(a, b Scored) int {
			if better(a, b) {
				return -1
			}
			if better(b, a) {
				return 1
			}
			return 0
		})
		if k > 0 && k < len(want) {
			want = want[:k]
		}
		if d := cmp.Diff(want, topK(cands, k)); d != "" {
			t.Fatalf("k=%d (-want +got):\n%s", k, d)
		}
	}
}
