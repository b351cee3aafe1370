package lmdbstore

// Transaction lifecycle: ReadTxn and WriteTxn, how Store.View and
// Store.Update open, commit and abort them (map growth and resizes by
// other processes re-run them, store.go), and the view revision a read
// resolves. What each keyspace reads and writes is in its own file
// (keyspace.go lists them).

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// viewLatest is the view revision of a latest read: every committed entry
// is at or below it.
const viewLatest = Revision(math.MaxUint64)

// ReadTxn is one read transaction (also available inside a write
// transaction, where it sees the transaction's own writes).
type ReadTxn struct {
	s       *Store
	lt      *lmdb.Txn // read through txn(), which renews a pooled one first
	inWrite bool
	w       *WriteTxn // the write transaction (inWrite only): adjacency reads flush its buffers first

	metaLoaded bool
	rev        Revision // latest revision visible (in a write txn: the pending one)
	horizon    Revision
	horizon0   Revision // write txn: the stored horizon (horizon is the one it commits)
	pendingTS  uint64   // commit time of the pending revision (write txn only)

	outCur, inCur *chunkCursor      // reused by scans of a read-only transaction
	pooled        *pooledRead       // the pooled transaction (nil: none); owns the scan cursors
	nb            *neighbourScratch // Neighbours' scratch when not pooled
	revMemo       revMemo           // the last revs entry read (revs.go)
}

// txn is the transaction to read with. A pooled one that View left stale
// is renewed first (readpool.go); if that fails, the pool keeps the error,
// the reads on the still-reset transaction fail (MDB_BAD_TXN), and View
// returns the renew's error instead of fn's.
func (r *ReadTxn) txn() *lmdb.Txn {
	if r.pooled != nil && r.pooled.stale {
		_ = r.pooled.live() // kept in renewErr
	}
	return r.lt
}

func (r *ReadTxn) close() {
	if r.outCur != nil {
		r.outCur.close()
	}
	if r.inCur != nil {
		r.inCur.close()
	}
}

func (r *ReadTxn) loadMeta() error {
	if r.metaLoaded {
		return nil
	}
	rev, err := getU64(r.txn(), r.s.db.meta, metaRev)
	if err != nil {
		return err
	}
	h, err := getU64(r.txn(), r.s.db.meta, metaHorizon)
	if err != nil {
		return err
	}
	r.rev, r.horizon, r.metaLoaded = Revision(rev), Revision(h), true
	return nil
}

// Revision is the latest committed revision this transaction sees.
func (r *ReadTxn) Revision() Revision {
	if err := r.loadMeta(); err != nil {
		return 0
	}
	return r.rev
}

// Horizon is the oldest revision a point-in-time read may ask for (0: all).
func (r *ReadTxn) Horizon() (Revision, error) {
	if err := r.loadMeta(); err != nil {
		return 0, err
	}
	return r.horizon, nil
}

// Resolve turns a view into a concrete revision. It fails with
// ErrBeforeHorizon for a revision older than the retention horizon and
// ErrNotFound for a revision newer than the latest or a time before the
// first commit.
func (r *ReadTxn) Resolve(at At) (Revision, error) {
	if err := r.loadMeta(); err != nil {
		return 0, err
	}
	var rev Revision
	switch at.kind {
	case atLatest:
		return r.rev, nil
	case atRevision:
		rev = at.rev
		if rev > r.rev {
			return 0, fmt.Errorf("%w: revision %d (latest is %d)", ErrNotFound, rev, r.rev)
		}
	case atTime:
		var err error
		var ok bool
		rev, ok, err = r.revAtTime(at.t)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("%w: no revision committed at or before %s", ErrNotFound, at.t.UTC().Format(time.RFC3339Nano))
		}
	default:
		return 0, fmt.Errorf("%w: bad view", ErrInvalid)
	}
	if r.horizon > 0 && rev < r.horizon {
		return 0, fmt.Errorf("%w: revision %d, horizon %d", ErrBeforeHorizon, rev, r.horizon)
	}
	return rev, nil
}

// view is Resolve for internal reads: the latest view needs no lookup.
func (r *ReadTxn) view(at At) (Revision, error) {
	if at.kind == atLatest {
		return viewLatest, nil
	}
	return r.Resolve(at)
}

func (r *ReadTxn) resolvedOrZero(at At) Revision {
	rev, _ := r.Resolve(at)
	return rev
}

// seenRev is the revision a read at view saw (for telemetry).
func (r *ReadTxn) seenRev(view Revision) Revision {
	if view == viewLatest {
		return r.Revision()
	}
	return view
}

// WriteTxn is one write transaction. It must not be used after the Update
// callback returns.
//
// Every operation validates its input before it writes, so an operation that
// returns ErrInvalid, ErrNotFound or ErrUnknownRelation has written nothing
// and the transaction may go on. A collision, a corruption or an LMDB error
// is sticky: the whole transaction fails even if the callback returns nil.
type WriteTxn struct {
	s       *Store
	txn     *lmdb.Txn
	meta    WriteMeta
	rev     Revision
	ts      uint64
	horizon Revision
	nextRel RelID

	replay *Replicated // the remote revision this transaction applies (nil: a local write)

	ops    []byte // encoded operations for the log record
	nops   int
	red    redaction // secret redaction of every key, payload and provenance
	events []event
	err    error
	r      ReadTxn

	scratch       []adjacency.Entry
	outCur, inCur *lmdb.Cursor // reused by adjInsert; closed by close
	outBuf, inBuf adjBuf       // write-back buffers of adjAdd; flushed by flushAdj
	knownIDs      map[NodeID]string
	verifiedIDs   []NodeID // ids found already stored: cached as committed after commit
	recBuf        []byte   // reused by record
	bodyBuf       []byte   // reused by record
	encBuf        []byte   // reused for chunk values
}

// close releases the transaction's cursors (before commit or abort).
func (tx *WriteTxn) close() {
	if tx.outCur != nil {
		tx.outCur.Close()
	}
	if tx.inCur != nil {
		tx.inCur.Close()
	}
}

func (s *Store) beginWrite(txn *lmdb.Txn, meta WriteMeta) (*WriteTxn, error) {
	lastRev, err := getU64(txn, s.db.meta, metaRev)
	if err != nil {
		return nil, err
	}
	lastTS, err := getU64(txn, s.db.meta, metaTS)
	if err != nil {
		return nil, err
	}
	horizon, err := getU64(txn, s.db.meta, metaHorizon)
	if err != nil {
		return nil, err
	}
	storedHorizon := horizon
	nextRel, err := getU64(txn, s.db.meta, metaNextRel)
	if err != nil {
		return nil, err
	}
	retain, err := getU64(txn, s.db.meta, metaRetain)
	if err != nil {
		return nil, err
	}
	// With a retention of N, the revision this transaction commits makes
	// rev-N+1 the oldest readable one: chunks it rewrites may drop what no
	// view from there on can see.
	if rev := lastRev + 1; retain > 0 && rev >= retain && rev-retain+1 > horizon {
		horizon = rev - retain + 1
	}
	ts := uint64(max(s.clock().UnixNano(), 0))
	if ts <= lastTS {
		ts = lastTS + 1
	}
	tx := &WriteTxn{
		s: s, txn: txn, rev: Revision(lastRev + 1), ts: ts,
		horizon: Revision(horizon), nextRel: RelID(nextRel), red: redaction{r: s.opts.Redactor},
	}
	tx.meta = tx.red.meta(meta)
	if meta.Derived {
		tx.red.r = nil // derived keys and payloads: no scan (the count so far stays)
	}
	tx.outBuf.out = true
	tx.r = ReadTxn{s: s, lt: txn, inWrite: true, w: tx, metaLoaded: true,
		rev: tx.rev, horizon: tx.horizon, horizon0: Revision(storedHorizon), pendingTS: ts}
	return tx, nil
}

// Reader returns a read view of this transaction, including its own writes.
// Its latest revision is the one this transaction will commit as.
func (tx *WriteTxn) Reader() *ReadTxn { return &tx.r }

// Revision is the revision this transaction commits as.
func (tx *WriteTxn) Revision() Revision { return tx.rev }

// fail records a sticky error.
func (tx *WriteTxn) fail(err error) error {
	if tx.err == nil {
		tx.err = err
	}
	return err
}

// inherit is an operation's provenance: the transaction's for each field
// the operation leaves empty.
func (tx *WriteTxn) inherit(scope, run, task string) (string, string, string) {
	return tx.meta.inherit(scope, run, task)
}

// inherit fills the empty fields of an operation's provenance from m (one
// rule for WriteTxn and Bulk).
func (m WriteMeta) inherit(scope, run, task string) (string, string, string) {
	if scope == "" {
		scope = m.Scope
	}
	if run == "" {
		run = m.RunID
	}
	if task == "" {
		task = m.TaskID
	}
	return scope, run, task
}

// finish writes the log record, the time index and the meta counters.
func (tx *WriteTxn) finish() error {
	if err := tx.flushAdj(); err != nil {
		return err
	}
	v, err := tx.logValue()
	if err != nil {
		return err
	}
	return tx.finishLog(v)
}

// errAbort ends a write transaction that wrote nothing worth committing.
var errAbort = errors.New("abort")

// update runs fn in a write transaction with RawRead, retrying (fn is run
// again) on the recoverable conditions. errAbort from fn aborts quietly.
func (s *Store) update(fn func(*lmdb.Txn) error) (aborted bool, err error) {
	if s.opts.ReadOnly {
		return false, fmt.Errorf("%w: %s was opened read-only", ErrReadOnly, s.path)
	}
	s.writer.Lock()
	defer s.writer.Unlock()
	for attempt := 0; ; attempt++ {
		err := s.withMap(func() error {
			return guardFaults("", nil, func() error {
				return s.env.Update(func(txn *lmdb.Txn) error {
					txn.RawRead = true
					if err := checkTxnID(s.env, txn); err != nil {
						return err
					}
					return fn(txn)
				})
			})
		})
		if err == nil {
			return false, nil
		}
		if errors.Is(err, errAbort) {
			return true, nil
		}
		retry, rerr := s.recoverable(err)
		if !retry || attempt >= maxRetries {
			return false, rerr
		}
		if rerr != nil {
			return false, rerr
		}
	}
}

// view runs fn in a pooled read transaction (readPool) with RawRead,
// retrying on the recoverable conditions.
func (s *Store) view(fn func(*lmdb.Txn) error) error {
	return s.viewPooled(func(rt *pooledRead) error {
		if err := rt.live(); err != nil {
			return err
		}
		return fn(rt.txn)
	})
}

// viewPooled is view handing over the pooled transaction with its cursors.
func (s *Store) viewPooled(fn func(*pooledRead) error) error {
	return s.viewWith(func(*lmdb.Txn) error {
		rt, err := s.readers.acquire(s.env)
		if err != nil {
			return err
		}
		ok := false // false if fn panics or exits the goroutine: abort, never park
		defer func() { s.readers.release(rt, ok) }()
		err = fn(rt)
		ok = true
		if rt.renewErr != nil {
			return rt.renewErr // what fn saw were its consequences
		}
		return err
	})
}

// viewManaged runs fn in a fresh managed read transaction that commits at
// the end: DBI handles opened in a read transaction become usable by others
// only when it commits (a reset would close them), so Open uses this.
func (s *Store) viewManaged(fn func(*lmdb.Txn) error) error {
	return s.viewWith(func(*lmdb.Txn) error {
		return s.env.View(func(txn *lmdb.Txn) error {
			txn.RawRead = true
			return fn(txn)
		})
	})
}

// viewWith runs run (which ignores its argument and opens its own read
// transaction) holding the map shared, retrying on the recoverable
// conditions.
func (s *Store) viewWith(run func(*lmdb.Txn) error) error {
	for attempt := 0; ; attempt++ {
		err := s.withMap(func() error {
			if s.closing.Load() {
				return fmt.Errorf("%w: %s", ErrClosed, s.path)
			}
			return guardFaults("", nil, func() error { return run(nil) })
		})
		if err == nil {
			return nil
		}
		if errno, ok := lmdbErrno(err); ok && errno == lmdb.MapFull {
			return err // not expected in a read; never grow for it
		}
		retry, rerr := s.recoverable(err)
		if !retry || attempt >= maxRetries {
			return rerr
		}
		if rerr != nil {
			return rerr
		}
	}
}

// Update runs fn in one write transaction. If fn returns nil and wrote
// anything, the transaction commits as the next revision; if fn returns an
// error nothing is written. Map growth is handled inside (fn may be re-run,
// so it must not have side effects outside tx).
func (s *Store) Update(meta WriteMeta, fn func(tx *WriteTxn) error) (Commit, error) {
	var tx *WriteTxn
	var aborted bool
	err := s.retryBehind(func() (err error) {
		aborted, err = s.update(func(txn *lmdb.Txn) error {
			return s.runWrite(txn, meta, fn, &tx)
		})
		return err
	})
	if err != nil {
		return Commit{}, err
	}
	if aborted {
		return Commit{Redacted: tx.red.n}, nil
	}
	s.ids.addCommitted(tx.verifiedIDs, tx.knownIDs)
	s.emitWrites(tx)
	return Commit{Rev: tx.rev, Time: nsTime(tx.ts), Ops: tx.nops, Redacted: tx.red.n}, nil
}

// runWrite is one attempt of Update inside txn.
func (s *Store) runWrite(txn *lmdb.Txn, meta WriteMeta, fn func(tx *WriteTxn) error, txp **WriteTxn) error {
	tx, err := s.beginWrite(txn, meta)
	if err != nil {
		return err
	}
	*txp = tx
	defer tx.close()
	if err := fn(tx); err != nil {
		return err
	}
	if tx.err != nil {
		return tx.err
	}
	if tx.nops == 0 {
		return errAbort
	}
	return tx.finish()
}

// View runs fn in one read transaction: every read inside sees the same
// committed state. Slices handed to scan callbacks are valid only during the
// callback.
func (s *Store) View(fn func(r *ReadTxn) error) error {
	return s.viewPooled(func(rt *pooledRead) error {
		r := &rt.reader // reused with the transaction: no allocation per View
		*r = ReadTxn{s: s, lt: rt.txn, pooled: rt}
		defer r.close()
		return fn(r)
	})
}
