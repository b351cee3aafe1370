package lmdbstore

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files in testdata")

// TestGoldenLayout pins the byte layout of every keyspace (SPEC.md §2) for
// a small deterministic history: a format change shows up as a readable
// diff of testdata/lmdbstore/layout.golden. Regenerate with -rewrite.
func TestGoldenLayout(t *testing.T) {
	s := newStore(t, Options{})
	mustUpdate(t, s, WriteMeta{Scope: "repo", RunID: "run1", TaskID: "task1"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:a.go", Payload: json.RawMessage(`{"lines":10}`)}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "file:a.go", Rel: "defines", Dst: "sym:a.F"}); err != nil {
			return err
		}
		return tx.PutKV(KVPut{Namespace: "decisions", Key: "errors", Payload: json.RawMessage(`"wrap with %w"`)})
	})
	mustUpdate(t, s, WriteMeta{RunID: "run2"}, func(tx *WriteTxn) error {
		if _, err := tx.AddRelation(Relation{Name: "mentions", DefaultWeight: 0.5, Bidirectional: true}); err != nil {
			return err
		}
		if err := tx.PutNode(NodePut{Key: "file:a.go", Payload: json.RawMessage(`{"lines":12}`)}); err != nil {
			return err
		}
		valid := Validity{From: time.Unix(1_700_000_000, 0), Until: time.Unix(1_800_000_000, 5)}
		if err := tx.PutNode(NodePut{Key: "decision:d", Payload: json.RawMessage(`{"b":1,"a":2}`), Valid: valid}); err != nil {
			return err
		}
		if err := tx.PutKV(KVPut{Namespace: "decisions", Key: "until", Payload: json.RawMessage(`1`), Valid: Validity{Until: valid.Until}}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "file:a.go", Rel: "mentions", Dst: "sym:a.F", Weight: 2}); err != nil {
			return err
		}
		return tx.DeleteEdge("file:a.go", "defines", "sym:a.F")
	})
	var buf bytes.Buffer
	err := s.view(func(txn *lmdb.Txn) error {
		return s.db.each(func(ks *keyspace, dbi *lmdb.DBI) error {
			name := ks.name
			fmt.Fprintf(&buf, "## %s\n", name)
			cur, err := txn.OpenCursor(*dbi)
			if err != nil {
				return err
			}
			defer cur.Close()
			for k, v, err := cur.Get(nil, nil, lmdb.First); err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
				if name == dbMeta && string(k) == metaCreated {
					v = u64Value(0) // Init's wall-clock time
				}
				if name == dbRel && bytes.Compare(k, relKey(10)) <= 0 && !bytes.Equal(k, relKey(1)) {
					continue // the builtins look alike; keep one
				}
				if name == dbRelName && string(k) != "defines" && string(k) != "mentions" {
					continue
				}
				fmt.Fprintf(&buf, "%x\n  = %x\n", k, v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "testdata", "lmdbstore", "layout.golden")
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("layout changed (-golden +now); if intended, update SPEC.md and run with -rewrite:\n%s", diff)
	}
}

// FuzzRecords feeds arbitrary bytes to every value decoder: they must fail
// cleanly, never panic.
func FuzzRecords(f *testing.F) {
	f.Add([]byte{fmtPlain, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0})
	f.Add(append([]byte{fmtPlain}, (&nodeRec{rev: 1, typ: "file", payload: []byte(`{}`)}).appendBody(nil)...))
	f.Add(append([]byte{fmtPlain}, (&edgeRec{rev: 1, weight: 1}).appendBody(nil)...))
	f.Add([]byte{fmtZstd, 10, 0x28, 0xb5, 0x2f, 0xfd})
	s := &Store{}
	f.Fuzz(func(t *testing.T, v []byte) {
		key := []byte("k")
		var n nodeRec
		_ = s.decodeRecord(dbNodes, key, v, n.decodeBody)
		var e edgeRec
		_ = s.decodeRecord(dbEdges, key, v, e.decodeBody)
		var kv kvRec
		_ = s.decodeRecord(dbKV, key, v, kv.decodeBody)
		_, _ = s.decodeLog(u64be(1), v)
		_, _ = decodeRel(1, v)
		_, _, _, _ = parseKVKey(v)
	})
}
