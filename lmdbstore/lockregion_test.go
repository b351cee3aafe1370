package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The lock region LMDB keeps in lock.mdb (SPEC.md §2, "Opening and closing"): the
// first process to open a store takes an exclusive lock on its byte 0,
// writes the region (magic, mutexes, the last transaction id set to 0),
// reads the meta pages and only then records the last transaction id and
// shares the lock. A process killed inside that window leaves a region
// whose magic is valid and whose transaction id is 0. These tests put a
// store in that state from outside, the way such a death leaves it, and
// check that the next writer loses nothing.

// lockRegionTxnIDOffset is where LMDB keeps the last transaction id in
// lock.mdb on linux/amd64 (MDB_txbody: magic and format, 4 bytes each, the
// reader mutex, a 40-byte pthread_mutex_t, then the id).
const lockRegionTxnIDOffset = 48

// storeWithRevisions makes a store with a few revisions and closes it.
func storeWithRevisions(t *testing.T) (dir string, lastTxn uint64) {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("writes LMDB's lock region at its linux/amd64 offsets")
	}
	dir = t.TempDir()
	s, err := Init(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
			return tx.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "b" + string(rune('0'+i))})
		}); err != nil {
			t.Fatal(err)
		}
	}
	info, err := s.env.Info()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return dir, uint64(info.LastTxnID)
}

// holdRegion holds what a process inside LMDB's open or close holds: the
// exclusive lock on lock.mdb's byte 0 (and, with openers, the byte
// memctl's openers and closers lock around LMDB's), and writes the region
// as that process has left it so far (edit). release closes the file,
// which drops every lock at once, as the kernel does when the process
// dies (or, closing, as LMDB's close does).
func holdRegion(t *testing.T, dir string, openers bool, edit map[int64][]byte) (release func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "lock.mdb"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	lock := func(start, n int64) {
		fl := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: start, Len: n}
		if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &fl); err != nil {
			t.Fatalf("lock %d: %v", start, err)
		}
	}
	if openers {
		lock(openLockOffset, 1)
	}
	lock(0, 1)
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || binary.LittleEndian.Uint32(magic[:]) != lockRegionMagic {
		t.Fatalf("lock.mdb magic %x, %v: not the layout this test knows", magic, err)
	}
	for off, b := range edit {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	return func() { f.Close() }
}

// waitBlockedOnLock waits until process pid waits for a POSIX lock
// (/proc/locks lists a waiter as "-> POSIX ... pid ..."): a sleep of a
// few hundred milliseconds let a child started slowly (a race build on a
// loaded machine) open the store only after the region was released,
// which is the case the tests do not test.
func waitBlockedOnLock(t *testing.T, pid int) {
	t.Helper()
	want := strconv.Itoa(pid)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Skipf("no /proc/locks: %v", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 6 && f[1] == "->" && f[2] == "POSIX" && f[5] == want {
				return
			}
		}
	}
	t.Fatalf("process %d never waited for a lock", pid)
}

// dyingOpener: an opener inside the window, the region's transaction id
// already 0.
func dyingOpener(t *testing.T, dir string, openers bool) (release func()) {
	return holdRegion(t, dir, openers, map[int64][]byte{lockRegionTxnIDOffset: make([]byte, 8)})
}

// Where glibc marks a destroyed mutex (its kind, -1) in LMDB's region on
// linux/amd64: the reader mutex at 8, the writer mutex in the next 64-byte
// cache line; a pthread_mutex_t's kind is its fifth int.
const (
	rmutexKindOffset = 8 + 16
	wmutexKindOffset = 64 + 16
)

// reopenLastTxn opens the store read-only (Open checks its meta pages,
// closed with the test) and returns it with its last transaction id.
func reopenLastTxn(t *testing.T, dir string) (*Store, uint64) {
	t.Helper()
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open afterwards: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	info, err := s.env.Info()
	if err != nil {
		t.Fatal(err)
	}
	return s, uint64(info.LastTxnID)
}

// lockRegionMagic is MDB_MAGIC, the first word of a written lock region.
const lockRegionMagic = 0xBEEFC0DE

// TestOpenerDiedInsideLMDBOpen: a memctl process died between writing the
// lock region and recording the last transaction id, while another was
// already waiting to open the store. The waiter's write must land and be
// read back, and the meta pages must stay consecutive.
func TestOpenerDiedInsideLMDBOpen(t *testing.T) {
	dir, last := storeWithRevisions(t)
	writerLands(t, dir, last, dyingOpener(t, dir, true))
}

// writerLands starts a writer process while the region is held, releases
// it once the writer waits to open, and checks that the write landed: the
// last transaction is the one after last, and the writer's edge reads back.
func writerLands(t *testing.T, dir string, last uint64, release func()) {
	t.Helper()
	cmd := child(t, "put-one", dir, "late")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitBlockedOnLock(t, cmd.Process.Pid) // the child is waiting to open
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	s, got := reopenLastTxn(t, dir)
	if got != last+1 {
		t.Errorf("last transaction %d, want %d (the one before, plus the writer's)", got, last+1)
	}
	if err := s.View(func(r *ReadTxn) error {
		_, err := r.GetEdge("p", "calls", "dlate", At{})
		return err
	}); err != nil {
		t.Errorf("the writer's edge: %v", err)
	}
}

// TestWriteRefusedOnStaleLockRegion: a process that does not take memctl's
// opening lock (another LMDB tool) left the region half written while a
// memctl writer waited on LMDB's own lock. The writer must refuse to
// commit (a transaction numbered from 0 would hide itself, or older
// revisions, behind the newer meta page) and leave the store as it was.
func TestWriteRefusedOnStaleLockRegion(t *testing.T) {
	dir, last := storeWithRevisions(t)
	release := dyingOpener(t, dir, false)
	cmd := child(t, "put-one", dir, "late")
	cmd.Stderr = nil
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitBlockedOnLock(t, cmd.Process.Pid)
	release()
	cmd.Wait()
	msg := output.Bytes()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() == 0 {
		t.Fatalf("the write was accepted on a lock region numbered from 0 (output %q)", msg)
	}
	if !bytes.Contains(msg, []byte("corrupt lock.mdb: the lock region numbers this write transaction 1")) {
		t.Errorf("the writer said %q, want the lock region named", msg)
	}
	s, got := reopenLastTxn(t, dir)
	if got != last {
		t.Errorf("last transaction %d, want %d (nothing written)", got, last)
	}
	if err := s.View(func(r *ReadTxn) error {
		_, err := r.GetEdge("a", "calls", "b2", At{})
		return err
	}); err != nil {
		t.Errorf("an edge written before: %v", err)
	}
	if err := s.View(func(r *ReadTxn) error {
		_, err := r.GetEdge("p", "calls", "dlate", At{})
		return err
	}); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused edge: %v, want not found", err)
	}
}

// TestOpenerWaitsForTheLastCloser: the last process to close a store
// destroys the region's mutexes under the exclusive lock on byte 0; an
// opener that took the region then (LMDB lets it once that lock drops)
// would lock destroyed mutexes. Closing under memctl's opening lock, the
// opener waits for the close to finish, then writes the region again, and
// its write lands.
func TestOpenerWaitsForTheLastCloser(t *testing.T) {
	dir, last := storeWithRevisions(t)
	destroyed := []byte{0xff, 0xff, 0xff, 0xff}
	writerLands(t, dir, last, holdRegion(t, dir, true, map[int64][]byte{rmutexKindOffset: destroyed, wmutexKindOffset: destroyed}))
}
