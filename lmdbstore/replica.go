package lmdbstore

// The store's side of the replicated log (SPEC.md §13): a bound store
// publishes every revision's log record through Options.Replicator before
// it commits, and applies revisions others published, each as exactly
// that revision. The binding is two meta keys, written together:
//
//	repl_pos: u64 the remote position (stream sequence) of the last
//	          revision this store published or applied
//	repl_rev: u64 that revision
//
// Both absent: the store is not bound (every store before §13). This
// package knows nothing of the remote; the replica package does.

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/roles"
)

// Meta keys of a bound store.
const (
	metaReplPos = "repl_pos"
	metaReplRev = "repl_rev"
)

var (
	// ErrBehind: a Publish lost the race for its revision (the remote has
	// revisions this store has not applied). Update catches up and re-runs
	// its function.
	ErrBehind = errors.New("behind the remote")
	// ErrRemote: the remote could not be reached or refused the write;
	// nothing was committed locally.
	ErrRemote = errors.New("remote unavailable")
	// ErrDiverged: this store's history and the remote's differ (a message
	// that is not the next revision, a record that does not replay to the
	// same operations); nothing was applied.
	ErrDiverged = errors.New("diverged from the remote")
	// ErrBound: a write on a bound store opened without its remote (or a
	// remote given for a store that is not bound).
	ErrBound = errors.New("store is bound to a remote")
)

// Replicator publishes revisions of a bound store (Options.Replicator).
type Replicator interface {
	// Publish is called inside the write transaction, just before commit,
	// with the revision and its log record (the exact bytes the log
	// keyspace stores). It returns the remote position the revision took.
	// An error aborts the transaction; an error wrapping ErrBehind makes
	// Update call CatchUp and run its function again.
	Publish(p Pending) (pos uint64, err error)
	// CatchUp applies (ApplyReplicated) what the remote holds beyond this
	// store. It is called with no transaction live.
	CatchUp(s *Store) error
}

// Pending is a revision about to commit on a bound store.
type Pending struct {
	Rev    Revision
	Record []byte   // the log record (valid during Publish only)
	Pos    uint64   // the remote position of the store's last revision
	PosRev Revision // that revision (Rev-1)
}

// Replicated is one revision read from the remote.
type Replicated struct {
	Rev    Revision
	Record []byte
	Pos    uint64 // its remote position
}

// Binding is what a store records of its remote.
type Binding struct {
	Bound bool
	Pos   uint64   // remote position of Rev
	Rev   Revision // the last revision published or applied through the remote
}

// maxCatchUpRetries bounds how often one write catches up and re-runs
// (each round means another writer won the race).
const maxCatchUpRetries = 1000

// retryBehind runs attempt until it does not fail with ErrBehind, catching
// up in between.
func (s *Store) retryBehind(attempt func() error) error {
	for i := 0; ; i++ {
		err := attempt()
		if err == nil || !errors.Is(err, ErrBehind) || s.opts.Replicator == nil || i >= maxCatchUpRetries {
			return err
		}
		if cerr := s.opts.Replicator.CatchUp(s); cerr != nil {
			return cerr
		}
	}
}

// readBinding reads the binding from meta inside txn.
func readBinding(txn *lmdb.Txn, meta lmdb.DBI) (Binding, error) {
	_, err := txn.Get(meta, []byte(metaReplPos))
	if lmdb.IsNotFound(err) {
		return Binding{}, nil
	}
	if err != nil {
		return Binding{}, err
	}
	pos, err := getU64(txn, meta, metaReplPos)
	if err != nil {
		return Binding{}, err
	}
	rev, err := getU64(txn, meta, metaReplRev)
	if err != nil {
		return Binding{}, err
	}
	return Binding{Bound: true, Pos: pos, Rev: Revision(rev)}, nil
}

func putBinding(txn *lmdb.Txn, meta lmdb.DBI, pos uint64, rev Revision) error {
	if err := txn.Put(meta, []byte(metaReplPos), u64Value(pos), 0); err != nil {
		return err
	}
	return txn.Put(meta, []byte(metaReplRev), u64Value(uint64(rev)), 0)
}

// publish hands the revision's log record v to the replicator of a bound
// store and records the position it took (finishLog). A replayed revision
// records its own position (ApplyReplicated).
func (tx *WriteTxn) publish(v []byte) error {
	if tx.replay != nil {
		return putBinding(tx.txn, tx.s.db.meta, tx.replay.Pos, tx.rev)
	}
	b, err := readBinding(tx.txn, tx.s.db.meta)
	if err != nil {
		return err
	}
	rep := tx.s.opts.Replicator
	switch {
	case !b.Bound && rep == nil:
		return nil
	case !b.Bound:
		return fmt.Errorf("%w: %s has no remote position (bind it with memctl remote add)", ErrBound, tx.s.path)
	case rep == nil:
		return fmt.Errorf("%w: %s is bound to a remote but was opened without it (its remote.json is missing?); writes are refused so it cannot diverge (memctl remote remove unbinds it)", ErrBound, tx.s.path)
	}
	if b.Rev != tx.rev-1 {
		return fmt.Errorf("%w: %s has revisions %d to %d that were never published (written without the remote)", ErrDiverged, tx.s.path, b.Rev+1, tx.rev-1)
	}
	pos, err := rep.Publish(Pending{Rev: tx.rev, Record: v, Pos: b.Pos, PosRev: b.Rev})
	if err != nil {
		return err
	}
	return putBinding(tx.txn, tx.s.db.meta, pos, tx.rev)
}

// Binding returns what the store records of its remote.
func (s *Store) Binding() (Binding, error) {
	var b Binding
	err := s.view(func(txn *lmdb.Txn) error {
		var err error
		b, err = readBinding(txn, s.db.meta)
		return err
	})
	return b, err
}

// Bind records that the store's revision rev sits at remote position pos
// (memctl remote add, clone). rev must be the latest revision.
func (s *Store) Bind(pos uint64, rev Revision) error {
	_, err := s.update(func(txn *lmdb.Txn) error {
		last, err := getU64(txn, s.db.meta, metaRev)
		if err != nil {
			return err
		}
		if Revision(last) != rev {
			return fmt.Errorf("%w: bind at revision %d, the store is at %d", ErrInvalid, rev, last)
		}
		return putBinding(txn, s.db.meta, pos, rev)
	})
	return err
}

// Unbind forgets the remote (memctl remote remove): the store is a
// single-machine store again.
func (s *Store) Unbind() error {
	_, err := s.update(func(txn *lmdb.Txn) error {
		for _, k := range []string{metaReplPos, metaReplRev} {
			if err := txn.Del(s.db.meta, []byte(k), nil); err != nil && !lmdb.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	return err
}

// LogRecord returns the log record of revision rev (a copy), exactly as
// the log keyspace stores it.
func (r *ReadTxn) LogRecord(rev Revision) ([]byte, error) {
	v, err := r.txn().Get(r.s.db.log, u64be(uint64(rev)))
	if lmdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: revision %d", ErrNotFound, rev)
	}
	if err != nil {
		return nil, err
	}
	return bytes.Clone(v), nil
}

// ApplyReplicated applies revisions read from the remote, in order, in
// one write transaction, each as exactly that revision with its recorded
// commit time and provenance. A revision at or below the store's latest
// must equal the stored record (another process applied it) and is
// skipped; the next one must be latest+1, decode, hold its crc and replay
// to the very operations it lists; the first that does not is refused
// with ErrDiverged naming it: it and the ones after it are not applied,
// the ones before it are. It returns how many revisions were applied.
func (s *Store) ApplyReplicated(recs []Replicated) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	var txs []*WriteTxn
	var refused error // the first revision refused: the ones before it commit
	_, err := s.update(func(txn *lmdb.Txn) error {
		txs, refused = txs[:0], nil
		for _, rc := range recs {
			last, err := getU64(txn, s.db.meta, metaRev)
			if err != nil {
				return err
			}
			if rc.Rev <= Revision(last) {
				have, err := txn.Get(s.db.log, u64be(uint64(rc.Rev)))
				if err != nil {
					return err
				}
				if !bytes.Equal(have, rc.Record) {
					return fmt.Errorf("%w: remote position %d holds revision %d, which differs from this store's revision %d", ErrDiverged, rc.Pos, rc.Rev, rc.Rev)
				}
				continue
			}
			if rc.Rev != Revision(last)+1 {
				return fmt.Errorf("%w: remote position %d holds revision %d, the next is %d", ErrDiverged, rc.Pos, rc.Rev, last+1)
			}
			// A nested transaction per revision: a refused one leaves no
			// trace, and the ones before it still commit.
			var tx *WriteTxn
			err = txn.Sub(func(sub *lmdb.Txn) error {
				sub.RawRead = true
				var err error
				tx, err = s.replayOne(sub, rc)
				return err
			})
			if errors.Is(err, ErrDiverged) {
				refused = err
				break
			}
			if err != nil {
				return err
			}
			txs = append(txs, tx)
		}
		if len(txs) == 0 && refused != nil {
			return refused
		}
		if len(txs) == 0 {
			return errAbort
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, tx := range txs {
		s.ids.addCommitted(tx.verifiedIDs, tx.knownIDs)
		s.emitWrites(tx)
	}
	return len(txs), refused
}

// replayOne applies one remote revision inside txn.
func (s *Store) replayOne(txn *lmdb.Txn, rc Replicated) (*WriteTxn, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: remote position %d (revision %d): %s", ErrDiverged, rc.Pos, rc.Rev, fmt.Sprintf(format, a...))
	}
	rec, err := s.decodeLog(u64be(uint64(rc.Rev)), rc.Record)
	if err != nil {
		return nil, bad("%v", err)
	}
	_, _, format, body, err := s.openLog(rc.Record)
	if err != nil {
		return nil, bad("%v", err)
	}
	defer body.close()
	opsBytes, err := body.all()
	if err != nil {
		return nil, bad("%v", err)
	}
	tx, err := s.beginWrite(txn, WriteMeta{Scope: rec.scope, RunID: rec.run, TaskID: rec.tsk})
	if err != nil {
		return nil, err
	}
	defer tx.close()
	lastTS, err := getU64(txn, s.db.meta, metaTS)
	if err != nil {
		return nil, err
	}
	if rec.ts <= lastTS {
		return nil, bad("commit time %d is not after the last one (%d)", rec.ts, lastTS)
	}
	tx.ts, tx.r.pendingTS = rec.ts, rec.ts
	tx.red.r = nil // the record holds what was stored: redacted already
	tx.replay = &rc
	for i, op := range rec.ops {
		if err := tx.replayOp(op, rec.relFlags[i]); err != nil {
			return nil, bad("op %d: %v", i+1, err)
		}
	}
	if tx.err != nil {
		return nil, bad("%v", tx.err)
	}
	if err := tx.flushAdj(); err != nil {
		return nil, err
	}
	replayed := tx.ops
	if format == fmtKeyed { // compare in the record's own encoding (unique: logkeyed.go)
		if replayed, err = keyedOps(tx.ops, tx.nops); err != nil {
			return nil, err
		}
	}
	if tx.nops != len(rec.ops) || !bytes.Equal(replayed, opsBytes) {
		return nil, bad("its operations do not replay to themselves on this store (%d of %d logged)", tx.nops, len(rec.ops))
	}
	// The record as received: its bytes are the log entry on every replica.
	return tx, tx.finishLog(rc.Record)
}

// replayOp applies one logged operation through the ordinary write path.
// flags is an add_rel op's relation flags byte.
func (tx *WriteTxn) replayOp(op Op, flags byte) error {
	switch op.Kind {
	case OpPutNode:
		return tx.PutNode(NodePut{Key: op.NodeKey, Type: op.NodeType, Payload: op.Payload, Valid: op.Valid,
			Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID})
	case OpDelNode:
		return tx.DeleteNode(op.NodeKey)
	case OpPutEdge:
		w := op.Weight
		// The log holds the weight the edge got; a weight equal to the
		// relation's default replays as "the default" (SPEC.md §13).
		if rel, err := tx.relByName(op.Rel); err == nil && rel.DefaultWeight == w {
			w = 0
		}
		return tx.PutEdge(EdgePut{Src: op.Src, Rel: op.Rel, Dst: op.Dst, Weight: w, Payload: op.Payload,
			Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID})
	case OpDelEdge:
		return tx.DeleteEdge(op.Src, op.Rel, op.Dst)
	case OpPutKV:
		return tx.PutKV(KVPut{Scope: op.Scope, Namespace: op.Namespace, Key: op.Key, Payload: op.Payload, Valid: op.Valid,
			RunID: op.RunID, TaskID: op.TaskID})
	case OpDelKV:
		return tx.DeleteKV(op.Scope, op.Namespace, op.Key)
	case OpAddRel:
		_, err := tx.AddRelation(Relation{Name: op.Rel, DefaultWeight: op.Weight,
			Bidirectional: flags&1 != 0, Inhibitory: flags&2 != 0, Role: roles.FromFlags(uint32(flags))})
		return err
	}
	return fmt.Errorf("unknown op kind %d", op.Kind)
}
