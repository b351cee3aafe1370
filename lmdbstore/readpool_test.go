package lmdbstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadPoolConcurrentWithGrowth runs scans on several goroutines while a
// writer grows the map many times: parked read transactions must survive
// every resize, and each scan sees a consistent out-list (all edges of one
// committed batch or none).
func TestReadPoolConcurrentWithGrowth(t *testing.T) {
	s := newStore(t, Options{MapSize: 64 << 10})
	hub := IDOf("hub")
	const batches, perBatch = 30, 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := 0
				if err := s.View(func(r *ReadTxn) error {
					return r.ScanOut(hub, 0, At{}, func(EdgeRef) bool { n++; return true })
				}); err != nil {
					errs <- err
					return
				}
				if n%perBatch != 0 {
					errs <- fmt.Errorf("scan saw %d edges, not a whole number of batches", n)
					return
				}
			}
		}()
	}
	for i := range batches {
		mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			for j := range perBatch {
				if err := tx.PutEdge(EdgePut{Src: "hub", Rel: "calls", Dst: fmt.Sprint("d", i, "/", j),
					Payload: []byte(`"` + strings.Repeat("x", 300) + `"`)}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := 0
	if err := s.View(func(r *ReadTxn) error {
		return r.ScanOut(hub, 0, At{}, func(EdgeRef) bool { n++; return true })
	}); err != nil || n != batches*perBatch {
		t.Fatalf("final scan: %d edges, %v", n, err)
	}
	if st, err := s.Stats(); err != nil || st.MapSize <= 64<<10 {
		t.Fatalf("map did not grow: %+v, %v", st, err)
	}
}

// TestReadPoolPanicAndClose: a View whose callback panics does not park its
// transaction (the next View still works), and a View after Close is
// ErrClosed rather than a use of the closed environment.
func TestReadPoolPanicAndClose(t *testing.T) {
	s, err := Init(t.TempDir(), Options{NoSync: true, MapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	putEdge(t, s, "a", "calls", "b")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not propagate")
			}
		}()
		_ = s.View(func(r *ReadTxn) error { panic("boom") })
	}()
	parked := s.readers.parked()
	for range 3 {
		edges, err := viewGetOut(s, "a")
		if err != nil || len(edges) != 1 {
			t.Fatalf("after panic: %v, %v", edges, err)
		}
	}
	if n := s.readers.parked(); n != parked+1 {
		t.Errorf("%d transactions parked after sequential views, want %d", n, parked+1)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.readers.parked(); n != 0 {
		t.Errorf("Close left %d parked transactions", n)
	}
	if _, err := viewGetOut(s, "a"); !errors.Is(err, ErrClosed) {
		t.Errorf("View after Close: %v, want ErrClosed", err)
	}
}

func viewGetOut(s *Store, key string) ([]Edge, error) {
	var edges []Edge
	err := s.View(func(r *ReadTxn) error {
		var err error
		edges, err = r.GetOut(key, "", At{})
		return err
	})
	return edges, err
}

// snapshotsHeld counts the reader slots of the environment that hold a
// snapshot (a reset transaction's slot shows txnid "-").
func snapshotsHeld(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	err := s.env.ReaderList(func(line string) error {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] != "pid" && f[2] != "-" {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLazyRenew: a parked transaction is refreshed on its View's first
// read, in the scan's cgo call when that read is a scan and by live
// otherwise, from live (kept when nothing was committed since, else reset
// and renewed) or from reset (the timer's resetParked); every way, the
// View sees every revision committed while it was parked and answers
// exactly as the others do. Lists span chunks (3 entries each) and hold
// tombstoned and re-added edges; reads at older revisions go through the
// same refresh. No View leaves more than the parked snapshot held, and
// resetParked releases that one.
func TestLazyRenew(t *testing.T) {
	s := newStore(t, Options{})
	s.readers.liveFor = time.Hour // the test resets the parked transaction itself
	s.setChunkMaxForTest(3)
	srcs := []string{"a", "b", "c"}
	// want[rev][src] is the out-list at rev, built from the writes.
	type list = map[string]bool
	var revs []Revision
	var want []map[string]list
	cur := map[string]list{}
	snap := func(rev Revision) {
		m := map[string]list{}
		for src, l := range cur {
			m[src] = list{}
			for k := range l {
				m[src][k] = true
			}
		}
		revs, want = append(revs, rev), append(want, m)
	}
	read := func(r *ReadTxn, src string, at At) (list, error) {
		got := list{}
		err := r.Neighbours(true, IDOf(src), 0, at, func(n Neighbour) bool {
			got[n.RelName+"/"+n.Key] = true
			return true
		})
		return got, err
	}
	check := func(step int) {
		t.Helper()
		for i, rev := range revs {
			at := AtRevision(rev)
			if i == len(revs)-1 {
				at = At{} // the latest view: the scan is the first read
			}
			for _, src := range srcs {
				for _, first := range []string{"scan", "meta"} {
					var got list
					err := s.View(func(r *ReadTxn) error {
						if first == "meta" {
							if latest := r.Revision(); latest != revs[len(revs)-1] {
								return fmt.Errorf("latest %d, want %d", latest, revs[len(revs)-1])
							}
						}
						var err error
						got, err = read(r, src, at)
						return err
					})
					if err != nil {
						t.Fatalf("step %d, %s first, %s at %d: %v", step, first, src, rev, err)
					}
					if d := cmp.Diff(want[i][src], got, cmpOpts...); d != "" {
						t.Errorf("step %d, %s first, %s at %d (-want +got):\n%s", step, first, src, rev, d)
					}
					if n := snapshotsHeld(t, s); n > 1 {
						t.Fatalf("step %d: %d snapshots held after the View, want at most the parked one", step, n)
					}
					if (i+step)%2 == 0 {
						// What the timer does: the next View renews
						// instead of keeping the snapshot.
						s.readers.resetParked()
						if n := snapshotsHeld(t, s); n != 0 {
							t.Fatalf("step %d: %d snapshots held after resetParked", step, n)
						}
					}
				}
			}
		}
	}
	for step := range 6 {
		c := mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
			for si, src := range srcs {
				if cur[src] == nil {
					cur[src] = list{}
				}
				for j := range 5 {
					dst := fmt.Sprintf("%s-%d", src, (step*5+j*3+si)%11)
					rel := []string{"calls", "imports"}[(j+step)%2]
					k := rel + "/" + dst
					if cur[src][k] && (j+step)%3 == 0 {
						delete(cur[src], k)
						if err := tx.DeleteEdge(src, rel, dst); err != nil {
							return err
						}
						continue
					}
					cur[src][k] = true
					if err := tx.PutEdge(EdgePut{Src: src, Rel: rel, Dst: dst}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		snap(c.Rev)
		// An empty View between the commit and the reads: its transaction
		// (live on the snapshot before the commit, or reset) is taken and
		// parked again without a refresh.
		if err := s.View(func(*ReadTxn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		check(step)
	}
}

// TestRenewFailureNotParked: when the refresh of a parked transaction
// fails — in the scan's cgo call or in live — the View returns the renew's
// error and the transaction is aborted, not parked; the next View works.
// The failure is provoked by telling the pool a live transaction is reset,
// so its renew finds it live (EINVAL).
func TestRenewFailureNotParked(t *testing.T) {
	s := newStore(t, Options{})
	putEdge(t, s, "a", "calls", "b")
	if _, err := viewGetOut(s, "a"); err != nil {
		t.Fatal(err)
	}
	for _, first := range []string{"scan", "meta"} {
		parked := s.readers.parked()
		if parked == 0 {
			t.Fatal("no parked transaction to reuse")
		}
		err := s.View(func(r *ReadTxn) error {
			if r.pooled.reset {
				if err := r.lt.Renew(); err != nil {
					return fmt.Errorf("renew behind the pool: %w", err)
				}
			}
			r.pooled.reset = true
			if first == "meta" {
				_, err := r.GetNode("a", At{})
				return err
			}
			return r.ScanOut(IDOf("a"), 0, At{}, func(EdgeRef) bool { return true })
		})
		if err == nil || !strings.Contains(err.Error(), "mdb_txn_renew") {
			t.Fatalf("%s first: View error %v, want the renew's", first, err)
		}
		if n := s.readers.parked(); n != parked-1 {
			t.Errorf("%s first: %d parked after the failed renew, want %d", first, n, parked-1)
		}
		if edges, err := viewGetOut(s, "a"); err != nil || len(edges) != 1 {
			t.Fatalf("%s first: the next View: %v, %v", first, edges, err)
		}
	}
}

// TestParkedSnapshotExpires: the snapshot a parked transaction holds is
// released by the pool's timer (parkLiveFor), so an idle store holds none.
func TestParkedSnapshotExpires(t *testing.T) {
	s := newStore(t, Options{})
	putEdge(t, s, "a", "calls", "b")
	if _, err := viewGetOut(s, "a"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for snapshotsHeld(t, s) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a parked snapshot still held 10 s after the View (timer: %v)", parkLiveFor)
		}
		time.Sleep(time.Millisecond)
	}
	if edges, err := viewGetOut(s, "a"); err != nil || len(edges) != 1 {
		t.Fatalf("after expiry: %v, %v", edges, err)
	}
}

// TestParkedSnapshotKept: a View with no commit since the parked
// transaction's snapshot keeps that snapshot (no renew: lmdb-go's cached
// transaction id survives); after a commit the View renews. The txnid the
// keep decision reads through the C side's MDB_envinfo is lmdb-go's.
func TestParkedSnapshotKept(t *testing.T) {
	s := newStore(t, Options{})
	s.readers.liveFor = time.Hour
	putEdge(t, s, "a", "calls", "b")
	scan := func() (kept bool) {
		t.Helper()
		err := s.View(func(r *ReadTxn) error {
			if err := r.ScanOut(IDOf("a"), 0, At{}, func(EdgeRef) bool { return true }); err != nil {
				return err
			}
			kept = *r.pooled.h.id != 0
			info, err := s.env.Info()
			if err != nil {
				return err
			}
			if got := r.pooled.h.lastTxnID(); got != uint64(info.LastTxnID) {
				return fmt.Errorf("C side reads txnid %d, lmdb-go %d", got, info.LastTxnID)
			}
			_ = r.lt.ID() // cached by lmdb-go until a renew clears it
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return kept
	}
	scan()
	for i := range 3 {
		if !scan() {
			t.Fatalf("view %d without a commit renewed its transaction", i)
		}
	}
	putEdge(t, s, "a", "calls", "c")
	if scan() {
		t.Fatal("the view after a commit kept the old snapshot")
	}
	if !scan() {
		t.Fatal("the next view renewed again")
	}
}
