package enginesnap_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// TestDiff: the changes between two exports of one store, against the
// writes made between them.
func TestDiff(t *testing.T) {
	s := newStore(t)
	now := base.Add(time.Hour)
	update(t, s, func(tx *lmdbstore.WriteTxn) error {
		for _, f := range []func(*lmdbstore.WriteTxn) error{
			node("n:keep", lmdbstore.Validity{}, `{"v":1}`), node("n:gone", lmdbstore.Validity{}, ""),
			edge("n:keep", "calls", "n:gone"), edge("n:keep", "calls", "n:x"),
		} {
			if err := f(tx); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, s, func(tx *lmdbstore.WriteTxn) error {
		if err := tx.PutNode(lmdbstore.NodePut{Key: "n:keep", Type: "file", Payload: json.RawMessage(`{"v":2}`)}); err != nil {
			return err
		}
		if err := tx.DeleteNode("n:gone"); err != nil {
			return err
		}
		if err := tx.DeleteEdge("n:keep", "calls", "n:gone"); err != nil {
			return err
		}
		if err := tx.PutEdge(lmdbstore.EdgePut{Src: "n:keep", Rel: "calls", Dst: "n:x", Weight: 3}); err != nil {
			return err
		}
		return node("n:new", lmdbstore.Validity{}, "")(tx)
	})
	got, err := enginesnap.Diff(fresh(t, s, 1, now), fresh(t, s, 2, now))
	if err != nil {
		t.Fatal(err)
	}
	want := []enginesnap.Change{
		{Change: "removed", Kind: "node", Key: "n:gone"},
		{Change: "changed", Kind: "node", Key: "n:keep", Fields: []string{"type", "payload"}},
		{Change: "added", Kind: "node", Key: "n:new"},
		{Change: "removed", Kind: "edge", Src: "n:keep", Rel: "calls", Dst: "n:gone", Weight: 1},
		{Change: "changed", Kind: "edge", Src: "n:keep", Rel: "calls", Dst: "n:x", Weight: 3, OldWeight: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Diff (-want +got):\n%s", d)
	}
}

// TestClosed: a closed provider serves nothing.
func TestClosed(t *testing.T) {
	s := newStore(t)
	p := enginesnap.New(s, enginesnap.Options{})
	p.Close()
	if _, _, err := p.At(enginesnap.Exact, lmdbstore.At{}); !errors.Is(err, enginesnap.ErrClosed) {
		t.Errorf("At after Close: %v, want ErrClosed", err)
	}
}
