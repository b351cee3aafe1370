package fuzz

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/cli"
	"github.com/memctl/memctl/lmdbstore"
)

// Bad input beyond cli/badinput_test.go: sizes at and past every limit,
// hostile store paths, damaged or foreign store files, a newer schema, and
// a full disk. Each fails with one line on stderr and its documented exit
// code, and leaves the store's keyspaces byte-for-byte unchanged.
func TestBadInputStoreUnchanged(t *testing.T) {
	db := copyStore(t, fixture(t))
	before := rawDump(t, db)
	long := func(n int) string { return strings.Repeat("k", n) }
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		code  int
	}{
		{"node key over 4096 bytes", []string{"put-node", "a:" + long(4095)}, "", cli.ExitUsage},
		{"edge endpoint over 4096 bytes", []string{"put-edge", "a:1", "calls", "b:" + long(5000)}, "", cli.ExitUsage},
		{"kv key over the LMDB key limit", []string{"put-kv", "proj", "ns", long(600), "1"}, "", cli.ExitUsage},
		{"kv scope+ns+key just over 500 bytes", []string{"put-kv", long(200), long(200), long(99), "1"}, "", cli.ExitUsage},
		{"relation name over 64 bytes", []string{"rel", "add", long(65)}, "", cli.ExitUsage},
		{"relation name with a space", []string{"rel", "add", "two words"}, "", cli.ExitUsage},
		{"relation name not UTF-8", []string{"rel", "add", "r\xff"}, "", cli.ExitUsage},
		{"existing relation", []string{"rel", "add", "calls"}, "", cli.ExitUsage},
		{"weight NaN", []string{"put-edge", "a:1", "calls", "a:2", "--weight", "NaN"}, "", cli.ExitUsage},
		{"weight +Inf", []string{"put-edge", "a:1", "calls", "a:2", "--weight", "+Inf"}, "", cli.ExitUsage},
		{"weight overflowing float32", []string{"put-edge", "a:1", "calls", "a:2", "--weight", "1e300"}, "", cli.ExitUsage},
		{"at-rev beyond latest", []string{"get-out", "hub:h", "--at-rev", "18446744073709551615"}, "", cli.ExitNotFound},
		{"diff-since huge revision", []string{"diff-since", "18446744073709551615"}, "", cli.ExitNotFound},
		{"payload of 16 MiB invalid JSON", []string{"put-node", "a:1", "--payload", "[" + strings.Repeat("1,", 8<<20)}, "", cli.ExitUsage},
		{"payload nested 100k deep", []string{"put-node", "a:1", "--payload", strings.Repeat("[", 100000) + strings.Repeat("]", 100000)}, "", cli.ExitUsage},
		{"batch: 50k good lines then one bad", []string{"batch"}, strings.Repeat(`{"op":"put_node","key":"n:1"}`+"\n", 50000) + `{"op":"put_node","key":"n:\xff"}`, cli.ExitUsage},
		{"batch: one 8 MiB line that is not JSON", []string{"batch"}, strings.Repeat("x", 8<<20), cli.ExitUsage},
		{"batch: NUL bytes", []string{"batch"}, "\x00\x00\x00\n", cli.ExitUsage},
		{"batch: del of a node that does not exist", []string{"batch"}, `{"op":"put_node","key":"n:1"}` + "\n" + `{"op":"del_node","key":"n:nope"}`, cli.ExitNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := memctlIn(tc.stdin, append([]string{"--db", db}, tc.args...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %.300q", r.Code, tc.code, r.Stderr)
			}
			if tc.code != cli.ExitOK && (strings.Count(r.Stderr, "\n") != 1 || r.Stdout != "") {
				t.Errorf("want one stderr line and no output, got stdout %.200q stderr %.300q", r.Stdout, r.Stderr)
			}
			if tc.code != cli.ExitOK {
				if diff := before.diff(rawDump(t, db)); diff != "" {
					t.Errorf("failed command changed the store:\n%s", diff)
				}
			}
		})
	}
}

// A payload far larger than usual is stored and read back whole (the store
// has no payload limit of its own).
func TestBadInputHugePayloadRoundTrips(t *testing.T) {
	db := copyStore(t, fixture(t))
	size := 8 << 20 // 16 MiB of payload
	if raceEnabled {
		size = 1 << 20
	}
	payload := `{"blob":"` + strings.Repeat("ab", size) + `"}`
	if r := memctlIn("", "--db", db, "put-node", "big:1", "--payload", payload); r.Code != 0 {
		t.Fatalf("put-node %d MiB: exit %d: %s", len(payload)>>20, r.Code, r.Stderr)
	}
	r := memctlIn("", "--db", db, "--json", "get-node", "big:1")
	if r.Code != 0 || !strings.Contains(r.Stdout, payload) {
		t.Fatalf("get-node: exit %d, %d bytes of output", r.Code, len(r.Stdout))
	}
	if c := memctlIn("", "--db", db, "check"); c.Code != 0 {
		t.Fatalf("check: %s%s", c.Stdout, c.Stderr)
	}
}

// Hostile store paths and store files: one line, documented exit code, and
// nothing created where no store was. (A file as --db and a foreign
// data.mdb are in defects_test.go.)
func TestBadInputStorePaths(t *testing.T) {
	dir := t.TempDir()
	emptyDir := filepath.Join(dir, "empty")
	os.Mkdir(emptyDir, 0o755)
	newer := copyStore(t, fixture(t))
	rawPut(t, newer, "meta", []byte("schema"), binary.BigEndian.AppendUint64([]byte{1}, 99))
	noSchema := copyStore(t, fixture(t))
	rawPut(t, noSchema, "meta", []byte("schema"), nil)

	for _, tc := range []struct {
		name string
		db   string
		code int
	}{
		{"missing path", filepath.Join(dir, "nope"), cli.ExitUsage},
		{"empty directory", emptyDir, cli.ExitUsage},
		{"store of a newer schema", newer, cli.ExitCorrupt},
		{"store without a schema version", noSchema, cli.ExitCorrupt},
	} {
		for _, args := range [][]string{{"get-out", "hub:h"}, {"put-node", "a:1"}, {"check"}} {
			t.Run(tc.name+"/"+args[0], func(t *testing.T) {
				before := listTree(t, dir)
				r := memctlIn("", append([]string{"--db", tc.db}, args...)...)
				if r.Code != tc.code || strings.Count(r.Stderr, "\n") != 1 {
					t.Errorf("exit %d (want %d), stderr %q", r.Code, tc.code, r.Stderr)
				}
				if after := listTree(t, dir); after != before {
					t.Errorf("a failed command created or removed files:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// listTree names every file under dir except LMDB lock files (readers
// create and keep those).
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !strings.HasSuffix(p, "lock.mdb") {
			names = append(names, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return strings.Join(names, " ")
}

// A full disk, simulated with a 4 MiB tmpfs (root only; skipped otherwise):
// the write that does not fit fails with one line and exit 5, the store is
// unchanged by it and still passes check, and reads keep working.
func TestBadInputDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs")
	}
	if raceEnabled {
		t.Skip("dumps the whole store after each write (40 s under -race); make test's non-race pass runs it")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	db := filepath.Join(mnt, "db")
	if r := memctlIn("", "--db", db, "init"); r.Code != 0 {
		t.Fatalf("init: %s", r.Stderr)
	}
	payload := `"` + noise(256<<10) + `"`
	var failed run
	n := 0
	for ; n < 64; n++ {
		before := rawDump(t, db)
		r := memctlIn("", "--db", db, "put-kv", "s", "ns", fmt.Sprint("k", n), payload)
		if r.Code == 0 {
			continue
		}
		failed = r
		if diff := before.diff(rawDump(t, db)); diff != "" {
			t.Errorf("the write that did not fit changed the store:\n%s", diff)
		}
		break
	}
	if failed.Code == 0 {
		t.Fatalf("64 writes of 256 KiB fit in a 4 MiB tmpfs?")
	}
	if failed.Code != cli.ExitUnexpected || strings.Count(failed.Stderr, "\n") != 1 {
		t.Errorf("disk full: exit %d, stderr %q; want exit 5 and one line", failed.Code, failed.Stderr)
	}
	if r := memctlIn("", "--db", db, "get-kv", "s", "ns", "k0"); r.Code != 0 {
		t.Errorf("read after disk full: exit %d: %s", r.Code, r.Stderr)
	}
	if c := memctlIn("", "--db", db, "check"); c.Code != 0 {
		t.Errorf("check after disk full: %s%s", c.Stdout, c.Stderr)
	}
	t.Logf("disk full after %d writes of 256 KiB: %s", n, strings.TrimSpace(failed.Stderr))
}

// A store on a read-only file system (a tmpfs remounted read-only; root
// only, skipped otherwise): reads work, every write fails with one line and
// exit 2, and the store is unchanged.
func TestBadInputReadOnlyFilesystem(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	db := filepath.Join(mnt, "db")
	for _, args := range [][]string{{"init"}, {"put-edge", "a:1", "calls", "a:2"}, {"put-kv", "s", "ns", "k", "1"}} {
		if r := memctlIn("", append([]string{"--db", db}, args...)...); r.Code != 0 {
			t.Fatalf("%v: %s", args, r.Stderr)
		}
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	before := rawDump(t, db)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"get-out", "a:1"}, cli.ExitOK},
		{[]string{"get-kv", "s", "ns", "k"}, cli.ExitOK},
		{[]string{"check"}, cli.ExitOK},
		{[]string{"put-edge", "a:1", "calls", "a:3"}, cli.ExitUsage},
		{[]string{"put-kv", "s", "ns", "k2", "2"}, cli.ExitUsage},
		{[]string{"batch"}, cli.ExitUsage},
		{[]string{"compact"}, cli.ExitUsage},
		{[]string{"rel", "add", "owns"}, cli.ExitUsage},
	} {
		stdin := ""
		if tc.args[0] == "batch" {
			stdin = `{"op":"put_node","key":"x:1"}`
		}
		r := memctlIn(stdin, append([]string{"--db", db}, tc.args...)...)
		if r.Code != tc.code || (tc.code != 0 && strings.Count(r.Stderr, "\n") != 1) {
			t.Errorf("%v on a read-only file system: exit %d (want %d), stderr %q", tc.args, r.Code, tc.code, r.Stderr)
		}
	}
	if diff := before.diff(rawDump(t, db)); diff != "" {
		t.Errorf("store changed:\n%s", diff)
	}
}

// A full map (Options.MaxMapSize; the CLI has no flag for it): the write
// that does not fit fails with ErrMapFull, changes nothing, and the store
// stays readable and passes check.
func TestBadInputMapFull(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	s, err := lmdbstore.Init(db, lmdbstore.Options{MapSize: 1 << 20, MaxMapSize: 2 << 20, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	payload := json.RawMessage(`"` + noise(64<<10) + `"`)
	var full error
	n := 0
	for ; n < 100 && full == nil; n++ {
		_, full = s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
			return tx.PutKV(lmdbstore.KVPut{Scope: "s", Namespace: "ns", Key: fmt.Sprint("k", n), Payload: payload})
		})
	}
	s.Close()
	if !errors.Is(full, lmdbstore.ErrMapFull) {
		t.Fatalf("after %d writes of 64 KiB into a 2 MiB map: %v, want ErrMapFull", n, full)
	}
	if r := memctlIn("", "--db", db, "get-kv", "s", "ns", "k0"); r.Code != 0 {
		t.Errorf("read after a full map: exit %d: %s", r.Code, r.Stderr)
	}
	if r := memctlIn("", "--db", db, "get-kv", "s", "ns", fmt.Sprint("k", n-1)); r.Code != cli.ExitNotFound {
		t.Errorf("the write that did not fit is readable: exit %d", r.Code)
	}
	if c := memctlIn("", "--db", db, "check"); c.Code != 0 {
		t.Errorf("check after a full map: %s%s", c.Stdout, c.Stderr)
	}
	t.Logf("map full after %d writes of 64 KiB: %v", n-1, full)
}
