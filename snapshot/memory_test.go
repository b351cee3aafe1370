package snapshot_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/memctl/memctl/snapshot"
)

// bigPayloadState has few nodes with 1 MiB payloads each, all served from
// one buffer: the state itself holds 1 MiB whatever the count.
type bigPayloadState struct {
	synthState
	payload []byte
}

func (s *bigPayloadState) Nodes(fn func(snapshot.NodeRecord) error) error {
	for i := 0; i < s.n; i++ {
		rec := snapshot.NodeRecord{ID: s.id(i), Key: fmt.Sprintf("doc:%d", i), Type: "doc", Payload: s.payload, CreatedRev: 1, Rev: 1, CreatedTS: 1, UpdatedTS: 1}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

func (s *bigPayloadState) Edges(fn func(snapshot.EdgeRecord) error) error { return nil }
func (s *bigPayloadState) CommitTime() int64                              { return 1 }
func (s *bigPayloadState) ValidAt() int64                                 { return 0 }
func (s *bigPayloadState) Includes() (bool, bool)                         { return false, false }
func (s *bigPayloadState) Revision() uint64                               { return 1 }

// TestExportHeapDoesNotGrowWithPayloads: exporting 48 payloads of 1 MiB
// allocates about as much in total as exporting 8 (payloads are compressed
// one at a time into a reused buffer), and the sampled peak heap stays a
// few MiB, far below the 48 MiB of payloads.
func TestExportHeapDoesNotGrowWithPayloads(t *testing.T) {
	if testing.Short() {
		t.Skip("writes tens of MiB")
	}
	payload := []byte(`{"text":"` + string(bytes.Repeat([]byte("0123456789abcdef"), 1<<16)) + `"}`)
	allocs := map[int]uint64{}
	var peak uint64
	for _, n := range []int{8, 48} {
		st := &bigPayloadState{synthState: synthState{n: n}, payload: payload}
		path := filepath.Join(t.TempDir(), "big.snap")
		export := func() {
			if _, err := snapshot.WriteFile(path, st, snapshot.WriterOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		allocs[n] = totalAlloc(export)
		if n == 48 {
			peak = peakHeap(export)
		}
	}
	if allocs[48] > allocs[8]+(8<<20) {
		t.Fatalf("allocation grows with payloads: %v bytes for 8 and 48 payloads of 1 MiB", allocs)
	}
	if peak > 16<<20 {
		t.Fatalf("peak heap %d bytes for 48 MiB of payloads", peak)
	}
	t.Logf("allocated %v; peak heap %d", allocs, peak)
}

// totalAlloc is the number of bytes fn allocates (garbage included).
func totalAlloc(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
