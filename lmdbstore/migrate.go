package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/roles"
)

// upgrade brings a store written by an older schema to schemaRevs, in
// one LMDB transaction that commits no revision: it changes encodings, not
// the memory, so reads at every revision and diff-since answer as before.
//
//	1 → 2: relation values gain their creation revision, taken from the
//	add_rel operation of the log (0 for the built-ins), and their role:
//	the built-ins' and ingest's (contains, co_changed) by name
//	(roles.Known), memory for any other added relation.
//	2 → 3: the revs keyspace is created and filled from the log records'
//	headers; every e record stays as it is (an explicit record is valid
//	for any edge, SPEC.md §2).
//	3 → 4 needs no upgrade: the first format-03 log record sets it
//	(WriteTxn.noteLogFormat).
//
// A read-only open cannot upgrade and fails with ErrReadOnly saying so.
// Concurrent openers are safe: the transaction re-reads the schema and does
// nothing if another process upgraded first.
func (s *Store) upgrade(from uint64) error {
	if s.opts.ReadOnly {
		return fmt.Errorf("%w: %s has schema %d; open it once writable to upgrade it to schema %d", ErrReadOnly, s.path, from, schemaRevs)
	}
	created := map[string]Revision{}
	var heads []LogHeader
	err := s.View(func(r *ReadTxn) error {
		if from < 2 {
			err := r.DiffSince(AtRevision(0), DiffFilter{}, func(op Op) error {
				if op.Kind == OpAddRel {
					created[op.Rel] = op.Rev
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return r.LogHeaders(math.MaxUint64, func(h LogHeader) bool {
			heads = append(heads, h)
			return true
		})
	})
	if err != nil {
		return fmt.Errorf("upgrade %s from schema %d: reading the log: %w", s.path, from, err)
	}
	var revs lmdb.DBI
	_, err = s.update(func(txn *lmdb.Txn) error {
		ver, err := getU64(txn, s.db.meta, metaSchema)
		if err != nil || ver >= schemaRevs {
			return err
		}
		if ver < 2 {
			if err := s.migrateRelations(txn, created); err != nil {
				return err
			}
		}
		if revs, err = txn.OpenDBI(dbRevs, lmdb.Create); err != nil {
			return err
		}
		if err := txn.Drop(revs, false); err != nil { // refilled from the log below
			return err
		}
		for i := len(heads) - 1; i >= 0; i-- {
			h := heads[i]
			m := revMeta{ts: uint64(h.TS.UnixNano()), scope: h.Scope, run: h.RunID, task: h.TaskID}
			if err := putRevs(txn, revs, h.Rev, m); err != nil {
				return err
			}
		}
		return txn.Put(s.db.meta, []byte(metaSchema), u64Value(schemaRevs), 0)
	})
	if err != nil {
		return fmt.Errorf("upgrade %s from schema %d: %w", s.path, from, err)
	}
	if revs == 0 { // another process upgraded first
		err = s.viewManaged(func(txn *lmdb.Txn) error {
			revs, err = txn.OpenDBI(dbRevs, 0)
			return err
		})
		if err != nil {
			return fmt.Errorf("upgrade %s from schema %d: %w", s.path, from, err)
		}
	}
	s.db.revs = revs
	return nil
}

// migrateRelations rewrites schema-1 relation values as schema 2's.
func (s *Store) migrateRelations(txn *lmdb.Txn, created map[string]Revision) error {
	cur, err := txn.OpenCursor(s.db.rel)
	if err != nil {
		return err
	}
	type kv struct{ k, v []byte }
	var old []kv
	k, v, err := cur.Get(nil, nil, lmdb.First)
	for ; err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
		old = append(old, kv{bytes.Clone(k), bytes.Clone(v)})
	}
	cur.Close()
	if !lmdb.IsNotFound(err) {
		return err
	}
	for _, e := range old {
		if len(e.k) != 4 {
			return &CorruptionError{dbRel, e.k, "bad relation id"}
		}
		id := RelID(binary.BigEndian.Uint32(e.k))
		r, err := decodeRelFormat(id, e.v, relFormatV1)
		if err != nil {
			return &CorruptionError{dbRel, e.k, err.Error()}
		}
		if int(id) > len(builtinRelations) {
			rev, ok := created[r.Name]
			if !ok {
				return &CorruptionError{dbRel, e.k, fmt.Sprintf("relation %q has no add_rel operation in the log", r.Name)}
			}
			r.CreatedRev = rev
		}
		r.Role, _ = roles.Known(r.Name)
		if err := txn.Put(s.db.rel, e.k, encodeRel(r), 0); err != nil {
			return err
		}
	}
	return nil
}
