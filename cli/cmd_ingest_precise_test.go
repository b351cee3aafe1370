package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// `ingest code --precise` with an indexer that fails: the summary is
// followed by a line naming the language left to syntax and why; the
// variable names the indexer; --indexer needs --precise and a known name.
func TestIngestCodePreciseCommand(t *testing.T) {
	tree := t.TempDir()
	if err := os.WriteFile(filepath.Join(tree, "m.py"), []byte("def f():\n    g()\n\ndef g():\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "broken-scip-python")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'no python found' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	db := newStore(t)
	r := runEnv(t, "", map[string]string{"MEMCTL_SCIP_PYTHON": fake}, "--db", db, "ingest", "code", tree, "--precise")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if !regexp.MustCompile(`(?m)^syntax: python: scip-python: exited with status 2: no python found$`).MatchString(r.Stdout) {
		t.Errorf("output %q lacks the fallback line", r.Stdout)
	}
	r = runEnv(t, "", nil, "--db", db, "--json", "ingest", "code", tree, "--precise")
	if !regexp.MustCompile(`"precise":\[\{"lang":"python","indexer":"scip-python","files":1,"precise":0,"fallback":"scip-python not found \(PATH, MEMCTL_SCIP_PYTHON, --indexer scip-python=PATH\)","seconds":0,"unchanged":true\}\]`).MatchString(r.Stdout) {
		t.Errorf("--json without an indexer: %q", r.Stdout)
	}
	before := fingerprint(t, db)
	wantFailure(t, memctl(t, "--db", db, "ingest", "code", tree, "--indexer", "scip-python="+fake), ExitUsage, "--indexer needs --precise")
	wantFailure(t, memctl(t, "--db", db, "ingest", "code", tree, "--precise", "--indexer", "scip-cobol="+fake), ExitUsage, "unknown indexer scip-cobol")
	if fingerprint(t, db) != before {
		t.Error("a refused ingest changed the store")
	}
}
