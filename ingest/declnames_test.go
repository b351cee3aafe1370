package ingest

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestNameSetMatchesMap runs random sets, seals and clones against a map,
// the structure nameSet replaces. Under -race 4 of the 40 seeds (the
// sequences run on one goroutine: the race build adds checkptr on
// sealed's unsafe.String, and 45 s); make test's non-race pass runs all.
func TestNameSetMatchesMap(t *testing.T) {
	seeds := uint64(40)
	if raceEnabled {
		seeds = 4
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 7))
		var s nameSet
		model := map[string]byte{}
		var clones []nameSet
		var cloneModels []map[string]byte
		var cloneNames [][]string // each clone model's names, sorted: they never change
		words := []string{"A", "AB", "A_b", "B", "Ba", "a", "ab", "x", "X1", "Zz", "Serve", "ServeHTTP"}
		joined := make([][]string, len(words)) // joined[i][j] = words[i] + "." + words[j], made once
		for i, w := range words {
			for _, m := range words {
				joined[i] = append(joined[i], w+"."+m)
			}
		}
		name := func() string {
			if rng.IntN(2) == 0 {
				return words[rng.IntN(len(words))]
			}
			return words[rng.IntN(len(words))] + "." + words[rng.IntN(len(words))]
		}
		for op := range 300 {
			switch r := rng.IntN(10); {
			case r < 6:
				n, v := name(), byte(1+rng.IntN(5))
				s.set(n, v)
				model[n] = v
			case r < 8:
				s.seal()
				if len(s.open) != 0 {
					t.Fatalf("seed %d op %d: %d names open after seal", seed, op, len(s.open))
				}
			default:
				clones = append(clones, s.clone())
				cloneModels = append(cloneModels, maps.Clone(model))
				cloneNames = append(cloneNames, slices.Sorted(maps.Keys(model)))
			}
			check := func(what string, s *nameSet, model map[string]byte, want []string) {
				got := make([]string, 0, len(want))
				s.each(func(n string, v byte) {
					if model[n] != v {
						t.Fatalf("seed %d op %d %s: %q = %d, want %d", seed, op, what, n, v, model[n])
					}
					got = append(got, n)
				})
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d op %d %s: each gave %q, want %q", seed, op, what, got, want)
				}
				for i, w := range words {
					v, ok := s.get(w)
					if mv, mok := model[w]; ok != mok || v != mv {
						t.Fatalf("seed %d op %d %s: get(%q) = %d %v, want %d %v", seed, op, what, w, v, ok, mv, mok)
					}
					for j, m := range words {
						v, ok := s.getJoined(w, m)
						if mv, mok := model[joined[i][j]]; ok != mok || v != mv {
							t.Fatalf("seed %d op %d %s: getJoined(%q, %q) = %d %v, want %d %v", seed, op, what, w, m, v, ok, mv, mok)
						}
					}
				}
			}
			check("set", &s, model, slices.Sorted(maps.Keys(model)))
			for i := range clones {
				check("clone", &clones[i], cloneModels[i], cloneNames[i])
			}
		}
	}
}

// TestTableMethods checks a table's receivers and method sets, sealed or
// not, against the methods recorded.
func TestTableMethods(t *testing.T) {
	tab := &table{}
	want := map[string]map[string]bool{}
	add := func(recv, m string) {
		tab.addMethod(recv, m)
		if want[recv] == nil {
			want[recv] = map[string]bool{}
		}
		want[recv][m] = true
	}
	check := func(when string) {
		if got, w := tab.recvs(), slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
			t.Fatalf("%s: recvs %q, want %q", when, got, w)
		}
		for recv, ms := range want {
			if got := tab.methodSet(recv); !maps.Equal(got, ms) {
				t.Fatalf("%s: methods of %s %v, want %v", when, recv, got, ms)
			}
			for m := range ms {
				if !tab.hasMethod(recv, m) {
					t.Fatalf("%s: %s.%s missing", when, recv, m)
				}
			}
		}
		if tab.hasMethod("T", "Nope") || tab.hasMethod("T.Read", "") || len(tab.methodSet("Nope")) != 0 {
			t.Fatalf("%s: a method never added is there", when)
		}
	}
	add("T", "Read")
	add("TT", "Write")
	add("T_x", "Close")
	add("T", "Close")
	check("open")
	tab.seal()
	check("sealed")
	add("T", "Write")
	add("A", "Z")
	check("sealed and open")
	tab.setKind("T", KindType)
	tab.setKind("F", KindFunc)
	tab.seal()
	tab.setKind("F", KindVar) // set again: the later kind
	for name, k := range map[string]string{"T": KindType, "F": KindVar, "G": ""} {
		if got := tab.kind(name); got != k {
			t.Fatalf("kind(%s) = %q, want %q", name, got, k)
		}
	}
	if strings.Join(tab.recvs(), ",") != "A,T,TT,T_x" {
		t.Fatalf("recvs %q", tab.recvs())
	}
}
