package lmdbstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// TestEveryByteFlipDetected is the property the CRC-32C trailers buy: any
// single damaged byte of a stored value, wherever it falls (payload, peer
// id, weight, revision, the trailer itself), makes the read fail with a
// *CorruptionError naming the keyspace and key; nothing is misread.
func TestEveryByteFlipDetected(t *testing.T) {
	s := newStore(t, Options{})
	mustUpdate(t, s, WriteMeta{Scope: "repo", RunID: "run1"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:a", Type: "file", Payload: json.RawMessage(`{"lines":10}`)}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "file:a", Rel: "calls", Dst: "file:b", Weight: 0.5}); err != nil {
			return err
		}
		return tx.PutKV(KVPut{Scope: "repo", Namespace: "decisions", Key: "errors", Payload: json.RawMessage(`"wrap"`)})
	})
	a, b := IDOf("file:a"), IDOf("file:b")
	kvK := kvKey("repo", "decisions", "errors")
	cases := []struct {
		keyspace string
		dbi      lmdb.DBI
		key      []byte
		read     func(r *ReadTxn) error
	}{
		{dbNodes, s.db.n, nodeKey(a), func(r *ReadTxn) error { _, err := r.GetNode("file:a", At{}); return err }},
		{dbEdges, s.db.e, edgeKey(a, 3, b), func(r *ReadTxn) error { _, err := r.GetEdge("file:a", "calls", "file:b", At{}); return err }},
		{dbKV, s.db.kv, kvK, func(r *ReadTxn) error { _, err := r.GetKV("repo", "decisions", "errors", At{}); return err }},
		{dbLog, s.db.log, u64be(1), func(r *ReadTxn) error {
			return r.DiffSince(AtRevision(0), DiffFilter{}, func(Op) error { return nil })
		}},
		{dbOut, s.db.out, adjKey(a, 3, b), func(r *ReadTxn) error { _, err := r.GetOut("file:a", "", At{}); return err }},
		{dbIn, s.db.in, adjKey(b, 3, a), func(r *ReadTxn) error { _, err := r.GetIn("file:b", "", At{}); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.keyspace, func(t *testing.T) {
			orig := rawGet(t, s, tc.dbi, tc.key)
			if err := s.View(tc.read); err != nil {
				t.Fatalf("undamaged read: %v", err)
			}
			for i := range orig {
				damaged := bytes.Clone(orig)
				damaged[i] ^= 0xff
				rawPut(t, s, tc.dbi, tc.key, damaged)
				err := s.View(tc.read)
				var ce *CorruptionError
				if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d of %d flipped: read error = %v, want a CorruptionError", i, len(orig), err)
				}
				if ce.Keyspace != tc.keyspace || !bytes.Equal(ce.Key, tc.key) || !strings.Contains(ce.Msg, "checksum mismatch") {
					t.Errorf("byte %d flipped: error %q, want a checksum mismatch of %s %x", i, err, tc.keyspace, tc.key)
				}
			}
			rawPut(t, s, tc.dbi, tc.key, orig)
			if err := s.View(tc.read); err != nil {
				t.Fatalf("restored read: %v", err)
			}
		})
	}
	mustCheck(t, s)
}
