package testcmp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type pair struct {
	A []int
	M map[string]int
	P *[]string
	I any
}

// TestEquateEmptyIsCmpopts: EquateEmpty decides every comparison as
// cmpopts.EquateEmpty does, on hand-picked pairs (nil and empty maps and
// slices, directly, in structs, pointers, interfaces and maps, of one type
// and of two) and on random nested values.
func TestEquateEmptyIsCmpopts(t *testing.T) {
	emptyS, emptyM := []string{}, map[string]int{}
	cases := [][2]any{
		{[]int(nil), []int{}},
		{map[string]int(nil), map[string]int{}},
		{[]int{}, []int{1}},
		{[]int(nil), []string{}},
		{any([]int(nil)), any([]string(nil))},
		{pair{}, pair{A: []int{}, M: map[string]int{}}},
		{pair{P: new([]string)}, pair{P: &emptyS}},
		{pair{I: []int(nil)}, pair{I: []int{}}},
		{pair{I: []int(nil)}, pair{I: []string{}}},
		{pair{I: nil}, pair{I: []int{}}},
		{pair{I: map[string]int(nil)}, pair{I: emptyM}},
		{map[string]any{"a": []int(nil)}, map[string]any{"a": []int{}}},
		{map[string]any{"a": []int(nil)}, map[string]any{}},
		{map[string]any{}, map[string]any(nil)},
		{[]any{nil}, []any{[]int{}}},
		{[]any{[]int{}}, []any{[]string{}}},
		{[][]int{nil, {}}, [][]int{{}, nil}},
		{[][]int{nil}, [][]int{}},
		{[0]int{}, [0]int{}},
		{"", ""},
		{[]byte(nil), []byte("")},
		{[]byte(nil), []byte("x")},
		{map[int][]int{1: nil}, map[int][]int{1: {}}},
		{map[int][]int{1: nil}, map[int][]int{2: nil}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		cases = append(cases, [2]any{randomValue(r, 3), randomValue(r, 3)})
	}
	equal := 0
	for i, c := range cases {
		want := cmp.Equal(c[0], c[1], cmpopts.EquateEmpty())
		if got := cmp.Equal(c[0], c[1], EquateEmpty()); got != want {
			t.Fatalf("case %d (%#v, %#v): equal %v, cmpopts.EquateEmpty says %v", i, c[0], c[1], got, want)
		}
		if d := cmp.Diff(c[0], c[1], EquateEmpty()); (d == "") != want {
			t.Fatalf("case %d (%#v, %#v): diff %q, cmpopts.EquateEmpty says equal %v", i, c[0], c[1], d, want)
		}
		if want {
			equal++
		}
	}
	if equal < len(cases)/20 || equal > len(cases)-len(cases)/20 {
		t.Fatalf("%d of %d pairs equal: the cases do not exercise both answers", equal, len(cases))
	}
}

// randomValue is a small nested value whose maps and slices are often nil
// or empty, so that two drawn independently are often equal only when
// empty ones are.
func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(9)
	if depth == 0 {
		k = r.IntN(3)
	}
	switch k {
	case 0:
		return r.IntN(2)
	case 1:
		return nil
	case 2:
		return fmt.Sprint(r.IntN(2))
	case 3:
		return []int(nil)
	case 4:
		return []int{}
	case 5:
		return map[string]int(nil)
	case 6:
		var s []any
		if r.IntN(2) == 0 {
			s = []any{}
		}
		for range r.IntN(3) {
			s = append(s, randomValue(r, depth-1))
		}
		return s
	case 7:
		var m map[string]any
		if r.IntN(2) == 0 {
			m = map[string]any{}
		}
		for range r.IntN(3) {
			if m == nil {
				m = map[string]any{}
			}
			m[fmt.Sprint(r.IntN(2))] = randomValue(r, depth-1)
		}
		return m
	}
	return pair{A: randomInts(r), I: randomValue(r, depth-1)}
}

func randomInts(r *rand.Rand) []int {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []int{}
	}
	return []int{r.IntN(2)}
}
