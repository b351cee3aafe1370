package contextpack

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/lmdbstore"
)

// TestCandidateCostIsCount: a related line's cost, counted in parts
// through a long-lived memo (warm or cold), is the o200k count of the
// whole line and its newline; with less room, more than the room. Keys
// and paths are drawn to end in letters, digits, punctuation, white space
// and invalid bytes, scores from every magnitude.
func TestCandidateCostIsCount(t *testing.T) {
	enc := bpe.O200kBase()
	memo := &tokenMemo{}
	r := rand.New(rand.NewPCG(7, 8))
	bits := []string{"sym:", "file:", "net/http", ".(*Server)", ".Serve", "中文", "é", " ", "\t", "\n", "x ", "'s", "·", "/", "_", "9", "\xff", "(", ")"}
	word := func() string {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(bits[r.IntN(len(bits))])
		}
		return b.String()
	}
	split := 0
	for i := range 3000 {
		nb := Neighbour{Key: word(), Kind: []string{"file", "symbol"}[r.IntN(2)], Path: word(),
			Score: r.Float64() * []float64{1e-9, 1e-3, 1, 1e4}[r.IntN(4)],
			Prov:  Provenance{Rev: lmdbstore.Revision(1 + r.Uint64N(1e6)), TS: time.Unix(0, 0), Run: []string{"", "r1", word()}[r.IntN(3)], Task: []string{"", "t"}[r.IntN(2)]}}
		if r.IntN(2) == 0 {
			nb.LineStart, nb.LineEnd = 1+r.IntN(900), 1000+r.IntN(9)
		}
		if i%3 == 0 {
			nb.Key = "sym:net/http.F" // repeated heads: the memo answers
		}
		c := candidate{parts: neighbourLine(nb)}
		line := c.parts[0] + c.parts[1] + c.parts[2]
		want := enc.Count(line)
		if enc.Separate(c.parts[0], c.parts[1]) {
			split++
		}
		if got := c.cost(enc, memo, want+10); got != want {
			t.Fatalf("cost of %q = %d, want %d", line, got, want)
		}
		if room := want - 1 - r.IntN(max(1, want/2)); room >= 0 {
			if got := c.cost(enc, memo, room); got <= room {
				t.Fatalf("cost of %q with room %d = %d, want more than the room (count %d)", line, room, got, want)
			}
		}
	}
	if split < 1000 || split == 3000 {
		t.Errorf("%d of 3000 lines counted in parts: want both ways taken", split)
	}
}
