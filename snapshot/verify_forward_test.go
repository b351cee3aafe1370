package snapshot_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memctl/memctl/snapshot"
)

// TestVerifyForwardTables: Verify looks a forward edge's relation and
// revision up only when they differ from the last ones found; an edge
// whose relation or revision is absent from its table, after others that
// were found, is still refused with the error naming it.
func TestVerifyForwardTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	orig := mustWrite(t, randomState(rng, 300, 1500), snapshot.WriterOptions{})
	f, err := snapshot.FromBytes(orig)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil {
		t.Fatalf("undamaged: %v", err)
	}
	if f.Header().Logical() {
		t.Fatal("want revisions in the export")
	}
	maxRel, maxRev := uint32(0), uint64(0)
	for _, r := range f.Relations() {
		maxRel = max(maxRel, r.ID)
	}
	for _, r := range f.FwdRevs() {
		maxRev = max(maxRev, r)
	}
	section := func(k snapshot.Kind) int {
		for _, s := range f.Sections() {
			if s.Kind == k {
				return int(s.Offset)
			}
		}
		t.Fatalf("no section %v", k)
		return 0
	}
	rels, revs := section(snapshot.KindFwdRels), section(snapshot.KindFwdRevs)
	checked := 0
	for src := uint32(0); src < uint32(f.NumNodes()) && checked < 40; src++ {
		lo, hi, err := f.OutRange(src)
		if err != nil {
			t.Fatal(err)
		}
		if hi-lo < 2 {
			continue
		}
		last := hi - 1 // the last of its out-list: a larger relation keeps the list sorted
		checked++
		for _, c := range []struct {
			off  int
			put  func(b []byte)
			want string
		}{
			{rels + 4*int(last), func(b []byte) { binary.LittleEndian.PutUint32(b, maxRel+1) }, "not in the relation table"},
			{revs + 8*int(last), func(b []byte) { binary.LittleEndian.PutUint64(b, maxRev+1) }, "has no commit time"},
		} {
			b := bytes.Clone(orig)
			c.put(b[c.off:])
			refreshCRCs(b)
			g, err := snapshot.FromBytes(b)
			if err == nil {
				err = g.Verify()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("edge %d of node %d damaged: Verify = %v, want %q", last, src, err, c.want)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no out-list of two edges")
	}
}
