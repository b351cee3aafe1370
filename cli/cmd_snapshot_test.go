package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshotStore is a small store: nodes with payloads and scopes, a custom
// relation, an edge to a node that does not exist (a missing endpoint).
func snapshotStore(t *testing.T) string {
	t.Helper()
	db := newStore(t)
	ok(t, "--db", db, "rel", "add", "uses", "--bidirectional", "--weight", "0.5")
	ok(t, "--db", db, "put-node", "file:a.go", "--payload", `{"lines":3}`, "--scope", "repo", "--run", "r1")
	ok(t, "--db", db, "put-node", "sym:a.Run", "--task", "t9")
	ok(t, "--db", db, "put-edge", "file:a.go", "defines", "sym:a.Run")
	ok(t, "--db", db, "put-edge", "sym:a.Run", "uses", "file:a.go", "--weight", "0.25")
	ok(t, "--db", db, "put-edge", "sym:a.Run", "calls", "sym:gone.F")
	ok(t, "--db", db, "put-node", "file:a.go", "--payload", `{"lines":4}`, "--scope", "repo")
	return db
}

func exportTo(t *testing.T, db string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.snap")
	ok(t, append([]string{"--db", db, "export", "--out", path}, args...)...)
	return path
}

// The snapshot reads print exactly what the store reads print.
func TestSnapshotReadsMatchStoreReads(t *testing.T) {
	db := snapshotStore(t)
	snap := exportTo(t, db)
	for _, key := range []string{"file:a.go", "sym:a.Run"} {
		for _, format := range [][]string{nil, {"--json"}} {
			for _, verb := range []string{"get-node", "get-out", "get-in"} {
				store := ok(t, append(append([]string{"--db", db}, format...), verb, key)...)
				fromSnap := ok(t, append(append([]string{}, format...), "snapshot", verb, snap, key)...)
				if store != fromSnap {
					t.Errorf("%s %s %v: store printed\n%s\nsnapshot printed\n%s", verb, key, format, store, fromSnap)
				}
			}
		}
	}
	// --rel filters like the store's.
	if got, want := ok(t, "snapshot", "get-out", snap, "sym:a.Run", "--rel", "uses"), ok(t, "--db", db, "get-out", "sym:a.Run", "--rel", "uses"); got != want {
		t.Errorf("--rel: got %q want %q", got, want)
	}
	wantFailure(t, memctl(t, "snapshot", "get-node", snap, "sym:gone.F"), ExitNotFound, "only an edge endpoint")
	wantFailure(t, memctl(t, "snapshot", "get-node", snap, "file:nope"), ExitNotFound, "file:nope")
	wantFailure(t, memctl(t, "snapshot", "get-out", snap, "file:a.go", "--rel", "nope"), ExitUsage, "nope")
}

func TestSnapshotDiff(t *testing.T) {
	db := snapshotStore(t)
	before := exportTo(t, db)
	ok(t, "--db", db, "put-node", "file:a.go", "--payload", `{"lines":5}`, "--scope", "repo")
	ok(t, "--db", db, "put-node", "doc:new")
	ok(t, "--db", db, "del-node", "sym:a.Run")
	ok(t, "--db", db, "put-edge", "file:a.go", "defines", "sym:a.Run", "--weight", "0.5")
	ok(t, "--db", db, "del-edge", "sym:a.Run", "calls", "sym:gone.F")
	after := exportTo(t, db)
	got := ok(t, "snapshot", "diff", before, after)
	wantLines := []string{
		"+ node doc:new",
		"~ node file:a.go (payload)",
		"- node sym:a.Run",
		"~ edge file:a.go -defines-> sym:a.Run weight 1 -> 0.5",
		"- edge sym:a.Run -calls-> sym:gone.F weight 1",
		"nodes: 1 added, 1 removed, 1 changed; edges: 0 added, 1 removed, 1 changed",
	}
	if got != strings.Join(wantLines, "\n")+"\n" {
		t.Errorf("diff printed:\n%s\nwant:\n%s", got, strings.Join(wantLines, "\n"))
	}
	js := jsonLines(t, ok(t, "--json", "snapshot", "diff", before, after))
	if len(js) != 5 || js[3]["change"] != "changed" || js[3]["old_weight"] != n("1") || js[3]["weight"] != n("0.5") {
		t.Errorf("json diff: %v", js)
	}
}

// damaged copies path with the byte at off flipped.
func damaged(t *testing.T, path string, off int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x5a
	out := filepath.Join(t.TempDir(), "damaged.snap")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDamagedSnapshotExit3NamesSection(t *testing.T) {
	db := snapshotStore(t)
	snap := exportTo(t, db)
	info := jsonLines(t, ok(t, "--json", "snapshot", "info", snap))[0]
	var targets float64
	for _, s := range info["sections"].([]any) {
		sec := s.(map[string]any)
		if sec["name"] == "fwd_targets" {
			targets, _ = sec["offset"].(json.Number).Float64()
		}
	}
	bad := damaged(t, snap, int(targets))
	for _, args := range [][]string{
		{"snapshot", "verify", bad},
		{"snapshot", "hash", bad},
		{"snapshot", "get-out", bad, "file:a.go"},
		{"snapshot", "diff", snap, bad},
	} {
		wantFailure(t, memctl(t, args...), ExitCorrupt, "section fwd_targets")
	}
	// Truncated: the header says so.
	b, _ := os.ReadFile(snap)
	short := filepath.Join(t.TempDir(), "short.snap")
	os.WriteFile(short, b[:len(b)/2], 0o644)
	wantFailure(t, memctl(t, "snapshot", "info", short), ExitCorrupt, "section header", "truncated")
	// Not a snapshot at all.
	wantFailure(t, memctl(t, "snapshot", "verify", filepath.Join(db, "data.mdb")), ExitCorrupt, "not a memctl snapshot")
	// A newer major version: refused with a clear message.
	newer := bytes.Clone(b)
	binary.LittleEndian.PutUint16(newer[8:], 4)
	binary.LittleEndian.PutUint32(newer[124:], crc32.Checksum(newer[:124], crc32.MakeTable(crc32.Castagnoli)))
	os.WriteFile(short, newer, 0o644)
	wantFailure(t, memctl(t, "snapshot", "verify", short), ExitCorrupt, "newer than this reader")
	// A format 2.x file (no valid time in node rows): refused, saying to
	// re-export.
	binary.LittleEndian.PutUint16(newer[8:], 2)
	binary.LittleEndian.PutUint32(newer[124:], crc32.Checksum(newer[:124], crc32.MakeTable(crc32.Castagnoli)))
	os.WriteFile(short, newer, 0o644)
	wantFailure(t, memctl(t, "snapshot", "verify", short), ExitCorrupt, "older than this reader", "export the store again")
	if r := memctl(t, "snapshot", "verify", snap); r.Code != 0 || !strings.HasPrefix(r.Stdout, "ok ") {
		t.Errorf("verify of the good file: %+v", r)
	}
}
