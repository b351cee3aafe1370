package snapshot_test

import (
	"bytes"
	"fmt"
	"path/filepath"
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
func (s *bigPayloadState) Revision() uint64                               { return 1 }

// TestExportHeapDoesNotGrowWithPayloads: exporting 8 and 48 payloads of
// 1 MiB peaks at about the same heap (a few MiB: one payload's compression
// buffer), far below the payload total.
func TestExportHeapDoesNotGrowWithPayloads(t *testing.T) {
	if testing.Short() {
		t.Skip("writes tens of MiB")
	}
	payload := []byte(`{"text":"` + string(bytes.Repeat([]byte("0123456789abcdef"), 1<<16)) + `"}`)
	peaks := map[int]uint64{}
	for _, n := range []int{8, 48} {
		st := &bigPayloadState{synthState: synthState{n: n}, payload: payload}
		path := filepath.Join(t.TempDir(), "big.snap")
		peaks[n] = peakHeap(func() {
			if _, err := snapshot.WriteFile(path, st, snapshot.WriterOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	if peaks[48] > 16<<20 || peaks[48] > 2*peaks[8]+(4<<20) {
		t.Fatalf("peak heap grows with payloads: %v (payload total 48 MiB)", peaks)
	}
	t.Logf("peak heap: %v", peaks)
}
