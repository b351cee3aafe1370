package lmdbstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRedactor replaces the word "hunter2" (a stand-in secret) wherever it
// appears: the store's contract with a Redactor, independent of any rules.
type fakeRedactor struct{}

func (fakeRedactor) Redact(s string) (string, int) {
	return strings.ReplaceAll(s, "hunter2", "[REDACTED:test]"), strings.Count(s, "hunter2")
}

// TestRedactorSeesEverythingBeforeLMDB: keys and payloads of node, edge and
// kv writes pass the Redactor before anything reaches LMDB, the log or
// telemetry; the commit counts the replacements.
func TestRedactorSeesEverythingBeforeLMDB(t *testing.T) {
	var tele bytes.Buffer
	s := newStore(t, Options{Redactor: fakeRedactor{}, Telemetry: &tele})
	c, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "note:hunter2", Payload: json.RawMessage(`{"pw":"hunter2","n":1}`)}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "note:hunter2", Rel: "references", Dst: "doc:x", Payload: json.RawMessage(`"hunter2 again"`)}); err != nil {
			return err
		}
		return tx.PutKV(KVPut{Scope: "repo", Namespace: "creds", Key: "db-hunter2", Payload: json.RawMessage(`{"dsn":"pg://u:hunter2@h"}`)})
	})
	if err != nil || c.Rev != 1 || c.Redacted != 6 {
		t.Fatalf("commit %+v, %v; want rev 1 with 6 redactions", c, err)
	}
	var dump bytes.Buffer
	if err := s.View(func(r *ReadTxn) error {
		n, err := r.GetNode("note:[REDACTED:test]", At{})
		if err != nil {
			return err
		}
		dump.WriteString(n.Key + string(n.Payload))
		e, err := r.GetEdge(n.Key, "references", "doc:x", At{})
		if err != nil {
			return err
		}
		dump.Write(e.Payload)
		kv, err := r.GetKV("repo", "creds", "db-[REDACTED:test]", At{})
		if err != nil {
			return err
		}
		dump.WriteString(kv.Key + string(kv.Payload))
		return r.DiffSince(AtRevision(0), DiffFilter{}, func(op Op) error {
			dump.WriteString(op.NodeKey + op.Src + op.Key + string(op.Payload))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump.String(), "hunter2") || strings.Contains(tele.String(), "hunter2") {
		t.Errorf("a secret reached the store, the log or telemetry:\n%s\n%s", dump.String(), tele.String())
	}
	if !strings.Contains(dump.String(), `{"n":1,"pw":"[REDACTED:test]"}`) {
		t.Errorf("redacted payload not stored canonically: %s", dump.String())
	}
	if raw := rawDataFile(t, s); bytes.Contains(raw, []byte("hunter2")) {
		t.Errorf("data.mdb contains the secret")
	}
}

// rawDataFile reads the store's data.mdb as bytes (LMDB keeps values
// uncompressed unless memctl zstd-compresses them: small values are plain).
func rawDataFile(t *testing.T, s *Store) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Path(), "data.mdb"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRedactorSeesEveryField: node types, kv scopes, provenance (of the
// transaction and of each operation), delete and supersede endpoints, the
// bulk path, and the keys of read events all pass the Redactor; a relation
// name holding a secret is refused and the store is left as it was.
func TestRedactorSeesEveryField(t *testing.T) {
	var tele bytes.Buffer
	s := newStore(t, Options{Redactor: fakeRedactor{}, Telemetry: &tele})
	meta := WriteMeta{Scope: "s-hunter2", RunID: "r-hunter2", TaskID: "t-hunter2"}
	c, err := s.Update(meta, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "a:1", Type: "ty-hunter2", RunID: "op-hunter2"}); err != nil {
			return err
		}
		if err := tx.PutNode(NodePut{Key: "a:2"}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "a:1", Rel: "calls", Dst: "a:2", TaskID: "op-hunter2"}); err != nil {
			return err
		}
		if err := tx.PutKV(KVPut{Scope: "sc-hunter2", Namespace: "ns", Key: "k", Payload: json.RawMessage(`1`)}); err != nil {
			return err
		}
		return tx.Supersede("a:1", "a:2")
	})
	// 3 in the transaction's provenance, the type, 2 per-operation fields,
	// the kv scope.
	if err != nil || c.Redacted != 7 {
		t.Fatalf("commit %+v, %v; want 7 redactions", c, err)
	}
	// A relation name is refused, not stored redacted.
	before := rawDataFile(t, s)
	_, err = s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		return tx.PutEdge(EdgePut{Src: "a:1", Rel: "rel-hunter2", Dst: "a:2"})
	})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "relation name holds a secret") {
		t.Errorf("put_edge with a secret relation name: %v, want ErrInvalid", err)
	}
	if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		_, err := tx.AddRelation(Relation{Name: "hunter2"})
		return err
	}); !errors.Is(err, ErrInvalid) {
		t.Errorf("add_rel with a secret name: %v, want ErrInvalid", err)
	}
	if after := rawDataFile(t, s); !bytes.Equal(before, after) {
		t.Errorf("a refused write changed data.mdb")
	}
	// The bulk path.
	b := s.NewBulk(WriteMeta{RunID: "bulk-hunter2"})
	if err := b.PutNode(NodePut{Key: "b:hunter2", Type: "t", Payload: json.RawMessage(`{"x":"hunter2"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := b.PutEdge(EdgePut{Src: "b:[REDACTED:test]", Rel: "calls", Dst: "c:hunter2"}); err != nil {
		t.Fatal(err)
	}
	if err := b.PutEdge(EdgePut{Src: "b:1", Rel: "hunter2", Dst: "c:1"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bulk put_edge with a secret relation name: %v", err)
	}
	bc, err := b.Commit()
	if err != nil || bc.Redacted != 4 {
		t.Fatalf("bulk commit %+v, %v; want 4 redactions", bc, err)
	}
	// Deletes and reads name keys the caller wrote; a read's telemetry
	// event is redacted too.
	if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error { return tx.DeleteNode("b:hunter2") }); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(r *ReadTxn) error {
		_, err := r.GetNode("q:hunter2", At{})
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	if err := s.View(func(r *ReadTxn) error {
		if _, err := r.GetNode("b:[REDACTED:test]", At{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("delete of the key as written did not delete the stored (redacted) node: %v", err)
		}
		return r.DiffSince(AtRevision(0), DiffFilter{}, func(op Op) error {
			j, _ := json.Marshal(op)
			dump.Write(j)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"the log": dump.Bytes(), "telemetry": tele.Bytes(), "data.mdb": rawDataFile(t, s)} {
		if bytes.Contains(b, []byte("hunter2")) {
			t.Errorf("%s holds the secret", what)
		}
	}
	if !bytes.Contains(dump.Bytes(), []byte("ty-[REDACTED:test]")) || !bytes.Contains(dump.Bytes(), []byte("r-[REDACTED:test]")) {
		t.Errorf("the redacted type and provenance are not in the log: %s", dump.String())
	}
}

// TestDerivedWriteSkipsScan: a write marked Derived (an ingest) stores its
// keys and payloads as given, on the ordinary and the bulk path, while
// its provenance is still scanned.
func TestDerivedWriteSkipsScan(t *testing.T) {
	s := newStore(t, Options{Redactor: fakeRedactor{}})
	meta := WriteMeta{RunID: "run-hunter2", Derived: true}
	c, err := s.Update(meta, func(tx *WriteTxn) error {
		return tx.PutNode(NodePut{Key: "file:hunter2.go", Payload: json.RawMessage(`{"path":"hunter2.go"}`)})
	})
	if err != nil || c.Redacted != 1 {
		t.Fatalf("commit %+v, %v; want 1 redaction (the run id)", c, err)
	}
	b := s.NewBulk(meta)
	if err := b.PutNode(NodePut{Key: "sym:hunter2.F", Payload: json.RawMessage(`{"name":"hunter2"}`)}); err != nil {
		t.Fatal(err)
	}
	if c, err = b.Commit(); err != nil || c.Redacted != 1 || c.Rev != 2 {
		t.Fatalf("bulk commit %+v, %v; want 1 redaction (the run id)", c, err)
	}
	if err := s.View(func(r *ReadTxn) error {
		for _, key := range []string{"file:hunter2.go", "sym:hunter2.F"} {
			n, err := r.GetNode(key, At{})
			if err != nil {
				return err
			}
			if n.RunID != "run-[REDACTED:test]" || !strings.Contains(string(n.Payload), "hunter2") {
				t.Errorf("%s: run %q payload %s; want the run redacted, the payload as given", key, n.RunID, n.Payload)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
