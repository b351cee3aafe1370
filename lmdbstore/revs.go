package lmdbstore

// The revs keyspace (schema 3): one entry per revision with its commit time
// and WriteMeta, the header of its log record without the operations. A
// reader names when and by whom a revision was written with one small Get,
// without opening its log record (a bulk load's is tens of megabytes).
// Implicit edge records (edgerec.go) take their times and provenance from
// here. Entries are written with the log record, in the same transaction,
// and never change.

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// revMeta is a revision's commit time (unix ns) and transaction provenance.
type revMeta struct {
	ts               uint64
	scope, run, task string
}

// revsValue encodes a revs value: 01 ‖ commit time u64 BE ‖ str scope ‖
// str run_id ‖ str task_id ‖ crc.
func revsValue(m revMeta) []byte {
	v := binary.BigEndian.AppendUint64([]byte{fmtPlain}, m.ts)
	v = appendStr(v, m.scope)
	v = appendStr(v, m.run)
	v = appendStr(v, m.task)
	return sealValue(v)
}

func parseRevsValue(v []byte) (revMeta, error) {
	body, err := unsealValue(v)
	if err != nil {
		return revMeta{}, err
	}
	if len(body) < 9 || body[0] != fmtPlain {
		return revMeta{}, fmt.Errorf("bad format")
	}
	d := decoder{b: body, off: 9}
	m := revMeta{ts: binary.BigEndian.Uint64(body[1:9])}
	m.scope, m.run, m.task = d.str(), d.str(), d.str()
	d.end()
	return m, d.err
}

// putRevs writes revision rev's entry (appended: revisions only grow).
func putRevs(txn *lmdb.Txn, dbi lmdb.DBI, rev Revision, m revMeta) error {
	if err := txn.Put(dbi, u64be(uint64(rev)), revsValue(m), lmdb.Append); err != nil {
		if lmdb.IsErrno(err, lmdb.KeyExist) {
			return &CorruptionError{dbRevs, u64be(uint64(rev)), "revs has an entry beyond meta rev"}
		}
		return err
	}
	return nil
}

// revMeta returns the commit time and provenance of revision rev: inside a
// write transaction the pending revision's own, else the revs entry (the
// last one read is remembered: an edge list written by one revision asks
// for it once per edge).
func (r *ReadTxn) revMeta(rev Revision) (revMeta, error) {
	if r.inWrite && rev == r.w.rev {
		return revMeta{ts: r.w.ts, scope: r.w.meta.Scope, run: r.w.meta.RunID, task: r.w.meta.TaskID}, nil
	}
	if r.revMemo.ok && r.revMemo.rev == rev {
		return r.revMemo.m, nil
	}
	k := u64be(uint64(rev))
	v, err := r.txn().Get(r.s.db.revs, k)
	if lmdb.IsNotFound(err) {
		return revMeta{}, &CorruptionError{dbRevs, k, "revision has no revs entry"}
	}
	if err != nil {
		return revMeta{}, classifyLMDB(dbRevs, k, err)
	}
	m, err := parseRevsValue(v)
	if err != nil {
		return revMeta{}, &CorruptionError{dbRevs, bytes.Clone(k), err.Error()}
	}
	r.revMemo.rev, r.revMemo.m, r.revMemo.ok = rev, m, true
	return m, nil
}

// RevisionHeader is revision rev's log record header from its revs entry:
// one small value, without opening the log record, whose checksum covers
// every operation (tens of megabytes for a bulk load or an ingest). Ops is
// not in the entry and stays 0. A revision past the view is ErrNotFound.
func (r *ReadTxn) RevisionHeader(rev Revision) (LogHeader, error) {
	if err := r.loadMeta(); err != nil {
		return LogHeader{}, err
	}
	pending := r.inWrite && rev == r.w.rev
	if !pending && (rev == 0 || rev > r.rev) {
		return LogHeader{}, fmt.Errorf("%w: revision %d", ErrNotFound, rev)
	}
	m, err := r.revMeta(rev)
	if err != nil {
		return LogHeader{}, err
	}
	return LogHeader{Rev: rev, TS: nsTime(m.ts), Scope: m.scope, RunID: m.run, TaskID: m.task}, nil
}

// revMemo is ReadTxn's last revs entry read (revs entries never change, so
// it stays true across pooled transactions).
type revMemo struct {
	rev Revision
	m   revMeta
	ok  bool
}
