package lmdbstore

// Opening and closing an environment, one process at a time (SPEC.md §2,
// "Opening and closing").
//
// LMDB sets up lock.mdb's shared region in the first process to open the
// store: under an exclusive fcntl lock on byte 0 it writes the region —
// magic, mutexes, and the last transaction id as 0 — then reads the meta
// pages, records the real last transaction id and only then shares the
// lock. A process killed inside that window leaves a region with a valid
// magic and a transaction id of 0, and a process already waiting on byte 0
// takes it as it is: its first write is numbered 1, lands on meta page 1
// beside a newer meta page 0 and is never read (an acknowledged write
// lost; with the newer page on 1, older revisions come back). Closing has
// the mirror race: the last process destroys the mutexes under the same
// lock while an opener waits to use them.
//
// So every memctl process opens and closes its environment holding a
// write lock on a byte of lock.mdb that LMDB never locks (openLockOffset,
// above every pid LMDB locks for its reader liveness checks), taken on a
// file descriptor of its own. POSIX record locks belong to the process and
// all of a process's locks on a file go when any descriptor of that file
// is closed, as at its death: the opening lock and LMDB's byte 0 are
// released in one step, so a waiting opener finds the region either
// finished or free to write again, never half written. The descriptor
// stays open until the environment is closed (closing it earlier would
// drop LMDB's locks too), and the opening lock is released, not closed,
// once LMDB has opened.
//
// A writer also checks, in every write transaction, that the transaction
// LMDB numbered follows the newest meta page (checkTxnID): a region left
// half written by a process that does not take this lock (another LMDB
// tool) is refused, with nothing written, rather than trusted.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// openLockOffset is the byte of lock.mdb memctl's openers lock: beyond
// every pid (LMDB locks byte pid of each process with readers; Linux pids
// stay below 2^22) and beyond the file's end, which a record lock allows.
const openLockOffset = 1 << 32

// lockFileSize is lock.mdb's size as LMDB makes it with maxReaders slots:
// the region's header (192 bytes on linux/amd64) and a 64-byte slot per
// reader after the first.
const lockFileSize = 192 + (maxReaders-1)*64

// openLock is a store's descriptor of lock.mdb, held from before LMDB
// opens the environment until after it closes it.
type openLock struct{ f *os.File }

// lockOpening opens dir/lock.mdb (creating it, with its blocks allocated)
// and waits for the opening lock. A lock file this process cannot open for
// writing (another user's store, a read-only directory) gives a nil
// openLock and no error: reads then open the store without LMDB's locks
// (openEnv), and there is no region to protect.
//
// Allocating lock.mdb's blocks before LMDB maps it matters on a full file
// system: LMDB sizes a new lock file with ftruncate (no blocks) and writes
// it through the map, and that write is a SIGBUS, which nothing can tell
// from a damaged page. Allocating first turns it into ENOSPC.
func lockOpening(dir string) (*openLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock.mdb"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil
	}
	// On a lock file LMDB already sized and wrote this allocates nothing.
	err = syscall.Fallocate(int(f.Fd()), 0, 0, lockFileSize)
	if errno := osErrno(err); errno == syscall.ENOSPC || errno == syscall.EDQUOT {
		f.Close()
		return nil, fmt.Errorf("%w: allocating %s: %v (nothing was written)", ErrDiskFull, f.Name(), err)
	} // EOPNOTSUPP and the like: LMDB sizes it as before
	l := &openLock{f: f}
	if err := l.setLock(syscall.F_WRLCK); err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: waiting for other processes to finish opening or closing it: %w", dir, err)
	}
	return l, nil
}

// setLock sets the opening lock to typ (F_WRLCK waits for it, F_UNLCK
// releases it), retrying when a signal interrupts the wait.
func (l *openLock) setLock(typ int16) error {
	fl := syscall.Flock_t{Type: typ, Whence: 0, Start: openLockOffset, Len: 1}
	for {
		err := syscall.FcntlFlock(l.f.Fd(), syscall.F_SETLKW, &fl)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// opened releases the opening lock once LMDB has opened the environment;
// the descriptor stays open (closing it would drop LMDB's locks).
func (l *openLock) opened() {
	if l != nil {
		_ = l.setLock(syscall.F_UNLCK)
	}
}

// abandon closes the descriptor of an open that failed (LMDB closed what
// it had opened), which releases the opening lock.
func (l *openLock) abandon() {
	if l != nil {
		l.f.Close()
	}
}

// closeEnv closes env holding the opening lock, then the descriptor.
// LMDB's close drops every lock of this process on lock.mdb, the opening
// lock with it, in the same step as its own.
func (l *openLock) closeEnv(env *lmdb.Env) {
	if l == nil {
		env.Close()
		return
	}
	_ = l.setLock(syscall.F_WRLCK) // on failure, close as LMDB alone would
	env.Close()
	l.f.Close()
}

// checkTxnID verifies, inside a write transaction (the writer's mutex
// held, so the meta pages cannot change), that LMDB numbered it after the
// newest meta page. A lock region whose last transaction id is behind the
// data file numbers transactions from there: committing would write a
// meta page older than the one it sits beside.
func checkTxnID(env *lmdb.Env, txn *lmdb.Txn) error {
	info, err := env.Info()
	if err != nil {
		return err
	}
	if got, want := uint64(txn.ID()), uint64(info.LastTxnID)+1; got != want {
		return &CorruptionError{"lock.mdb", nil, fmt.Sprintf(
			"the lock region numbers this write transaction %d, the data file's newest meta page is transaction %d "+
				"(a process died while opening the store, or a tool other than memctl left it so); "+
				"nothing was written; it is repaired when every process using the store has closed it", got, want-1)}
	}
	return nil
}
