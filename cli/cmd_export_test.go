package cli

import (
	"bytes"
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
	byTime := exportTo(t, db, "--at", raw.CommitTime)
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
