package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/snapshot"
)

func TestExportFlags(t *testing.T) {
	db := snapshotStore(t)
	wantFailure(t, memctl(t, "--db", db, "export"), ExitUsage, "--out")
	wantFailure(t, memctl(t, "--db", db, "export", "--out", filepath.Join(t.TempDir(), "x"), "--at-rev", "1", "--at", "2026-01-01T00:00:00Z"), ExitUsage)
	wantFailure(t, memctl(t, "--db", db, "export", "--out", filepath.Join(t.TempDir(), "x"), "--at-rev", "999"), ExitNotFound)

	at2 := exportTo(t, db, "--at-rev", "2", "--json")
	info := jsonLines(t, ok(t, "--json", "snapshot", "info", at2))[0]
	if info["revision"] != n("2") || info["nodes"] != n("1") || info["pagerank"] != true {
		t.Errorf("info of the rev-2 export: %v", info)
	}
	// --at TIME selects the same revision as --at-rev.
	var raw struct {
		CommitTime string `json:"commit_time"`
	}
	if err := jsonUnmarshal(ok(t, "--json", "snapshot", "info", at2), &raw); err != nil {
		t.Fatal(err)
	}
	byTime := exportTo(t, db, "--at", raw.CommitTime, "--valid-at", "2030-01-01T00:00:00Z")
	at2 = exportTo(t, db, "--at-rev", "2", "--valid-at", "2030-01-01T00:00:00Z")
	if h1, h2 := ok(t, "--json", "snapshot", "info", byTime), ok(t, "--json", "snapshot", "info", at2); strings.Replace(h1, byTime, at2, 1) != h2 {
		t.Errorf("--at %s and --at-rev 2 differ:\n%s\n%s", raw.CommitTime, h1, h2)
	}
	logical := exportTo(t, db, "--logical", "--no-pagerank")
	info = jsonLines(t, ok(t, "--json", "snapshot", "info", logical))[0]
	if info["revision"] != n("0") || info["logical"] != true || info["pagerank"] != false {
		t.Errorf("info of the logical export: %v", info)
	}
	// Same graph, same hash, whatever the history metadata.
	h1 := strings.Fields(ok(t, "snapshot", "hash", exportTo(t, db)))[0]
	h2 := strings.Fields(ok(t, "snapshot", "hash", logical))[0]
	if h1 != h2 || len(h1) != 64 {
		t.Errorf("hashes %q and %q", h1, h2)
	}
	out := ok(t, "--db", db, "export", "--out", filepath.Join(t.TempDir(), "y.snap"))
	if !strings.HasPrefix(out, "exported rev 7 to ") || !strings.Contains(out, "3 nodes (1 missing), 3 edges") {
		t.Errorf("export printed %q", out)
	}
}

func TestExportProgressOnlyForLargeStores(t *testing.T) {
	db := snapshotStore(t)
	var stdout, stderr bytes.Buffer
	code := Run([]string{"memctl", "--db", db, "export", "--out", filepath.Join(t.TempDir(), "p.snap")},
		Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, StderrIsTerminal: true})
	if code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q (a small store draws no progress bar)", code, stderr.String())
	}
}

func TestExportProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &exportProgress{w: &buf}
	p.update(snapshot.Progress{Phase: "scan", Done: 65536, Total: 0})
	p.update(snapshot.Progress{Phase: "nodes", Done: 10, Total: progressMin - 1})
	if buf.Len() != 0 {
		t.Fatalf("drew %q for small phases", buf.String())
	}
	p.update(snapshot.Progress{Phase: "edges", Done: 4_200_000, Total: 10_000_000})
	p.done()
	if got, want := buf.String(), "\rexport: edges  42% (4200000/10000000)\n"; got != want {
		t.Fatalf("progress line %q, want %q", got, want)
	}
}

// TestExportPastRelations: the relation table of a past state is the one of
// that revision, so exporting revision N gives the same bytes before and
// after a later `rel add` (SPEC §7.12), and `snapshot diff` agrees.
func TestExportPastRelations(t *testing.T) {
	db := initStore(t)
	ok(t, "--db", db, "rel", "add", "mentions")
	ok(t, "--db", db, "put-edge", "a:1", "mentions", "a:2")
	ok(t, "--db", db, "put-edge", "a:1", "calls", "a:3")
	before := exportTo(t, db, "--at-rev", "3", "--valid-at", "2030-01-01T00:00:00Z")
	ok(t, "--db", db, "rel", "add", "owns", "--bidirectional")
	ok(t, "--db", db, "put-edge", "a:1", "owns", "a:4")
	after := exportTo(t, db, "--at-rev", "3", "--valid-at", "2030-01-01T00:00:00Z")
	b1, err1 := os.ReadFile(before)
	b2, err2 := os.ReadFile(after)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !bytes.Equal(b1, b2) {
		t.Errorf("export --at-rev 3 changed after a later rel add (%d vs %d bytes)", len(b1), len(b2))
	}
	hash := func(path string) string { return strings.Fields(ok(t, "snapshot", "hash", path))[0] }
	if h1, h2 := hash(before), hash(after); h1 != h2 {
		t.Errorf("hashes differ: %s vs %s", h1, h2)
	}
	// The relation exists at and after the revision that added it.
	rels := func(path string) string { return ok(t, "--json", "snapshot", "info", path) }
	if latest := exportTo(t, db); strings.Contains(rels(before), `"relations":12`) || !strings.Contains(rels(latest), `"relations":12`) {
		t.Errorf("relation counts: at rev 3 %s; latest %s", rels(before), rels(latest))
	}
	if got := ok(t, "--db", db, "--json", "rel", "list"); !strings.Contains(got, `"owns"`) {
		t.Errorf("rel list: %s", got)
	}
}
