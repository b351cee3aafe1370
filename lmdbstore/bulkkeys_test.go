package lmdbstore

import (
	"strings"
	"testing"
	"unsafe"
)

// TestBulkKeysOwned: a load copies each new key out of the caller's
// string (which may be a view of a larger buffer), unless told the caller
// owns its keys (KeysOwned): then it keeps the string as given. Either
// way an edge endpoint and a node of the same key share one entry.
func TestBulkKeysOwned(t *testing.T) {
	for _, owned := range []bool{false, true} {
		s := newStore(t, Options{})
		b := s.NewBulk(WriteMeta{})
		if owned {
			b.KeysOwned()
		}
		buf := strings.Repeat("x", 64) + "sym:a.F" + strings.Repeat("y", 64)
		key := buf[64 : 64+len("sym:a.F")]
		ref, err := b.Key(key)
		if err != nil {
			t.Fatal(err)
		}
		kept := b.keys.keys[ref]
		if kept != key {
			t.Fatalf("owned %v: kept %q", owned, kept)
		}
		if same := unsafe.StringData(kept) == unsafe.StringData(key); same != owned {
			t.Fatalf("owned %v: the load kept the caller's bytes: %v", owned, same)
		}
		if err := b.PutNode(NodePut{Key: "sym:a.F"}); err != nil {
			t.Fatal(err)
		}
		if len(b.keys.keys) != 1 {
			t.Fatalf("owned %v: %d keys for one", owned, len(b.keys.keys))
		}
		if _, err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}
