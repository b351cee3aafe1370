package lmdbstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// neighbourEdges reads key's edges through Neighbours, as simpleEdges with
// the keys and relation names Neighbours returned.
func neighbourEdges(t testing.TB, r *ReadTxn, out bool, key, rel string, at At) []simpleEdge {
	t.Helper()
	var relID RelID
	if rel != "" {
		x, err := r.RelationByName(rel)
		if err != nil {
			t.Fatal(err)
		}
		relID = x.ID
	}
	var es []simpleEdge
	err := r.Neighbours(out, IDOf(key), relID, at, func(n Neighbour) bool {
		e := simpleEdge{Rel: n.RelName, Rev: n.Rev, Weight: n.Weight}
		if out {
			e.Src, e.Dst = key, n.Key
		} else {
			e.Src, e.Dst = n.Key, key
		}
		if IDOf(n.Key) != n.Peer {
			t.Errorf("Neighbours: key %q does not hash to peer %016x", n.Key, uint64(n.Peer))
		}
		es = append(es, e)
		return true
	})
	if err != nil {
		t.Fatalf("Neighbours(%v, %s, %q): %v", out, key, rel, err)
	}
	return es
}

// TestNeighboursInWriteTxn: inside a write transaction Neighbours sees the
// transaction's own new keys; an aborted transaction's keys never reach the
// committed-ids cache.
func TestNeighboursInWriteTxn(t *testing.T) {
	s := newStore(t, Options{})
	putEdge(t, s, "file:a", "imports", "file:b")
	errStop := errors.New("stop")
	_, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		if err := tx.PutEdge(EdgePut{Src: "file:a", Rel: "calls", Dst: "sym:new"}); err != nil {
			return err
		}
		got := neighbourEdges(t, tx.Reader(), true, "file:a", "", At{})
		want := []simpleEdge{{"file:a", "imports", "file:b", 1, 1}, {"file:a", "calls", "sym:new", 2, 1}}
		want = modelOrder(tx.Reader(), want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("in the write txn (-want +got):\n%s", d)
		}
		return errStop
	})
	wantErr(t, err, errStop)
	if _, ok := s.ids.get(IDOf("sym:new")); ok {
		t.Fatal("an aborted transaction's key is in the committed-ids cache")
	}
	err = s.View(func(r *ReadTxn) error {
		if got := neighbourEdges(t, r, true, "file:a", "", At{}); len(got) != 1 || got[0].Dst != "file:b" {
			t.Errorf("after the abort: %+v", got)
		}
		_, err := r.KeyOf(IDOf("sym:new"))
		wantErr(t, err, ErrNotFound)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// modelOrder sorts edges of one node as the store lists them: relation id,
// then peer id.
func modelOrder(r *ReadTxn, es []simpleEdge) []simpleEdge {
	st := mState{Edges: map[mEdgeKey]mEdge{}}
	for _, e := range es {
		st.Edges[mEdgeKey{e.Src, e.Rel, e.Dst}] = mEdge{Rev: e.Rev, Weight: e.Weight}
	}
	return modelAdj(r, st, es[0].Src, "", true)
}

// TestKeyCacheStartsOver: past its bounds the cache starts over, and keys
// it handed out before stay intact.
func TestKeyCacheStartsOver(t *testing.T) {
	var c keyCache
	var handed []string
	const n = maxCachedIDs + 10
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("sym:k%d", i)
		got := c.put(NodeID(i), []byte(key))
		if got != key {
			t.Fatalf("put %d returned %q", i, got)
		}
		if i%(1<<16) == 0 {
			handed = append(handed, got)
		}
	}
	if c.index.len() != n-maxCachedIDs {
		t.Errorf("after %d puts the cache holds %d ids, want %d (started over once)", n, c.index.len(), n-maxCachedIDs)
	}
	if _, ok := c.get(0); ok {
		t.Error("id 0 still cached after the cache started over")
	}
	if k, ok := c.get(NodeID(n - 1)); !ok || k != fmt.Sprintf("sym:k%d", n-1) {
		t.Errorf("last id: %q %v", k, ok)
	}
	for j, k := range handed {
		if want := fmt.Sprintf("sym:k%d", j*(1<<16)); k != want {
			t.Errorf("handed-out key %d changed to %q, want %q", j, k, want)
		}
	}
}
