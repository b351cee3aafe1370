package replica_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
	"github.com/memctl/memctl/storesnap"
)

// machine is one bound store and its connection.
type machine struct {
	s *lmdbstore.Store
	r *replica.Remote
}

// newMachine inits a store at dir bound to addr's stream at position 0
// (an empty store on an empty stream, or catching up from the start).
func newMachine(t *testing.T, dir string, addr replica.Address, ropts replica.Options) *machine {
	t.Helper()
	r, err := replica.Dial(addr, replica.Credentials{}, ropts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if err := r.Create(1); err != nil {
		t.Fatal(err)
	}
	s, err := lmdbstore.Init(dir, lmdbstore.Options{NoSync: true, Replicator: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Bind(0, 0); err != nil {
		t.Fatal(err)
	}
	return &machine{s: s, r: r}
}

func (m *machine) rev(t *testing.T) lmdbstore.Revision {
	t.Helper()
	var rev lmdbstore.Revision
	if err := m.s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }); err != nil {
		t.Fatal(err)
	}
	return rev
}

// logicalHash is the logical snapshot hash of s at rev.
func logicalHash(t *testing.T, s *lmdbstore.Store, rev lmdbstore.Revision) [32]byte {
	t.Helper()
	h, err := storesnap.LogicalHash(s, lmdbstore.AtRevision(rev))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// logOf is every log record of s, by revision.
func logOf(t *testing.T, s *lmdbstore.Store) [][]byte {
	t.Helper()
	var recs [][]byte
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		for rev := lmdbstore.Revision(1); rev <= r.Revision(); rev++ {
			b, err := r.LogRecord(rev)
			if err != nil {
				return err
			}
			recs = append(recs, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// kvOps counts, per "ns/key", the put_kv operations in s's log.
func kvOps(t *testing.T, s *lmdbstore.Store) map[string]int {
	t.Helper()
	n := map[string]int{}
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		return r.DiffSince(lmdbstore.AtRevision(0), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			if op.Kind == lmdbstore.OpPutKV {
				n[op.Namespace+"/"+op.Key]++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// assertReplicas checks that every machine holds the same history: equal
// log records, equal logical hashes at every revision, check clean.
func assertReplicas(t *testing.T, ms []*machine) {
	t.Helper()
	for _, m := range ms {
		if _, err := m.r.Sync(m.s); err != nil {
			t.Fatalf("sync %s: %v", m.s.Path(), err)
		}
	}
	want := logOf(t, ms[0].s)
	for i, m := range ms[1:] {
		got := logOf(t, m.s)
		if len(got) != len(want) {
			t.Fatalf("machine %d has %d revisions, machine 0 has %d", i+1, len(got), len(want))
		}
		for j := range want {
			if !bytes.Equal(got[j], want[j]) {
				t.Fatalf("machine %d: log record of revision %d differs", i+1, j+1)
			}
		}
	}
	for rev := lmdbstore.Revision(1); rev <= lmdbstore.Revision(len(want)); rev++ {
		h0 := logicalHash(t, ms[0].s, rev)
		for i, m := range ms[1:] {
			if h := logicalHash(t, m.s, rev); h != h0 {
				t.Fatalf("revision %d: machine %d's logical hash %x, machine 0's %x", rev, i+1, h, h0)
			}
		}
	}
	for i, m := range ms {
		rep, err := m.s.Check()
		if err != nil {
			t.Fatalf("check machine %d: %v", i, err)
		}
		if len(rep.Problems) > 0 {
			t.Fatalf("check machine %d: %+v", i, rep)
		}
	}
}

// TestConcurrentWriters: 8 writers on 3 stores bound to one stream. Every
// acknowledged write is in every store exactly once, at the revision it was
// acknowledged with; a re-put of the same value commits nothing; the
// stores end with the same history, revision by revision.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	addr := ts.addr(t, "team")
	ms := []*machine{
		newMachine(t, filepath.Join(dir, "a"), addr, replica.Options{}),
		newMachine(t, filepath.Join(dir, "b"), addr, replica.Options{MaxData: 300}), // large records as batches
		newMachine(t, filepath.Join(dir, "c"), addr, replica.Options{}),
	}
	const writers, perWriter = 8, 12
	type ack struct {
		key string
		rev lmdbstore.Revision
	}
	var mu sync.Mutex
	var acks []ack
	noChange := 0
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := ms[w%len(ms)]
			for i := range perWriter {
				key := fmt.Sprintf("w%d-%d", w, i)
				payload := fmt.Sprintf(`{"by":%d,"i":%d,"pad":%q}`, w, i, strings.Repeat("x", (i%3)*200))
				c, err := m.s.Update(lmdbstore.WriteMeta{RunID: fmt.Sprintf("w%d", w)}, func(tx *lmdbstore.WriteTxn) error {
					if err := tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: "facts", Key: key, Payload: []byte(payload)}); err != nil {
						return err
					}
					// Every writer also asserts one shared fact: only the
					// first write of it is a change.
					return tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: "shared", Key: "rule", Payload: []byte(`{"rule":"wrap errors"}`)})
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
				// The same write again changes nothing, after any catch-up.
				again, err := m.s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
					return tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: "facts", Key: key, Payload: []byte(payload)})
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d again: %w", w, err)
					return
				}
				mu.Lock()
				acks = append(acks, ack{key, c.Rev})
				if again.Rev == 0 {
					noChange++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if noChange != writers*perWriter {
		t.Fatalf("%d of %d repeated writes committed a revision", writers*perWriter-noChange, writers*perWriter)
	}
	assertReplicas(t, ms)
	total := lmdbstore.Revision(writers * perWriter)
	for i, m := range ms {
		if got := m.rev(t); got != total {
			t.Fatalf("machine %d at revision %d, want %d (one per acknowledged write)", i, got, total)
		}
		ops := kvOps(t, m.s)
		for _, a := range acks {
			if ops["facts/"+a.key] != 1 {
				t.Fatalf("machine %d: %s logged %d times", i, a.key, ops["facts/"+a.key])
			}
		}
		if ops["shared/rule"] != 1 {
			t.Fatalf("machine %d: the shared fact logged %d times, want once", i, ops["shared/rule"])
		}
		// Each acknowledged write is at the revision it was acknowledged with.
		for _, a := range acks {
			found := false
			err := m.s.View(func(r *lmdbstore.ReadTxn) error {
				return r.DiffSince(lmdbstore.AtRevision(a.rev-1), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
					if op.Rev == a.rev && op.Key == a.key {
						found = true
					}
					return nil
				})
			})
			if err != nil || !found {
				t.Fatalf("machine %d: %s not at its acknowledged revision %d (%v)", i, a.key, a.rev, err)
			}
		}
	}
	last, err := ms[0].r.LastSeq()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := ms[0].s.Binding(); b.Pos != last {
		t.Fatalf("binding at %d, stream at %d", b.Pos, last)
	}
	if last <= uint64(total) {
		t.Fatalf("stream last sequence %d: no revision was published as a batch (MaxData 300)", last)
	}
}

// TestServerDown: with the server gone a write fails with ErrRemote and
// changes nothing; reads still answer; after a restart the write goes
// through and the other store catches up.
func TestServerDown(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	addr := ts.addr(t, "down")
	a := newMachine(t, filepath.Join(dir, "a"), addr, replica.Options{})
	b := newMachine(t, filepath.Join(dir, "b"), addr, replica.Options{})
	put := func(m *machine, key string) (lmdbstore.Commit, error) {
		return m.s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			return tx.PutNode(lmdbstore.NodePut{Key: "decision:" + key})
		})
	}
	if _, err := put(a, "one"); err != nil {
		t.Fatal(err)
	}
	before := logOf(t, a.s)
	ts.stop()
	_, err := put(a, "two")
	if !errors.Is(err, lmdbstore.ErrRemote) {
		t.Fatalf("write with the server down: %v, want ErrRemote", err)
	}
	if after := logOf(t, a.s); len(after) != len(before) {
		t.Fatalf("a failed write changed the store: %d revisions, was %d", len(after), len(before))
	}
	if err := a.s.View(func(r *lmdbstore.ReadTxn) error {
		_, err := r.GetNode("decision:one", lmdbstore.At{})
		return err
	}); err != nil {
		t.Fatalf("read with the server down: %v", err)
	}
	ts.start()
	// The connection of a died with the server: a new one, as a new
	// process would dial.
	r2, err := replica.Dial(addr, replica.Credentials{}, replica.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := r2.Open(); err != nil {
		t.Fatal(err)
	}
	a.s.Close()
	s2, err := lmdbstore.Open(a.s.Path(), lmdbstore.Options{NoSync: true, Replicator: r2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	a = &machine{s: s2, r: r2}
	if c, err := put(a, "two"); err != nil || c.Rev != 2 {
		t.Fatalf("write after restart: %+v %v", c, err)
	}
	rb, err := replica.Dial(addr, replica.Credentials{}, replica.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	if err := rb.Open(); err != nil {
		t.Fatal(err)
	}
	b.r = rb
	assertReplicas(t, []*machine{a, b})
}
