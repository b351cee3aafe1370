package engines

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/snapshot"
)

// section returns the file range of section k of the snapshot image b.
func section(t *testing.T, b []byte, k snapshot.Kind) (off, length int) {
	t.Helper()
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections() {
		if s.Kind == k {
			return int(s.Offset), int(s.Length)
		}
	}
	t.Fatalf("no section %v", k)
	return 0, 0
}

// runAll runs every engine once and returns the first error.
func runAll(e *Engine) error {
	seeds := []Seed{{0, 1}, {uint32(e.numNodes - 1), 1}}
	for _, st := range []Strategy{StrategyWavefront, StrategyHeap} {
		p := DefaultActivationParams()
		p.Strategy = st
		if _, err := e.Activate(seeds, p); err != nil {
			return err
		}
	}
	rp := DefaultResonanceParams()
	rp.Budget = 1000
	if _, err := e.Resonate(seeds, rp); err != nil {
		return err
	}
	if _, _, err := e.PageRank(DefaultPageRankParams()); err != nil {
		return err
	}
	for _, d := range []Direction{DirectionIn, DirectionOut} {
		p := DefaultImpactParams()
		p.Direction = d
		if _, err := e.Impact(0, p); err != nil {
			return err
		}
	}
	if _, _, err := e.FindSeeds([]string{"n00", "n0", "n007", "n00x"}, DefaultSeedParams()); err != nil {
		return err
	}
	return nil
}

// TestDamagedSnapshotTypedError: a snapshot whose arrays were damaged after
// the writer (section CRCs are only checked by Verify) makes every engine
// that reaches the damage return the reader's corruption error, never panic.
func TestDamagedSnapshotTypedError(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	g := randomGraph(rng, 12, 40)
	g.edges = append(g.edges, testEdge{0, 11, 1, 1}, testEdge{11, 0, 1, 1}) // both seeds have edges
	good := snapshotBytes(t, g, snapshot.WriterOptions{})
	if err := runAll(mustEngine(t, good)); err != nil {
		t.Fatalf("undamaged: %v", err)
	}
	for _, tc := range []struct {
		name string
		kind snapshot.Kind
		put  func(b []byte)
	}{
		{"fwd target beyond nodes", snapshot.KindFwdTargets, func(b []byte) { binary.LittleEndian.PutUint32(b, 1<<30) }},
		{"rev source beyond nodes", snapshot.KindRevSources, func(b []byte) { binary.LittleEndian.PutUint32(b, 12) }},
		{"unknown relation", snapshot.KindFwdRels, func(b []byte) { binary.LittleEndian.PutUint32(b, 77) }},
		{"fwd offset beyond edges", snapshot.KindFwdOffsets, func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<40) }},
		{"rev offset beyond edges", snapshot.KindRevOffsets, func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<40) }},
		{"key order beyond nodes", snapshot.KindKeyOrder, func(b []byte) {
			for i := 0; i+4 <= len(b); i += 4 {
				binary.LittleEndian.PutUint32(b[i:], 1<<20)
			}
		}},
		{"posting beyond nodes", snapshot.KindTriPostings, func(b []byte) {
			for i := 0; i+4 <= len(b); i += 4 {
				binary.LittleEndian.PutUint32(b[i:], 1<<20)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), good...)
			off, n := section(t, b, tc.kind)
			tc.put(b[off : off+n])
			e, err := engineFromBytes(t, b)
			if err == nil {
				err = runAll(e)
			}
			if !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("err = %v, want one matching snapshot.ErrCorrupt", err)
			}
			// A list found damaged is not remembered as checked: the
			// same engine fails again.
			if e != nil {
				if err := runAll(e); !errors.Is(err, snapshot.ErrCorrupt) {
					t.Fatalf("second run: err = %v, want one matching snapshot.ErrCorrupt", err)
				}
			}
		})
	}
}

func mustEngine(t *testing.T, b []byte) *Engine {
	t.Helper()
	e, err := engineFromBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRandomDamageNeverPanics flips random bytes inside the sections and
// runs every engine: errors are fine, panics are not.
func TestRandomDamageNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	good := snapshotBytes(t, randomGraph(rng, 30, 90), snapshot.WriterOptions{})
	f, err := snapshot.FromBytes(good)
	if err != nil {
		t.Fatal(err)
	}
	secs := f.Sections()
	for range 300 {
		b := append([]byte(nil), good...)
		for range 1 + rng.IntN(4) {
			s := secs[rng.IntN(len(secs))]
			if s.Length == 0 {
				continue
			}
			b[int(s.Offset)+rng.IntN(int(s.Length))] ^= byte(1 + rng.IntN(255))
		}
		e, err := engineFromBytes(t, b)
		if err != nil {
			continue
		}
		_ = runAll(e)
	}
}

// TestConcurrentQueriesAgree runs every engine from many goroutines on one
// snapshot (run with -race) and checks each answer equals the answer of a
// lone query.
func TestConcurrentQueriesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	e := buildEngine(t, randomGraph(rng, 200, 800))
	type answer struct {
		act  []Scored
		wave Wave
		imp  []Affected
		seed []Seed
	}
	ask := func(i int) (answer, error) {
		var a answer
		var err error
		seeds := []Seed{{uint32(i % 200), 1}, {uint32((i * 7) % 200), .5}}
		p := DefaultActivationParams()
		p.Strategy = Strategy(1 + i%2)
		if a.act, err = e.Activate(seeds, p); err != nil {
			return a, err
		}
		rp := DefaultResonanceParams()
		rp.Budget = 2000
		if a.wave, err = e.Resonate(seeds, rp); err != nil {
			return a, err
		}
		if a.imp, err = e.Impact(uint32(i%200), DefaultImpactParams()); err != nil {
			return a, err
		}
		a.seed, _, err = e.FindSeeds([]string{fmt.Sprintf("n%02d", i%20), "n1x9"}, DefaultSeedParams())
		return a, err
	}
	want := make([]answer, 16)
	for i := range want {
		a, err := ask(i)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = a
	}
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			for i := range 16 {
				q := (w + i) % len(want)
				got, err := ask(q)
				if err == nil && !cmp.Equal(want[q], got, cmp.AllowUnexported(answer{})) {
					err = fmt.Errorf("worker %d query %d differs", w, q)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestCheckedListsStayChecked: node 0's out-list with a peer beyond the
// nodes fails on every read (a failed check is not remembered as passed),
// and an undamaged list reads the same before and after it was checked.
func TestCheckedListsStayChecked(t *testing.T) {
	g := randomGraph(rand.New(rand.NewPCG(5, 6)), 12, 40)
	g.edges = append(g.edges, testEdge{0, 11, 1, 1})
	good := snapshotBytes(t, g, snapshot.WriterOptions{})
	e := mustEngine(t, good)
	first, _, _, err := e.out(0)
	if err != nil {
		t.Fatal(err)
	}
	again, _, _, err := e.out(0)
	if err != nil || !slices.Equal(first, again) {
		t.Fatalf("second read of a checked list: %v, %v (first %v)", again, err, first)
	}
	b := append([]byte(nil), good...)
	off, n := section(t, b, snapshot.KindFwdTargets)
	binary.LittleEndian.PutUint32(b[off:off+n], 1<<30) // node 0's first out-edge
	d := mustEngine(t, b)
	for i := range 3 {
		if _, _, _, err := d.out(0); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("read %d of the damaged list: err = %v, want ErrCorrupt", i+1, err)
		}
	}
}
