package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretCorpusThroughMCP (SPEC §2 "Secrets"): every secret of the
// corpus, as it stands in its text, as an entity's observation, its name
// and type, a relation's ends, and a kv entry's payload, written through
// the MCP tools: none reaches the store (the file, the log), and every
// write reports what it redacted.
func TestSecretCorpusThroughMCP(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "secrets", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type entry struct {
		Label, Kind, Secret, Text string
	}
	var secrets []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Label == "secret" {
			secrets = append(secrets, e)
		}
	}
	db := newStore(t)
	s := startServer(t, db)
	var entities []map[string]any
	var relations []map[string]any
	for i, e := range secrets {
		entities = append(entities, map[string]any{"name": fmt.Sprintf("e%d %s", i, e.Text), "entityType": "note " + e.Text,
			"observations": []string{e.Text, "next to an escape: " + e.Text + "\n\t\"", "(" + e.Text + ")."}})
		relations = append(relations, map[string]any{"from": fmt.Sprintf("r%d %s", i, e.Text), "to": "target", "relationType": "mentions"})
	}
	var c struct {
		Redacted int `json:"redacted"`
	}
	s.ok("create_entities", map[string]any{"entities": entities}, &c)
	if c.Redacted < len(secrets) {
		t.Errorf("create_entities redacted %d, want at least %d", c.Redacted, len(secrets))
	}
	s.ok("create_relations", map[string]any{"relations": relations}, nil)
	for i, e := range secrets {
		s.ok("put_kv", map[string]any{"namespace": "notes", "key": fmt.Sprint(i), "payload": map[string]any{"text": e.Text}}, nil)
	}
	log := runCLI(t, "", "--db", db, "--json", "diff-since", "0")
	raw, err := os.ReadFile(filepath.Join(db, "data.mdb"))
	if err != nil {
		t.Fatal(err)
	}
	leaked := 0
	for _, e := range secrets {
		tok := e.Secret
		if lines := strings.Split(tok, "\n"); len(lines) > 2 {
			tok = lines[1]
		}
		if strings.Contains(log, tok) || strings.Contains(string(raw), tok) {
			leaked++
			t.Errorf("%s secret %.40q stored", e.Kind, e.Secret)
		}
	}
	t.Logf("%d secrets through create_entities (name, type, 3 observations), create_relations and put_kv: %d stored", len(secrets), leaked)
}
