package lmdbstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
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
	s.readers.mu.Lock()
	parked := len(s.readers.free)
	s.readers.mu.Unlock()
	for range 3 {
		edges, err := viewGetOut(s, "a")
		if err != nil || len(edges) != 1 {
			t.Fatalf("after panic: %v, %v", edges, err)
		}
	}
	s.readers.mu.Lock()
	if n := len(s.readers.free); n != parked+1 {
		t.Errorf("%d transactions parked after sequential views, want %d", n, parked+1)
	}
	s.readers.mu.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(s.readers.free) != 0 {
		t.Errorf("Close left %d parked transactions", len(s.readers.free))
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
