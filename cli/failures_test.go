package cli

// Issue #26.5: failures name their cause — a full disk, a permission, a
// telemetry file, a missing snapshot — with one exit code each, and leave
// the store as it was.

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A missing snapshot file is bad input (exit 2), not an I/O error (5).
func TestMissingSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.snap")
	for _, args := range [][]string{
		{"snapshot", "info", missing},
		{"snapshot", "verify", missing},
		{"snapshot", "hash", missing},
		{"snapshot", "get-node", missing, "a:1"},
		{"snapshot", "diff", missing, missing},
		{"--db", filepath.Join(dir, "db"), "import", missing},
	} {
		wantFailure(t, memctl(t, args...), ExitUsage, "no such file or directory")
	}
}

// An unwritable --telemetry path warns once on stderr and never fails the
// command (SPEC §5): reads answer, writes commit.
func TestTelemetryUnwritable(t *testing.T) {
	db := newStore(t)
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "events.jsonl")
	r := memctl(t, "--db", db, "--telemetry", bad, "put-node", "a:1")
	if r.Code != 0 || r.Stdout != "rev 1\n" {
		t.Fatalf("put-node with a bad --telemetry: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.HasPrefix(r.Stderr, "memctl: warning: telemetry off: ") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("stderr %q: want one warning line", r.Stderr)
	}
	r = runEnv(t, "", map[string]string{envTelemetry: t.TempDir()}, "--db", db, "get-node", "a:1") // a directory
	if r.Code != 0 || !strings.Contains(r.Stdout, "a:1") || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "telemetry off") {
		t.Errorf("get-node with MEMCTL_TELEMETRY a directory: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	// A file that fails every write (a full disk): one warning, however
	// many events.
	if _, err := os.Stat("/dev/full"); err == nil {
		r = runEnv(t, `{"op":"put_node","key":"b:1"}`+"\n"+`{"op":"put_node","key":"b:2"}`+"\n", nil, "--db", db, "--telemetry", "/dev/full", "batch")
		if r.Code != 0 || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "no space left on device") {
			t.Errorf("batch with --telemetry /dev/full: exit %d, stderr %q", r.Code, r.Stderr)
		}
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory, or skips the
// test (mounting needs root).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full file system needs a tmpfs mount (root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// fill leaves about leave bytes free on the file system of dir.
func fill(t *testing.T, dir string, leave int64) {
	t.Helper()
	f := filepath.Join(dir, "filler")
	_ = os.Remove(f)
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	n := int64(st.Bavail)*int64(st.Bsize) - leave
	if n > 0 {
		// Write errors are fine: the point is a full disk.
		_ = os.WriteFile(f, make([]byte, n), 0o644)
	}
}

// ENOSPC is "disk full" (exit 5), in init and in a commit, and a failed
// command leaves the store (or its absence) as it was. init on a full disk
// used to die of a SIGBUS reported as corruption (exit 3); a commit cut
// short used to be "mdb_txn_commit: input/output error".
func TestDiskFull(t *testing.T) {
	fs := mountTmpfs(t, 2<<20)
	for _, leave := range []int64{0, 8 << 10, 24 << 10, 40 << 10} {
		db := filepath.Join(fs, "db")
		fill(t, fs, leave)
		r := memctl(t, "--db", db, "init")
		if r.Code == 0 {
			os.RemoveAll(db) // it fit
			continue
		}
		wantFailure(t, r, ExitUnexpected, "disk full")
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("leave %d: failed init left %s behind (%v)", leave, db, err)
		}
		os.RemoveAll(db)
	}
	os.Remove(filepath.Join(fs, "filler"))
	os.RemoveAll(filepath.Join(fs, "db"))

	db := filepath.Join(fs, "db")
	ok(t, "--db", db, "init")
	ok(t, "--db", db, "put-node", "a:1")
	before := fingerprint(t, db)
	// Incompressible (payloads are stored compressed): 60 KiB of base64.
	raw := make([]byte, 45000)
	rand.Read(raw)
	big := fmt.Sprintf(`"%s"`, base64.StdEncoding.EncodeToString(raw))
	for _, leave := range []int64{0, 4 << 10, 12 << 10, 28 << 10} {
		fill(t, fs, leave)
		r := memctl(t, "--db", db, "put-node", "b:1", "--payload", big)
		wantFailure(t, r, ExitUnexpected, "disk full")
		os.Remove(filepath.Join(fs, "filler"))
		if got := fingerprint(t, db); got != before {
			t.Fatalf("leave %d: a failed write changed the store", leave)
		}
		if r := memctl(t, "--db", db, "check"); r.Code != 0 {
			t.Fatalf("leave %d: check after a failed write: %s%s", leave, r.Stdout, r.Stderr)
		}
	}
	ok(t, "--db", db, "put-node", "b:1", "--payload", big)
}

// asOtherUser runs the memctl binary bin as another user (uid and gid
// 65534, nobody) when the test runs as root, else as this user.
func asOtherUser(bin string, args ...string) result {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), envNoSync+"=1")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errb.WriteString(err.Error())
	}
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// A store one cannot write — another user's, or a read-only directory
// without lock.mdb — is read by every read command; writes fail with exit
// 2 naming the permission, like every other permission problem (an
// unreadable data.mdb used to be exit 5), and change nothing.
func TestUnwritableStore(t *testing.T) {
	bin := buildMemctl(t)
	top := t.TempDir()
	db := filepath.Join(top, "db")
	ok(t, "--db", db, "init")
	ok(t, "--db", db, "put-node", "file:a.go")
	ok(t, "--db", db, "put-edge", "file:a.go", "imports", "file:b.go")
	ok(t, "--db", db, "put-kv", "repo", "decisions", "errors", `{"rule":"wrap"}`)
	before := fingerprint(t, db)
	out := t.TempDir()
	// The other user must reach the binary, the store and the output dir.
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), top, filepath.Dir(top), out, filepath.Dir(out)} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() != 0 {
		// Not root: make the store unwritable to this user instead (a
		// read-only directory, and no lock.mdb to open).
		if err := os.Remove(filepath.Join(db, "lock.mdb")); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(db, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(db, 0o755) })
	}
	reads := [][]string{
		{"get-node", "file:a.go"}, {"get-out", "file:a.go"}, {"get-in", "file:b.go"},
		{"get-kv", "repo", "decisions", "errors"}, {"list-kv", "repo", "decisions"},
		{"rel", "list"}, {"diff-since", "0"}, {"check"}, {"orphans"},
		{"--json", "stats"}, {"context", "file:a.go", "--no-refresh"},
	}
	for _, args := range reads {
		want := ok(t, append([]string{"--db", db}, args...)...)
		r := asOtherUser(bin, append([]string{"--db", db}, args...)...)
		if r.Code != 0 || r.Stdout != want {
			t.Errorf("%v as another user: exit %d, stderr %q\nstdout %q\nwant %q", args, r.Code, r.Stderr, r.Stdout, want)
		}
	}
	snap := filepath.Join(out, "g.snap")
	if r := asOtherUser(bin, "--db", db, "export", "--out", snap); r.Code != 0 {
		t.Errorf("export as another user: exit %d, stderr %q", r.Code, r.Stderr)
	}
	for _, args := range [][]string{
		{"put-node", "x:1"}, {"put-edge", "a", "calls", "b"}, {"compact"}, {"rel", "add", "owns"},
	} {
		r := asOtherUser(bin, append([]string{"--db", db}, args...)...)
		wantFailure(t, r, ExitUsage, "permission denied")
	}
	if got := fingerprint(t, db); got != before {
		t.Errorf("failed writes changed the store")
	}
	if os.Geteuid() == 0 {
		// data.mdb itself unreadable: the same exit code as the rest.
		if err := os.Chmod(filepath.Join(db, "data.mdb"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"stats"}, {"get-node", "file:a.go"}, {"put-node", "x:1"}} {
			wantFailure(t, asOtherUser(bin, append([]string{"--db", db}, args...)...), ExitUsage, "permission denied")
		}
	}
}
