package snapshot_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memctl/memctl/snapshot"
)

// TestVerifyReverseIsTranspose damages the reverse CSR (sources, relations,
// weights; the offsets kept) and wants Verify to refuse exactly the files
// whose reverse is not the forward CSR transposed, as a plain model says:
// each in-list strictly sorted by (source, relation), and the in-edges,
// with their weights, the same multiset as the forward edges.
func TestVerifyReverseIsTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	orig := mustWrite(t, randomState(rng, 200, 1200), snapshot.WriterOptions{})
	f, err := snapshot.FromBytes(orig)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil || !isTranspose(f) {
		t.Fatalf("undamaged: Verify = %v, model %v", err, isTranspose(f))
	}
	off := map[snapshot.Kind]int{}
	for _, s := range f.Sections() {
		off[s.Kind] = int(s.Offset)
	}
	m := f.NumEdges()
	rels := f.Relations()
	le := binary.LittleEndian
	refused, accepted := 0, 0
	for iter := range 600 {
		b := bytes.Clone(orig)
		src, rel, w := b[off[snapshot.KindRevSources]:], b[off[snapshot.KindRevRels]:], b[off[snapshot.KindRevWeights]:]
		i, j := rng.IntN(m), rng.IntN(m)
		switch iter % 5 {
		case 0: // two in-edges' sources swapped
			a, c := le.Uint32(src[4*i:]), le.Uint32(src[4*j:])
			le.PutUint32(src[4*i:], c)
			le.PutUint32(src[4*j:], a)
		case 1: // a source moved to its neighbour node
			le.PutUint32(src[4*i:], le.Uint32(src[4*i:])+uint32(rng.IntN(3))-1)
		case 2: // another relation of the table (or the same)
			le.PutUint32(rel[4*i:], rels[rng.IntN(len(rels))].ID)
		case 3: // two in-edges' (source, relation) swapped
			a, c := le.Uint32(src[4*i:]), le.Uint32(rel[4*i:])
			le.PutUint32(src[4*i:], le.Uint32(src[4*j:]))
			le.PutUint32(rel[4*i:], le.Uint32(rel[4*j:]))
			le.PutUint32(src[4*j:], a)
			le.PutUint32(rel[4*j:], c)
		case 4: // a weight changed
			le.PutUint32(w[4*i:], math.Float32bits(math.Float32frombits(le.Uint32(w[4*i:]))+0.5))
		}
		refreshCRCs(b)
		g, err := snapshot.FromBytes(b)
		if err != nil {
			t.Fatalf("iteration %d: open: %v", iter, err)
		}
		verr, want := g.Verify(), isTranspose(g)
		if (verr == nil) != want {
			t.Fatalf("iteration %d (damage %d at %d, %d): Verify = %v, model says transpose %v", iter, iter%5, i, j, verr, want)
		}
		if want {
			accepted++
		} else {
			refused++
		}
	}
	if refused == 0 || accepted == 0 {
		t.Fatalf("refused %d, accepted %d: want both", refused, accepted)
	}
}

// isTranspose is the model: in-lists strictly sorted by (source,
// relation), sources in range, and in-edges = forward edges as multisets.
func isTranspose(f *snapshot.File) bool {
	n := uint32(f.NumNodes())
	count := map[[4]uint32]int{}
	fo, ft, fr, fw := f.FwdOffsets(), f.FwdTargets(), f.FwdRels(), f.FwdWeights()
	for s := range n {
		for p := fo[s]; p < fo[s+1]; p++ {
			count[[4]uint32{s, fr[p], ft[p], math.Float32bits(fw[p])}]++
		}
	}
	ro, rs, rr, rw := f.RevOffsets(), f.RevSources(), f.RevRels(), f.RevWeights()
	for d := range n {
		for p := ro[d]; p < ro[d+1]; p++ {
			if rs[p] >= n || p > ro[d] && (rs[p] < rs[p-1] || rs[p] == rs[p-1] && rr[p] <= rr[p-1]) {
				return false
			}
			k := [4]uint32{rs[p], rr[p], d, math.Float32bits(rw[p])}
			if count[k] == 0 {
				return false
			}
			count[k]--
		}
	}
	return true
}
