package lmdbstore

import (
	"bytes"
	"encoding/json"
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
