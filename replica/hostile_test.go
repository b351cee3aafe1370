package replica_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/nats-io/nats.go"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
)

// sealed is body with the log's CRC-32C trailer (SPEC.md §2).
func sealed(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
}

// TestHostileMessages publishes, after one good revision, a message that
// is not the next revision (garbage, a bad crc, a forged or replayed
// revision, a wrong format, a part of nothing): a store catching up
// applies the good revision, refuses the message naming its sequence, and
// applies nothing of it; a writer's next write fails the same way and
// changes nothing.
func TestHostileMessages(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	nc, err := nats.Connect(strings.TrimSuffix(ts.url(""), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cases := []struct {
		name    string
		hdr     map[string]string
		data    func(good []byte) []byte
		wantMsg string
	}{
		{"garbage", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "2"},
			func([]byte) []byte { return []byte("not a log record") }, "checksum"},
		{"no headers", nil, func(good []byte) []byte { return good }, "format"},
		{"bad crc", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "2"},
			func(good []byte) []byte {
				b := append([]byte(nil), good...)
				b[len(b)-1] ^= 0xff
				return b
			}, "checksum"},
		{"replayed revision 1 as 2", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "2"},
			func(good []byte) []byte { return good }, "commit time"},
		{"forged revision 5", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "5"},
			func(good []byte) []byte { return good }, "holds revision 5, the next is 2"},
		{"revision 1 again", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "1"},
			func(good []byte) []byte { return good }, "holds revision 1, the next is 2"},
		{"lone part", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "2", "Memctl-Part": "2/3"},
			func(good []byte) []byte { return good }, "part 2/3"},
		{"bad part header", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "2", "Memctl-Part": "x"},
			func(good []byte) []byte { return good }, "Memctl-Part"},
		{"future format", map[string]string{"Memctl-Format": "3", "Memctl-Rev": "2"},
			func(good []byte) []byte { return good }, `format "3" (this memctl reads "1" and "2")`},
		{"key-table header on a record without one", map[string]string{"Memctl-Format": "2", "Memctl-Rev": "2"},
			func(good []byte) []byte { return good }, `message format "2", its record needs "1"`},
		{"valid crc, ops that do not decode", map[string]string{"Memctl-Format": "1", "Memctl-Rev": "2"},
			func([]byte) []byte {
				body := []byte{1}
				body = binary.BigEndian.AppendUint64(body, 1<<62)
				body = append(body, 0, 0, 0, 1, 99) // empty scope/run/task, 1 op of kind 99
				return sealed(body)
			}, "unknown op kind 99"},
		{"key-table record whose ops do not replay to themselves", map[string]string{"Memctl-Format": "2", "Memctl-Rev": "2"},
			func([]byte) []byte {
				// put_node of a payload spelled non-canonically: the replay
				// stores (and logs) its canonical form, so the ops differ.
				payload := `{"b": 1, "a": "` + strings.Repeat("x", 300) + `"}`
				body := []byte{2, 0, 10}
				body = append(body, "decision:x"...)
				body = append(body, byte(lmdbstore.OpPutNode), 0, 0, 0, 1, 0)
				body = binary.AppendUvarint(body, uint64(len(payload)))
				body = append(body, payload...)
				enc, err := zstd.NewWriter(nil)
				if err != nil {
					panic(err)
				}
				rec := binary.BigEndian.AppendUint64([]byte{3}, 1<<62)
				rec = append(rec, 0, 0, 0, 1) // empty scope/run/task, 1 op
				rec = binary.AppendUvarint(rec, uint64(len(body)))
				return sealed(enc.EncodeAll(body, rec))
			}, "do not replay to themselves"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stream := fmt.Sprintf("hostile%d", i)
			addr := ts.addr(t, stream)
			a := newMachine(t, filepath.Join(dir, stream, "a"), addr, replica.Options{})
			if _, err := a.s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
				return tx.PutNode(lmdbstore.NodePut{Key: "decision:good"})
			}); err != nil {
				t.Fatal(err)
			}
			good := logOf(t, a.s)[0]
			m := nats.NewMsg(replica.Subject(stream))
			for k, v := range c.hdr {
				m.Header.Set(k, v)
			}
			m.Data = c.data(good)
			if _, err := nc.RequestMsg(m, ts.timeout()); err != nil {
				t.Fatal(err)
			}
			b := newMachine(t, filepath.Join(dir, stream, "b"), addr, replica.Options{})
			n, err := b.r.Sync(b.s)
			if !errors.Is(err, lmdbstore.ErrDiverged) || !strings.Contains(err.Error(), c.wantMsg) ||
				!(strings.Contains(err.Error(), "message 2") || strings.Contains(err.Error(), "position 2")) {
				t.Fatalf("sync: %v, want a refusal of message 2 mentioning %q", err, c.wantMsg)
			}
			if n != 1 || b.rev(t) != 1 {
				t.Fatalf("applied %d, at revision %d: want the good revision only", n, b.rev(t))
			}
			if got := logOf(t, b.s); string(got[0]) != string(good) {
				t.Fatal("the good revision differs")
			}
			_, err = a.s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
				return tx.PutNode(lmdbstore.NodePut{Key: "decision:next"})
			})
			if !errors.Is(err, lmdbstore.ErrDiverged) {
				t.Fatalf("write after the hostile message: %v, want ErrDiverged", err)
			}
			if a.rev(t) != 1 {
				t.Fatalf("writer at revision %d after a refused catch-up", a.rev(t))
			}
			for _, m := range []*machine{a, b} {
				if rep, err := m.s.Check(); err != nil || len(rep.Problems) > 0 {
					t.Fatalf("check: %v %v", rep.Problems, err)
				}
			}
		})
	}
}
