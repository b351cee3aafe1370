package fuzz

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/cli"
)

// TestCorruptSnapshotFiles damages real exported files — single bit flips,
// zeroed 64-byte runs, truncations — and runs every `memctl snapshot`
// reader on them. Verifying readers (the default) exit 3 naming a section,
// with one line on stderr; nothing panics; and with --no-verify a read
// either answers as on the undamaged file or exits 3 (a flip inside a
// weight or payload is only visible to the CRCs, which --no-verify skips).
func TestCorruptSnapshotFiles(t *testing.T) {
	dir := t.TempDir()
	src := copyStore(t, fixture(t))
	good := filepath.Join(dir, "good.snap")
	if r := memctlIn("", "--db", src, "export", "--out", good); r.Code != 0 {
		t.Fatalf("export: %s", r.Stderr)
	}
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	reads := [][]string{
		{"get-node", "file:a.go"}, {"get-out", "hub:h"}, {"get-in", "sym:b.G"}, {"get-out", "file:a.go"},
	}
	want := map[string]run{}
	for _, args := range reads {
		want[strings.Join(args, " ")] = memctlIn("", append([]string{"--json", "snapshot"}, append(args[:1:1], append([]string{good}, args[1:]...)...)...)...)
	}
	hash := memctlIn("", "snapshot", "hash", good)

	rng := rand.New(rand.NewPCG(3, 4))
	cases := 200
	if testing.Short() || raceEnabled {
		cases = 40
	}
	counts := map[string]int{}
	for i := range cases {
		bad := bytes.Clone(orig)
		var what string
		switch i % 3 {
		case 0:
			off := rng.IntN(len(bad))
			bad[off] ^= 1 << rng.IntN(8)
			what = fmt.Sprintf("flip at %d", off)
		case 1:
			off := rng.IntN(len(bad))
			clear(bad[off:min(off+64, len(bad))])
			if bytes.Equal(bad, orig) {
				continue // the run was zero already (padding)
			}
			what = fmt.Sprintf("zero 64 at %d", off)
		case 2:
			n := rng.IntN(len(bad))
			bad = bad[:n]
			what = fmt.Sprintf("truncate to %d", n)
		}
		path := filepath.Join(dir, fmt.Sprintf("bad-%d.snap", i))
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		v := memctlIn("", "snapshot", "verify", path)
		if v.Code != cli.ExitCorrupt || !strings.Contains(v.Stderr, "section") || strings.Count(v.Stderr, "\n") != 1 {
			t.Errorf("%s: snapshot verify exit %d, stderr %q: want exit 3 naming a section on one line", what, v.Code, v.Stderr)
			continue
		}
		counts[sectionOf(v.Stderr)]++
		for _, args := range reads {
			key := strings.Join(args, " ")
			r := memctlIn("", append([]string{"--json", "snapshot"}, append(args[:1:1], append([]string{path}, args[1:]...)...)...)...)
			if r.Code != cli.ExitCorrupt || r.Stdout != "" {
				t.Errorf("%s: snapshot %s: exit %d, stdout %q: want exit 3 and no output", what, key, r.Code, r.Stdout)
			}
			nv := memctlIn("", append([]string{"--json", "snapshot"}, append(args[:1:1], append([]string{"--no-verify", path}, args[1:]...)...)...)...)
			switch {
			case nv.Code == cli.ExitCorrupt:
			case nv.Code == want[key].Code:
				if nv.Stdout != want[key].Stdout {
					counts["--no-verify: different answer"]++
				}
			case nv.Code == cli.ExitNotFound:
				counts["--no-verify: not found"]++ // a damaged id or key table
			default:
				t.Errorf("%s: snapshot %s --no-verify: exit %d (%s), undamaged exit %d", what, key, nv.Code, nv.Stderr, want[key].Code)
			}
		}
		if h := memctlIn("", "snapshot", "hash", path); h.Code == 0 && h.Stdout == hash.Stdout && i%3 != 0 {
			t.Errorf("%s: damaged file hashes like the original", what)
		}
	}
	t.Logf("%d damaged files; verify named: %v", cases, counts)
}

// sectionOf extracts the section name from a snapshot error line.
func sectionOf(msg string) string {
	_, rest, ok := strings.Cut(msg, "section ")
	if !ok {
		return "?"
	}
	name, _, _ := strings.Cut(rest, " ")
	return strings.TrimSuffix(name, ":")
}
