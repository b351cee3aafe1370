package lmdbstore

// The ts keyspace (SPEC.md §2): the time index, commit time to revision.
//
//	key:   commit time u64 BE (unix ns)
//	value: 01 ‖ rev u64 BE ‖ crc
//
// Commit times strictly increase with revisions, so the index is ordered
// both ways; it is written with the log record (log.go).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// revAtTime is the latest revision committed at or before t.
func (r *ReadTxn) revAtTime(t time.Time) (Revision, bool, error) {
	if t.Before(time.Unix(0, 0)) {
		return 0, false, nil
	}
	ns := t.UnixNano()
	if t.After(time.Unix(0, math.MaxInt64)) {
		ns = math.MaxInt64 // beyond int64 nanoseconds (year 2262): every commit is before
	}
	if r.inWrite && uint64(ns) >= r.pendingTS {
		return r.rev, true, nil
	}
	cur, err := r.txn().OpenCursor(r.s.db.ts)
	if err != nil {
		return 0, false, err
	}
	defer cur.Close()
	var k, v []byte
	if ns == math.MaxInt64 {
		k, v, err = cur.Get(nil, nil, lmdb.Last)
	} else {
		k, v, err = cur.Get(u64be(uint64(ns)+1), nil, lmdb.SetRange)
		if err == nil {
			k, v, err = cur.Get(nil, nil, lmdb.Prev)
		} else if lmdb.IsNotFound(err) {
			k, v, err = cur.Get(nil, nil, lmdb.Last)
		}
	}
	if lmdb.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	rev, perr := parseU64Value(v)
	if perr != nil || len(k) != 8 {
		return 0, false, &CorruptionError{dbTS, bytes.Clone(k), "bad time index entry"}
	}
	return Revision(rev), true, nil
}

// RevisionTime is the commit time of revision rev.
func (r *ReadTxn) RevisionTime(rev Revision) (time.Time, error) {
	if r.inWrite && rev == r.rev {
		return nsTime(r.pendingTS), nil
	}
	if t, ok := r.s.revTimes.get(rev); ok {
		return t, nil
	}
	t, err := r.logTime(rev)
	if err == nil {
		r.s.revTimes.put(rev, t)
	}
	return t, err
}

// maxRevTimes bounds the commit times a Store keeps.
const maxRevTimes = 1 << 14

// revTimeCache keeps the commit times of committed revisions read so far.
// A committed log record never changes, and reading its time checks the
// whole record: for a revision that ingested a tree, megabytes, on every
// edge listing that prints the revision's time.
// Only records read from the log are kept: the pending revision of a
// write transaction (which may still abort) is never read from it.
type revTimeCache struct {
	mu sync.Mutex
	m  map[Revision]time.Time
}

func (c *revTimeCache) get(rev Revision) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[rev]
	return t, ok
}

func (c *revTimeCache) put(rev Revision, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxRevTimes {
		c.m = make(map[Revision]time.Time)
	}
	c.m[rev] = t
}

// logTime reads the commit time of rev from its log record.
func (r *ReadTxn) logTime(rev Revision) (time.Time, error) {
	k := u64be(uint64(rev))
	v, err := r.txn().Get(r.s.db.log, k)
	if lmdb.IsNotFound(err) {
		return time.Time{}, fmt.Errorf("%w: revision %d", ErrNotFound, rev)
	}
	if err != nil {
		return time.Time{}, classifyLMDB(dbLog, k, err)
	}
	v, err = openValue(dbLog, k, v)
	if err != nil {
		return time.Time{}, err
	}
	if len(v) < 9 || !logFormat(v[0]) {
		return time.Time{}, &CorruptionError{dbLog, k, "bad log record header"}
	}
	return nsTime(binary.BigEndian.Uint64(v[1:9])), nil
}
