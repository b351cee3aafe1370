package lmdbstore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// Read transactions are reused rather than begun and aborted per View, and
// their adjacency scan cursors with them (LMDB-NOTES: each cgo call costs a
// few hundred ns). A View's transaction comes from the pool stale and is
// refreshed to the latest committed snapshot on its first read, through
// live (a cgo call of its own) or, when that read is an adjacency scan,
// inside the scan's cgo call (chunkscan.go); a View that reads nothing pays
// no crossing.
//
// The transaction in the pool's slot is parked live: not reset, still
// holding the snapshot its last View read. Refreshing it compares that
// snapshot with the newest meta page: with no commit since, it is the
// snapshot a renew would give, and it is kept (with its cursors, and the
// named-database records LMDB re-reads after every renew); otherwise it is
// reset and renewed. A get-out thus pays one cgo crossing, where reset and
// renew around it cost two more. A live transaction is reset within
// parkLiveFor of parking (a timer), so an idle process does not keep
// writers from reusing the pages freed after its snapshot.
//
// Invariants:
//   - Acquire, release, the timer's reset and every use of a transaction
//     happen inside Store.withMap (the map held shared). Whatever holds
//     the map exclusively to resize it first resets the parked live
//     transaction (resetParked), so a resize never sees a live read
//     transaction of this process; Close drains the pool (aborting every
//     parked transaction), after which no view begins.
//   - Only the slot holds a live transaction; the free list holds reset
//     ones.
//   - A transaction whose renew fails (MDB_MAP_RESIZED after another process
//     grew the map, or any other error) is aborted, never parked: the error
//     is kept (renewErr), every later read of the View fails, the View
//     returns that error, and the caller retries with a new transaction
//     after Store.recoverable. Only what fn did before its first read is
//     repeated.
//   - A transaction whose user panicked or exited the goroutine is aborted,
//     not parked.

// maxParkedReaders bounds the pool; transactions released beyond it are
// aborted (each holds one of the environment's reader slots).
const maxParkedReaders = 64

// parkLiveFor is how long a parked transaction may hold its snapshot.
const parkLiveFor = 5 * time.Millisecond

// pooledRead is a read-only transaction with its lazily opened scan cursors.
type pooledRead struct {
	txn *lmdb.Txn
	// h are the C handles of txn and its environment (chunkscan.go), zero
	// when lmdb-go's layout is not the pinned one: then the transaction is
	// never parked live, and live renews it through lmdb-go.
	h txnHandles
	// reset: the transaction holds no snapshot (reset, or never renewed
	// since); stale: acquired and not yet refreshed; renewErr: the
	// refresh failed (the transaction is unusable and must be aborted).
	reset    bool
	stale    bool
	renewErr error
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

// live refreshes the transaction if acquire left it stale.
func (p *pooledRead) live() error {
	if !p.stale {
		return p.renewErr
	}
	p.stale = false
	if p.h.txn == 0 {
		if !p.reset {
			p.txn.Reset() // not reached: without handles nothing is parked live
		}
		if err := p.txn.Renew(); err != nil {
			p.renewErr = err
			return err
		}
		p.reset = false
		p.renewed()
		return nil
	}
	renewed, err := p.h.refresh(!p.reset)
	if err != nil {
		p.renewErr = err
		return err
	}
	p.reset = false
	if renewed {
		p.renewed()
	}
	return nil
}

// refreshedInC records what the scan's cgo call did: refreshed the
// transaction, and renewed it (renewed) or kept its snapshot. The caller
// then clears the scanning cursor's renew if the call succeeded (it
// renewed that cursor too).
func (p *pooledRead) refreshedInC(renewed bool) {
	p.stale, p.reset = false, false
	if renewed {
		p.renewed()
	}
}

// renewed marks what a renew of the transaction invalidates: lmdb-go's
// cached transaction id (its Renew clears it too) and the cursors.
func (p *pooledRead) renewed() {
	if p.h.id != nil {
		*p.h.id = 0
	}
	if p.out != nil {
		p.out.renew = true
	}
	if p.in != nil {
		p.in.renew = true
	}
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

// readPool holds parked read transactions: one in an atomic slot, maybe
// live (a single-threaded reader takes and returns it with one atomic
// operation each, where the mutex costs two), and the rest reset in a
// mutex-guarded free list (a sync.Pool could drop one without aborting it,
// leaking its reader slot until the finalizer runs).
type readPool struct {
	last atomic.Pointer[pooledRead]
	mu   sync.Mutex
	free []*pooledRead
	// expiry resets the slot's live transaction parkLiveFor after it was
	// armed (armed: a run is pending); nil until start.
	expiry *time.Timer
	armed  atomic.Bool
	// liveFor is parkLiveFor (tests hold it longer).
	liveFor time.Duration
}

// start arms the pool's timer: it calls hold with the reset of a parked
// live transaction (hold runs it with the map held shared, unless the
// store is closing).
func (p *readPool) start(hold func(func())) {
	p.liveFor = parkLiveFor
	p.expiry = time.AfterFunc(time.Hour, func() {
		p.armed.Store(false) // a release after this arms the timer again
		hold(p.resetParked)
	})
	p.expiry.Stop()
}

// acquire returns a read-only transaction with RawRead set, stale: a parked
// one, or a new one.
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
		return rt, nil
	}
	txn, err := env.BeginTxn(nil, lmdb.Readonly)
	if err != nil {
		return nil, err
	}
	txn.RawRead = true
	return &pooledRead{txn: txn, h: handlesOf(env, txn)}, nil // live, on the latest snapshot
}

// release parks rt for reuse — live in the slot when it is free, reset in
// the list otherwise — or aborts it when reuse is not safe (ok false, or
// its refresh failed) or the pool is full.
func (p *readPool) release(rt *pooledRead, ok bool) {
	if !ok || rt.renewErr != nil {
		rt.abort()
		return
	}
	rt.stale = false
	rt.txn.Pooled = true
	if !rt.reset && (rt.h.txn == 0 || p.expiry == nil) {
		rt.txn.Reset()
		rt.reset = true
	}
	live := !rt.reset // read before the slot publishes rt to the timer
	if p.last.CompareAndSwap(nil, rt) {
		if live && !p.armed.Load() && p.armed.CompareAndSwap(false, true) {
			p.expiry.Reset(p.liveFor)
		}
		return
	}
	p.parkReset(rt)
}

// parkReset resets rt if live and puts it in the free list, or aborts it
// if the list is full.
func (p *readPool) parkReset(rt *pooledRead) {
	if !rt.reset {
		rt.txn.Reset()
		rt.reset = true
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

// resetParked resets the slot's transaction if it is live (the timer, and
// a map resize before it resizes).
func (p *readPool) resetParked() {
	rt := p.last.Swap(nil)
	if rt == nil {
		return
	}
	if !rt.reset {
		rt.txn.Reset()
		rt.reset = true
	}
	if !p.last.CompareAndSwap(nil, rt) {
		p.parkReset(rt)
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
	if p.expiry != nil {
		p.expiry.Stop()
	}
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
