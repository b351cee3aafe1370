package snapshot_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memctl/memctl/snapshot"
)

// TestLookupAgreesWithBinarySearch: Lookup (interpolation + gallop +
// binary search) answers exactly like a binary search over the ids, for
// uniform, clustered and sequential id sets, present and absent ids.
func TestLookupAgreesWithBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	gens := map[string]func() uint64{
		"uniform":    rng.Uint64,
		"clustered":  func() uint64 { return uint64(rng.IntN(4))<<62 | uint64(rng.IntN(1000)) },
		"sequential": func() uint64 { return uint64(rng.IntN(3000)) },
		"extremes": func() uint64 {
			return []uint64{0, 1, 1 << 63, ^uint64(0), ^uint64(0) - 1}[rng.IntN(5)] + uint64(rng.IntN(3))
		},
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, 65, 500, 3000} {
			st := &snapshot.MemState{}
			seen := map[uint64]bool{}
			for tries := 0; len(st.NodeList) < n && tries < 20*n; tries++ {
				id := gen()
				if !seen[id] {
					seen[id] = true
					st.NodeList = append(st.NodeList, snapshot.NodeRecord{ID: id, Key: "k" + string(rune('a'+len(st.NodeList)%26)) + string(rune(len(st.NodeList)+0x100))})
				}
			}
			st.Sort()
			b, _, err := snapshot.Write(st, snapshot.WriterOptions{Logical: true})
			if err != nil {
				t.Fatal(err)
			}
			f, err := snapshot.FromBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			ids := f.NodeIDs()
			probe := func(id uint64) {
				want, wantOK := slices.BinarySearch(ids, id)
				got, ok := f.Lookup(id)
				if ok != wantOK || (ok && int(got) != want) {
					t.Fatalf("%s n=%d: Lookup(%d) = %d, %v; want %d, %v", name, n, id, got, ok, want, wantOK)
				}
			}
			for _, id := range ids {
				probe(id)
				probe(id + 1)
				probe(id - 1)
			}
			for k := 0; k < 200; k++ {
				probe(gen())
			}
		}
	}
}
