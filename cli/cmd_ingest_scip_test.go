package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/memctl/memctl/ingest/scip"
)

// testdata/scip/go.scip is ingest/scip's hand-written Go fixture: 2
// documents, 6 symbols, 10 nodes and 18 edges (see its tests).
func TestIngestScipCommand(t *testing.T) {
	db := newStore(t)
	const index = "../testdata/scip/go.scip"
	out := ok(t, "--db", db, "ingest", "scip", index)
	if !regexp.MustCompile(`^ingest scip \S+: scip-go 0\.1\.26, 2 documents, 6 symbols; 10 nodes, 18 edges; rev 1: 10 nodes written, 0 deleted, 18 edges written, 0 deleted; \d+\.\d\ds\n$`).MatchString(out) {
		t.Errorf("ingest scip printed %q", out)
	}
	var sum scip.Summary
	if err := json.Unmarshal([]byte(ok(t, "--db", db, "--json", "ingest", "scip", index)), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Rev != 0 || sum.NodesPut != 0 || sum.EdgesPut != 0 || sum.Documents != 2 || sum.Tool != "scip-go" {
		t.Errorf("re-import: %+v", sum)
	}
	ok(t, "--db", db, "get-node", "sym:example.com/m.T.M")
	ok(t, "--db", db, "get-node", "file:a.go")
}

// Bad input: one line, exit 2, the store as it was.
func TestIngestScipBadInput(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "ingest", "scip", "../testdata/scip/python.scip")
	before := fingerprint(t, db)
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("this is not a SCIP index\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile("../testdata/scip/go.scip")
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.scip")
	if err := os.WriteFile(truncated, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, msg string }{
		{filepath.Join(dir, "missing.scip"), "no such file"},
		{text, "not a SCIP index"},
		{truncated, "not a SCIP index"},
		{"../testdata/scip/empty.scip", "holds no document"},
	} {
		wantFailure(t, memctl(t, "--db", db, "ingest", "scip", tc.file), ExitUsage, "ingest scip", tc.msg)
		wantFailure(t, memctl(t, "--db", db, "eval", "graph", dir, "--scip", tc.file), ExitUsage, "eval graph", tc.msg)
	}
	if fingerprint(t, db) != before {
		t.Error("a failed ingest scip changed the store")
	}
}
