package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportRoundTrip(t *testing.T) {
	db := snapshotStore(t)
	first := exportTo(t, db)
	firstLogical := exportTo(t, db, "--logical")
	db2 := filepath.Join(t.TempDir(), "db2")
	out := ok(t, "--db", db2, "import", first)
	// One revision for the added relation, one for the nodes and edges (a bulk load).
	if out != "imported 2 nodes, 3 edges, 1 relations into "+db2+" (rev 2)\n" {
		t.Errorf("import printed %q", out)
	}
	again := exportTo(t, db2, "--logical")
	a, _ := os.ReadFile(firstLogical)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("export -> import -> export (--logical) is not byte-identical")
	}
	h1 := strings.Fields(ok(t, "snapshot", "hash", first))[0]
	h2 := strings.Fields(ok(t, "snapshot", "hash", exportTo(t, db2)))[0]
	if h1 != h2 {
		t.Error("snapshot hash differs after import")
	}
	if d := ok(t, "snapshot", "diff", first, exportTo(t, db2)); d != "nodes: 0 added, 0 removed, 0 changed; edges: 0 added, 0 removed, 0 changed\n" {
		t.Errorf("diff after import: %q", d)
	}
	// A snapshot holds every edge's weight; only the one that is not its
	// relation's default (uses 0.25) is stored explicitly, with an e record
	// (defines and calls keep implicit records, SPEC §2).
	var st struct {
		Keyspaces []struct {
			Name    string `json:"name"`
			Entries int    `json:"entries"`
		} `json:"keyspaces"`
	}
	if err := jsonUnmarshal(ok(t, "--db", db2, "--json", "stats"), &st); err != nil {
		t.Fatal(err)
	}
	eRecords := -1
	for _, k := range st.Keyspaces {
		if k.Name == "e" {
			eRecords = k.Entries
		}
	}
	if eRecords != 1 {
		t.Errorf("imported store: %d e records, want 1", eRecords)
	}
	// The store must be new.
	wantFailure(t, memctl(t, "--db", db2, "import", first), ExitUsage)
	// A damaged file is refused (verified beside the load, before anything
	// is written), and the store the import created is removed.
	bad := damaged(t, first, 700)
	db3 := filepath.Join(t.TempDir(), "db3")
	wantFailure(t, memctl(t, "--db", db3, "import", bad), ExitCorrupt, "section")
	if _, err := os.Stat(db3); !os.IsNotExist(err) {
		t.Errorf("a failed import left %s behind", db3)
	}
}
