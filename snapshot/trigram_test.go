package snapshot_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memctl/memctl/snapshot"
)

// trigramPostingsMatch is the trigram index's contract checked the plain
// way: each trigram's postings are ascending and are exactly the nodes
// whose keys hold it (lower-cased), and there is no posting for a trigram
// no key holds.
func trigramPostingsMatch(f *snapshot.File) bool {
	want := map[uint32][]uint32{}
	for i := range f.NumNodes() {
		key, err := f.Key(uint32(i))
		if err != nil {
			return false
		}
		seen := map[uint32]bool{}
		for j := 0; j+3 <= len(key); j++ {
			t := snapshot.TrigramOf(key[j], key[j+1], key[j+2])
			if !seen[t] {
				seen[t] = true
				want[t] = append(want[t], uint32(i))
			}
		}
	}
	keys, offs, posts := f.TriKeys(), f.TriOffsets(), f.TriPostings()
	if len(keys) != len(want) {
		return false
	}
	for j, t := range keys {
		if offs[j] > offs[j+1] || offs[j+1] > uint64(len(posts)) || !slices.Equal(posts[offs[j]:offs[j+1]], want[t]) {
			return false
		}
	}
	return true
}

// TestVerifyTrigramPostings damages only the trigram postings (checksums
// refreshed, so the damage reaches the structural checks) and compares
// Verify's verdict with the plain model: Verify must refuse every file
// whose postings are not exactly its keys' trigrams, and accept the rest.
// The damage is chosen to keep postings in range and mostly ascending (a
// node swapped for a neighbour, a posting moved across trigrams), the
// cases a range check alone cannot see. The large file is checked in
// node ranges on several cores (at least 4,096 nodes per range).
func TestVerifyTrigramPostings(t *testing.T) {
	for _, size := range []struct{ nodes, iters int }{{200, 400}, {9000, 80}} {
		if raceEnabled {
			size.iters /= 5
		}
		t.Run(fmt.Sprint(size.nodes, " nodes"), func(t *testing.T) {
			verifyTrigramDamage(t, size.nodes, size.iters)
		})
	}
}

func verifyTrigramDamage(t *testing.T, nodes, iters int) {
	rng := rand.New(rand.NewPCG(21, uint64(nodes)))
	orig := mustWrite(t, randomState(rng, nodes, 3*nodes), snapshot.WriterOptions{})
	f, err := snapshot.FromBytes(orig)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil || !trigramPostingsMatch(f) {
		t.Fatalf("undamaged: Verify = %v, model agrees %v", err, trigramPostingsMatch(f))
	}
	off, length := -1, 0
	for _, s := range f.Sections() {
		if s.Kind == snapshot.KindTriPostings {
			off, length = int(s.Offset), int(s.Length)
		}
	}
	if off < 0 || length < 8 {
		t.Fatal("no trigram postings")
	}
	n := length / 4
	le := binary.LittleEndian
	refused, accepted := 0, 0
	for iter := range iters {
		b := bytes.Clone(orig)
		post := b[off : off+length]
		switch iter % 4 {
		case 0: // one posting names its neighbour node
			i := rng.IntN(n)
			v := le.Uint32(post[4*i:])
			if rng.IntN(2) == 0 && v > 0 {
				v--
			} else {
				v++
			}
			le.PutUint32(post[4*i:], v)
		case 1: // two postings swapped
			i, j := rng.IntN(n), rng.IntN(n)
			a, c := le.Uint32(post[4*i:]), le.Uint32(post[4*j:])
			le.PutUint32(post[4*i:], c)
			le.PutUint32(post[4*j:], a)
		case 2: // a posting moved: one removed, another repeated
			i := rng.IntN(n - 1)
			copy(post[4*i:], post[4*i+4:])
		case 3: // a posting names a random node
			le.PutUint32(post[4*rng.IntN(n):], uint32(rng.IntN(nodes)))
		}
		refreshCRCs(b)
		g, err := snapshot.FromBytes(b)
		if err != nil {
			t.Fatalf("iteration %d: open: %v", iter, err)
		}
		err = g.Verify()
		if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("iteration %d: Verify = %v, not a corruption error", iter, err)
		}
		if ok := trigramPostingsMatch(g); ok != (err == nil) {
			t.Fatalf("iteration %d: Verify = %v, but the model says the postings match: %v", iter, err, ok)
		}
		if err != nil {
			refused++
		} else {
			accepted++
		}
	}
	if refused == 0 {
		t.Fatal("no damage was refused")
	}
	t.Logf("%d damaged files refused, %d unchanged in effect and accepted", refused, accepted)
}
