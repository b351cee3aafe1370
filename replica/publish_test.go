package replica_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
)

// TestPublishOutcomes: a single message and an atomic batch each take the
// expected position; a stale position is ErrBehind for both (the stream
// is left as it was), and a retry of what the stream already holds at
// that position is the same success (a lost acknowledgement).
func TestPublishOutcomes(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	addr := ts.addr(t, "pub")
	r, err := replica.Dial(addr, replica.Credentials{}, replica.Options{MaxData: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Create(1); err != nil {
		t.Fatal(err)
	}
	small := []byte("a small record")
	big := bytes.Repeat([]byte("0123456789"), 35) // 350 bytes: 4 messages of at most 100
	pos, err := r.Publish(lmdbstore.Pending{Rev: 1, Record: small, Pos: 0})
	if err != nil || pos != 1 {
		t.Fatalf("single: %d %v", pos, err)
	}
	pos, err = r.Publish(lmdbstore.Pending{Rev: 2, Record: big, Pos: 1, PosRev: 1})
	if err != nil || pos != 5 {
		t.Fatalf("batch: %d %v, want position 5", pos, err)
	}
	for _, p := range []lmdbstore.Pending{
		{Rev: 2, Record: []byte("another revision 2"), Pos: 1, PosRev: 1},
		{Rev: 2, Record: bytes.Repeat([]byte("x"), 250), Pos: 1, PosRev: 1},
	} {
		if _, err := r.Publish(p); !errors.Is(err, lmdbstore.ErrBehind) {
			t.Fatalf("stale publish of %d bytes: %v, want ErrBehind", len(p.Record), err)
		}
	}
	if last, err := r.LastSeq(); err != nil || last != 5 {
		t.Fatalf("stream at %d after refused publishes (%v), want 5", last, err)
	}
	// The stream holds exactly these: a retry is the same success.
	if pos, err := r.Publish(lmdbstore.Pending{Rev: 2, Record: big, Pos: 1, PosRev: 1}); err != nil || pos != 5 {
		t.Fatalf("retry of a stored batch: %d %v", pos, err)
	}
	if pos, err := r.Publish(lmdbstore.Pending{Rev: 1, Record: small, Pos: 0}); err != nil || pos != 1 {
		t.Fatalf("retry of a stored message: %d %v", pos, err)
	}
	if rev, err := r.LastRev(5); err != nil || rev != 2 {
		t.Fatalf("last revision %d (%v), want 2", rev, err)
	}
}
