package lmdbstore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBulkSpillLeavesNothing: a load that spills its payloads leaves no
// file in the store's directory (the spill file has no name), before and
// after its commit, and its payloads read back as given.
func TestBulkSpillLeavesNothing(t *testing.T) {
	s := newStore(t, Options{})
	names := func() []string {
		es, err := os.ReadDir(s.path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	before := names()
	b := s.NewBulk(WriteMeta{})
	b.nodePay.spillTo(s.path, 1)
	b.nodePay.block = 100
	want := map[string]string{}
	for i := range 300 {
		key, pay := fmt.Sprint("sym:", i), fmt.Sprintf(`{"i":%d,"s":"%0*d"}`, i, i%97, 0)
		want[key] = pay
		if err := b.PutNode(NodePut{Key: key, Payload: json.RawMessage(pay)}); err != nil {
			t.Fatal(err)
		}
	}
	if b.nodePay.spilled() == 0 {
		t.Fatal("nothing spilled")
	}
	if got := names(); !slices.Equal(got, before) {
		t.Fatalf("store directory while loading: %v, want %v", got, before)
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, before) {
		t.Fatalf("store directory after the commit: %v, want %v", got, before)
	}
	if err := s.View(func(r *ReadTxn) error {
		for key, pay := range want {
			n, err := r.GetNode(key, At{})
			if err != nil {
				return err
			}
			if string(n.Payload) != pay {
				t.Errorf("%s: payload %s, want %s", key, n.Payload, pay)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestBulkSpillFallsBack: where no spill file can be made, the payloads
// stay in memory and the load commits what the ordinary path writes.
func TestBulkSpillFallsBack(t *testing.T) {
	ordinary, bulk := newStore(t, Options{}), newStore(t, Options{})
	var ops []bulkOp
	for i := range 200 {
		ops = append(ops, bulkOp{node: &NodePut{Key: fmt.Sprint("sym:", i), Payload: json.RawMessage(fmt.Sprintf(`{"line":%d}`, i))}})
		ops = append(ops, bulkOp{edge: &EdgePut{Src: fmt.Sprint("sym:", i), Rel: "calls", Dst: fmt.Sprint("sym:", i/2), Payload: json.RawMessage(`{"n":2}`)}})
	}
	mustUpdate(t, ordinary, WriteMeta{}, func(tx *WriteTxn) error { return putOps(tx, ops) })
	b := bulk.NewBulk(WriteMeta{})
	for _, a := range []*payArena{&b.nodePay, &b.edgePays} {
		a.spillTo(filepath.Join(t.TempDir(), "missing"), 1)
		a.block = 64
	}
	if err := putOps(b, ops); err != nil {
		t.Fatal(err)
	}
	if n := b.nodePay.spilled() + b.edgePays.spilled(); n != 0 || b.nodePay.spill == nil || !b.nodePay.spill.off {
		t.Fatalf("spilled %d bytes into a missing directory", n)
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	sameAsUpdate(t, ordinary, bulk)
}
