package lmdbstore

import (
	"sync"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// Read transactions are reused rather than begun and aborted per View: a
// parked transaction is reset (it holds its reader slot but no snapshot) and
// renewed on the next use, and its adjacency scan cursors are renewed with
// it instead of being opened and closed each time (LMDB-NOTES: each cgo
// call costs a few hundred ns).
//
// Invariants:
//   - A transaction is live only between acquire and release, both inside
//     Store.withMap (the map held shared); a parked one is always reset, so
//     a map resize (which holds the map exclusively) never sees a live read
//     transaction of this process.
//   - A transaction whose Renew fails (MDB_MAP_RESIZED after another process
//     grew the map, or any other error) is aborted, never parked; the caller
//     retries with a new one after Store.recoverable.
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
		c, err := openChunkCursor(p.txn, dbi)
		if err != nil {
			return nil, err
		}
		*slot = c
	}
	return *slot, nil
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

// readPool is a mutex-guarded free list of parked read transactions (a
// sync.Pool could drop one without aborting it, leaking its reader slot
// until the finalizer runs).
type readPool struct {
	mu   sync.Mutex
	free []*pooledRead
}

// acquire returns a live read-only transaction with RawRead set: a parked
// one renewed, or a new one.
func (p *readPool) acquire(env *lmdb.Env) (*pooledRead, error) {
	p.mu.Lock()
	var rt *pooledRead
	if n := len(p.free); n > 0 {
		rt = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	}
	p.mu.Unlock()
	if rt != nil {
		rt.txn.Pooled = false
		if err := rt.txn.Renew(); err != nil {
			rt.abort()
			return nil, err
		}
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
	return &pooledRead{txn: txn}, nil
}

// release parks rt (reset) for reuse, or aborts it when reuse is not safe
// (ok false) or the pool is full.
func (p *readPool) release(rt *pooledRead, ok bool) {
	if !ok {
		rt.abort()
		return
	}
	rt.txn.Reset()
	rt.txn.Pooled = true
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

// drain aborts every parked transaction (Close, with the map held
// exclusively).
func (p *readPool) drain() {
	p.mu.Lock()
	free := p.free
	p.free = nil
	p.mu.Unlock()
	for _, rt := range free {
		rt.abort()
	}
}
