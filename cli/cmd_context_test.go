package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContextCommand: memctl context on an ingested tree with recorded
// decisions: a policy for lmdbstore/** applies to lmdbstore/store.go and
// not to the CLI file, the JSON is the same pack, the engine snapshot is
// kept in the store directory, and bad input is one line with its exit
// code and changes nothing.
func TestContextCommand(t *testing.T) {
	db := newStore(t)
	dir := copyTree(t, "testdata/ingest/basic", nil)
	ok(t, "--db", db, "ingest", "go", dir, "--run", "r1", "--task", "index")
	ok(t, "--db", db, "put-kv", "--run", "r2", "repo", "decisions", "shapes-api", `{"text":"keep constructors pure","applies_to":["shapes/**"]}`)
	ok(t, "--db", db, "put-kv", "--run", "r2", "repo", "decisions", "elsewhere", `{"text":"not for shapes","applies_to":["cmd/**"]}`)
	files := ok(t, "--db", db, "--json", "get-out", "dir:shapes", "--rel", "contains")
	var target string
	for _, line := range strings.Split(strings.TrimSpace(files), "\n") {
		var e struct{ Dst string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Dst, "file:") {
			target = strings.TrimPrefix(e.Dst, "file:")
			break
		}
	}
	if target == "" {
		t.Fatalf("no file in dir:shapes: %s", files)
	}
	r := memctl(t, "--db", db, "context", target, "--budget", "800")
	md := r.Stdout
	if r.Code != 0 || !strings.Contains(md, "keep constructors pure") || strings.Contains(md, "not for shapes") {
		t.Errorf("context %s: exit %d\n%s%s", target, r.Code, md, r.Stderr)
	}
	// The fixture's shapes package is read from syntax (it imports a module
	// that is not there): the answer says its graph may be incomplete.
	if !strings.Contains(r.Stderr, "coverage: PARTIAL") || !strings.Contains(r.Stderr, "example.com/basic/shapes") {
		t.Errorf("context on a syntax-only package does not say its coverage is partial: %q", r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(db, "context.snap")); err != nil {
		t.Errorf("no engine snapshot kept in the store directory: %v", err)
	}
	var pack struct {
		Tokens  int `json:"tokens"`
		Applies []struct {
			Key string `json:"key"`
		} `json:"applies"`
		Snapshot struct {
			Built bool `json:"built"`
		} `json:"snapshot"`
	}
	if err := json.Unmarshal([]byte(ok(t, "--db", db, "--json", "context", target, "--budget", "800")), &pack); err != nil {
		t.Fatal(err)
	}
	if len(pack.Applies) != 1 || pack.Applies[0].Key != "kv:repo/decisions/shapes-api" || pack.Tokens > 800 {
		t.Errorf("context --json: %+v", pack)
	}
	if pack.Snapshot.Built {
		t.Error("the second call rebuilt the engine snapshot of an unchanged store")
	}
	before := fingerprint(t, db)
	wantFailure(t, memctl(t, "--db", db, "context"), 2, "TARGET")
	wantFailure(t, memctl(t, "--db", db, "context", target, "--budget", "0"), 2, "--budget")
	wantFailure(t, memctl(t, "--db", db, "context", target, "--since", "last tuesday"), 2, "--since")
	wantFailure(t, memctl(t, "--db", db, "context", target, "--since-run", "r1", "--since", "1"), 2, "mutually exclusive")
	wantFailure(t, memctl(t, "--db", db, "context", target, "--since-run", "nope"), 1, "nope")
	wantFailure(t, memctl(t, "--db", db, "context", "zzqqxx-nothing-matches"), 1, "no match")
	if fingerprint(t, db) != before {
		t.Error("a failed context changed the store")
	}
}
