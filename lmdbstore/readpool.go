package lmdbstore

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// Read transactions are reused rather than begun and aborted per View: a
// parked transaction is reset (it holds its reader slot but no snapshot) and
// renewed on its first use after acquire, and its adjacency scan cursors are
// renewed with it instead of being opened and closed each time (LMDB-NOTES:
// each cgo call costs a few hundred ns).
//
// The renew is lazy: acquire only marks the transaction stale. The first
// read renews it, through live (a cgo call of its own) or, when the first
// read is an adjacency scan, inside the scan's cgo call (chunkscan.go), so a
// get-out pays two crossings (scan, reset), not three; a View that reads
// nothing pays none.
//
// Invariants:
//   - A transaction is live only between acquire and release, both inside
//     Store.withMap (the map held shared); a parked one is always reset, so
//     a map resize (which holds the map exclusively) never sees a live read
//     transaction of this process.
//   - A transaction whose renew fails (MDB_MAP_RESIZED after another process
//     grew the map, or any other error) is aborted, never parked: the error
//     is kept (renewErr), every later read of the View fails, the View
//     returns that error, and the caller retries with a new transaction
//     after Store.recoverable. Only what fn did before its first read is
//     repeated.
//   - A transaction whose user panicked or exited the goroutine is aborted,
//     not parked.
//   - Close drains the pool (aborting every parked transaction) holding the
//     map exclusively, after which no view begins.

// maxParkedReaders bounds the pool; transactions released beyond it are
// aborted (each holds one of the environment's reader slots).
const maxParkedReaders = 64

// pooledRead is a read-only transaction with its lazily opened scan cursors.
type pooledRead struct {
	txn *lmdb.Txn
	// stale: acquired but not yet renewed (txn is still reset); renewErr:
	// the renew failed (the transaction is unusable and must be aborted).
	stale    bool
	renewErr error
	// txnID is lmdb-go's cached transaction id (Txn.id), cleared when the
	// scan renews the transaction in C as lmdb-go's Renew clears it; nil
	// when lmdb-go's layout is not the pinned one (the scan then leaves
	// the renew to live).
	txnID *uintptr
	// out and in are the adjacency scan cursors, nil until first used; a
	// renewed transaction marks them for a renew at their next seek
	// (chunkscan.go does it in the same cgo call).
	out, in *chunkCursor
	// nb is Neighbours' scratch, reused across uses.
	nb neighbourScratch
	// reader is the ReadTxn View hands out over txn (valid only until the
	// View returns, like the transaction itself).
	reader ReadTxn
}

// cursor returns the out or in scan cursor of the transaction.
func (p *pooledRead) cursor(out bool, dbi lmdb.DBI) (*chunkCursor, error) {
	slot := &p.in
	if out {
		slot = &p.out
	}
	if *slot == nil {
		if err := p.live(); err != nil {
			return nil, err
		}
		c, err := openChunkCursor(p.txn, dbi)
		if err != nil {
			return nil, err
		}
		*slot = c
	}
	return *slot, nil
}

// live renews the transaction if acquire left it stale.
func (p *pooledRead) live() error {
	if !p.stale {
		return p.renewErr
	}
	p.stale = false
	if err := p.txn.Renew(); err != nil {
		p.renewErr = err
		return err
	}
	return nil
}

// renewedInC records that the scan's cgo call renewed the transaction.
func (p *pooledRead) renewedInC() {
	p.stale = false
	*p.txnID = 0
}

// abort closes the cursors and ends the transaction for good.
func (p *pooledRead) abort() {
	if p.out != nil {
		p.out.close()
	}
	if p.in != nil {
		p.in.close()
	}
	p.txn.Pooled = false
	p.txn.Abort()
}

// readPool holds parked read transactions: one in an atomic slot (a
// single-threaded reader takes and returns it with one atomic operation
// each, where the mutex costs two) and the rest in a mutex-guarded free
// list (a sync.Pool could drop one without aborting it, leaking its reader
// slot until the finalizer runs).
type readPool struct {
	last atomic.Pointer[pooledRead]
	mu   sync.Mutex
	free []*pooledRead
}

// acquire returns a read-only transaction with RawRead set, to be renewed
// on first use (pooledRead.live, or the scan): a parked one, or a new one
// (live already).
func (p *readPool) acquire(env *lmdb.Env) (*pooledRead, error) {
	rt := p.last.Swap(nil)
	if rt == nil {
		p.mu.Lock()
		if n := len(p.free); n > 0 {
			rt = p.free[n-1]
			p.free[n-1] = nil
			p.free = p.free[:n-1]
		}
		p.mu.Unlock()
	}
	if rt != nil {
		rt.txn.Pooled = false
		rt.stale = true
		if rt.out != nil {
			rt.out.renew = true
		}
		if rt.in != nil {
			rt.in.renew = true
		}
		return rt, nil
	}
	txn, err := env.BeginTxn(nil, lmdb.Readonly)
	if err != nil {
		return nil, err
	}
	txn.RawRead = true
	rt = &pooledRead{txn: txn}
	if f := reflect.ValueOf(txn).Elem().FieldByName("id"); f.IsValid() && f.Kind() == reflect.Uintptr {
		rt.txnID = (*uintptr)(unsafe.Pointer(f.UnsafeAddr()))
	}
	return rt, nil
}

// release parks rt (reset) for reuse, or aborts it when reuse is not safe
// (ok false, or its renew failed) or the pool is full. A transaction never
// renewed since acquire is still reset.
func (p *readPool) release(rt *pooledRead, ok bool) {
	if !ok || rt.renewErr != nil {
		rt.abort()
		return
	}
	if !rt.stale {
		rt.txn.Reset()
	}
	rt.stale = false
	rt.txn.Pooled = true
	if p.last.CompareAndSwap(nil, rt) {
		return
	}
	p.mu.Lock()
	if len(p.free) < maxParkedReaders {
		p.free = append(p.free, rt)
		rt = nil
	}
	p.mu.Unlock()
	if rt != nil {
		rt.abort()
	}
}

// parked is how many transactions are parked.
func (p *readPool) parked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.free)
	if p.last.Load() != nil {
		n++
	}
	return n
}

// drain aborts every parked transaction (Close, with the map held
// exclusively).
func (p *readPool) drain() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	if rt := p.last.Swap(nil); rt != nil {
		free = append(free, rt)
	}
	for _, rt := range free {
		rt.abort()
	}
}
