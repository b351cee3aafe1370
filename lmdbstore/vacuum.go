package lmdbstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// VacuumStats describes one VacuumInto: the source's file and in-use size
// and the copy's file size, in bytes.
type VacuumStats struct {
	Revision    Revision // the latest revision, the copy's too
	Entries     uint64   // key/value pairs copied, every keyspace
	SourceFile  int64    // the source's data.mdb
	SourceInUse uint64   // the source's pages in its keyspaces (stats' keyspaces, summed)
	CopyFile    int64    // the copy's data.mdb
}

// VacuumInto writes a dense copy of the store into a new store directory
// dir, like SQLite's VACUUM INTO: every keyspace, history, log and revs
// included, byte for byte, so the copy is the same store (the same answers
// at every revision, the same Check). Pages freed by old transactions are
// not carried over, and every keyspace is written in key order with
// MDB_APPEND, which fills B-tree pages instead of splitting them in half
// (random inserts leave them about two-thirds full).
//
// The source is read in one read transaction: writers may go on, and what
// they commit after it began is not in the copy (Revision says what is).
// dir must not hold a store (ErrExists); on failure the files VacuumInto
// created are removed and the source is untouched.
func (s *Store) VacuumInto(dir string) (st VacuumStats, err error) {
	if same, err := samePath(s.path, dir); err != nil || same {
		if err == nil {
			err = fmt.Errorf("%w: vacuum into %s: that is the store itself", ErrInvalid, dir)
		}
		return st, err
	}
	if err := makeStoreDir("vacuum into", dir); err != nil {
		return st, err
	}
	if fi, err := os.Stat(filepath.Join(s.path, "data.mdb")); err == nil {
		st.SourceFile = fi.Size()
	}
	info, err := s.env.Info()
	if err != nil {
		return st, fmt.Errorf("vacuum: %w", err)
	}
	space, err := s.Space()
	if err != nil {
		return st, err
	}
	st.SourceInUse = InUse(space)
	// The copy needs at most the source's pages: its map starts at the
	// source's size and grows like any store's if that is not enough.
	dst, err := openEnv(dir, Options{MapSize: info.MapSize, MaxMapSize: s.maxMap})
	if err != nil {
		return st, err
	}
	defer func() {
		dst.closeEnv()
		if err != nil {
			for _, f := range []string{"data.mdb", "lock.mdb"} {
				_ = os.Remove(filepath.Join(dir, f))
			}
		}
	}()
	_, err = dst.update(func(wtxn *lmdb.Txn) error {
		return s.viewManaged(func(rtxn *lmdb.Txn) error {
			st.Entries = 0 // both transactions may be retried
			if v, err := rtxn.Get(s.db.meta, []byte(metaRev)); err == nil {
				rev, perr := parseU64Value(v)
				if perr != nil {
					return &CorruptionError{dbMeta, []byte(metaRev), perr.Error()}
				}
				st.Revision = Revision(rev)
			}
			return s.db.each(func(ks *keyspace, src *lmdb.DBI) error {
				name := ks.name
				to, err := wtxn.OpenDBI(name, lmdb.Create|ks.flags)
				if err != nil {
					return err
				}
				n, err := appendKeyspace(name, rtxn, *src, wtxn, to)
				st.Entries += n
				if err != nil {
					return fmt.Errorf("vacuum keyspace %s: %w", name, classifyLMDB(name, nil, err))
				}
				return nil
			})
		})
	})
	if err != nil {
		return st, err
	}
	if err := dst.env.Sync(true); err != nil {
		return st, fmt.Errorf("vacuum into %s: %w", dir, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "data.mdb"))
	if err != nil {
		return st, fmt.Errorf("vacuum into %s: %w", dir, mapOSError(err))
	}
	st.CopyFile = fi.Size()
	return st, nil
}

// appendKeyspace copies every pair of keyspace name (from, read in rtxn)
// into to (written in wtxn), in key order with MDB_APPEND. A key out of
// order, empty or longer than LMDB allows can only come from a damaged
// page of the source: it is reported as such, never written.
func appendKeyspace(name string, rtxn *lmdb.Txn, from lmdb.DBI, wtxn *lmdb.Txn, to lmdb.DBI) (uint64, error) {
	cur, err := rtxn.OpenCursor(from)
	if err != nil {
		return 0, err
	}
	defer cur.Close()
	var n uint64
	var prev []byte
	for op := uint(lmdb.First); ; op = lmdb.Next {
		k, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		switch {
		case len(k) == 0 || len(k) > maxLMDBKey:
			return n, &CorruptionError{name, k, fmt.Sprintf("a key of %d bytes", len(k))}
		case n > 0 && bytes.Compare(k, prev) <= 0:
			return n, &CorruptionError{name, k, "keys out of order"}
		}
		prev = append(prev[:0], k...)
		if err := wtxn.Put(to, k, v, lmdb.Append); err != nil {
			return n, err
		}
		n++
	}
}

// maxLMDBKey is LMDB's default key size limit (mdb_env_get_maxkeysize).
const maxLMDBKey = 511

// samePath reports whether a and b name the same directory (b may not
// exist yet).
func samePath(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, nil
	}
	fb, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("vacuum into %s: %w", b, mapOSError(err))
	}
	return os.SameFile(fa, fb), nil
}
