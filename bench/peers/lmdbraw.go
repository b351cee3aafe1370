package peers

import (
	"fmt"
	"strconv"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/bench/gen"
)

// LMDBRaw is the floor: the same lmdb-go as memctl, the layout of
// layout.go (one key per edge in each direction), default durable commits,
// and one read transaction reused with Reset/Renew (the cheapest read path
// lmdb-go offers) under RawRead.
type LMDBRaw struct {
	env                    *lmdb.Env
	nodes, keys, names     lmdb.DBI
	out, in                lmdb.DBI
	g                      *gen.Graph
	rev                    int
	rtxn                   *lmdb.Txn
	outCur, inCur          *lmdb.Cursor
	hops                   HopScratch
	kbuf, vbuf, pbuf, nbuf []byte
}

const lmdbMapSize = 64 << 30

func (s *LMDBRaw) Name() string { return "lmdb-raw" }

func lmdbOpen(dir string, flags uint) (*lmdb.Env, error) {
	env, err := lmdb.NewEnv()
	if err != nil {
		return nil, err
	}
	if err := env.SetMaxDBs(8); err != nil {
		env.Close()
		return nil, err
	}
	if err := env.SetMapSize(lmdbMapSize); err != nil {
		env.Close()
		return nil, err
	}
	if err := env.Open(dir, flags, 0o600); err != nil {
		env.Close()
		return nil, err
	}
	return env, nil
}

func (s *LMDBRaw) Create(dir string, g *gen.Graph) error {
	env, err := lmdbOpen(dir, 0)
	if err != nil {
		return err
	}
	s.env, s.g = env, g
	return env.Update(func(txn *lmdb.Txn) error {
		for _, d := range []struct {
			name string
			dbi  *lmdb.DBI
		}{{"nodes", &s.nodes}, {"keys", &s.keys}, {"names", &s.names}, {"out", &s.out}, {"in", &s.in}} {
			if *d.dbi, err = txn.OpenDBI(d.name, lmdb.Create); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *LMDBRaw) putEdge(txn *lmdb.Txn, e gen.Edge) error {
	s.vbuf = edgeVal(s.vbuf, s.rev)
	s.kbuf = edgeKey(s.kbuf, uint64(e.Src), uint32(e.Rel), uint64(e.Dst))
	if err := txn.Put(s.out, s.kbuf, s.vbuf, 0); err != nil {
		return err
	}
	s.kbuf = edgeKey(s.kbuf, uint64(e.Dst), uint32(e.Rel), uint64(e.Src))
	return txn.Put(s.in, s.kbuf, s.vbuf, 0)
}

func (s *LMDBRaw) Load(b Batch) error {
	s.rev++
	return s.env.Update(func(txn *lmdb.Txn) error {
		for _, n := range b.Nodes {
			node := s.g.Nodes[n]
			s.pbuf = s.g.Payload(n, s.pbuf[:0])
			s.nbuf = nodeVal(s.nbuf, uint8(node.Type), s.rev, node.Key, s.pbuf)
			s.kbuf = idKey(s.kbuf, uint64(n))
			if err := txn.Put(s.nodes, s.kbuf, s.nbuf, 0); err != nil {
				return err
			}
			if err := txn.Put(s.keys, []byte(node.Key), s.kbuf, 0); err != nil {
				return err
			}
			if err := txn.Put(s.names, s.kbuf, []byte(node.Key), 0); err != nil {
				return err
			}
		}
		for _, e := range b.Edges {
			if err := s.putEdge(txn, e); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *LMDBRaw) PutEdge(e gen.Edge) error {
	s.rev++
	return s.env.Update(func(txn *lmdb.Txn) error { return s.putEdge(txn, e) })
}

func (s *LMDBRaw) Settle() error { return nil }

// read runs fn in the reused read transaction.
func (s *LMDBRaw) read(fn func(txn *lmdb.Txn) error) error {
	if s.rtxn == nil {
		txn, err := s.env.BeginTxn(nil, lmdb.Readonly)
		if err != nil {
			return err
		}
		txn.RawRead = true
		s.rtxn = txn
		if s.outCur, err = txn.OpenCursor(s.out); err != nil {
			return err
		}
		if s.inCur, err = txn.OpenCursor(s.in); err != nil {
			return err
		}
	} else {
		if err := s.rtxn.Renew(); err != nil {
			return err
		}
		if err := s.outCur.Renew(s.rtxn); err != nil {
			return err
		}
		if err := s.inCur.Renew(s.rtxn); err != nil {
			return err
		}
	}
	err := fn(s.rtxn)
	s.rtxn.Reset()
	return err
}

// scanCursor calls fn for every key under the 8-byte id prefix.
func (s *LMDBRaw) scanCursor(cur *lmdb.Cursor, id uint64, fn func(k, v []byte)) error {
	s.kbuf = idKey(s.kbuf, id)
	k, v, err := cur.Get(s.kbuf, nil, lmdb.SetRange)
	for err == nil {
		if len(k) != edgeKeyLen || string(k[:8]) != string(s.kbuf[:8]) {
			return nil
		}
		fn(k, v)
		k, v, err = cur.Get(nil, nil, lmdb.Next)
	}
	if lmdb.IsNotFound(err) {
		return nil
	}
	return err
}

// key is the canonical key of node id (from the names database).
func (s *LMDBRaw) key(id uint64) ([]byte, error) {
	s.nbuf = idKey(s.nbuf, id)
	return s.rtxn.Get(s.names, s.nbuf)
}

// scanKeys hands fn every edge under node's prefix (with rev > 0, only
// those written at or before rev), resolving each peer's key.
func (s *LMDBRaw) scanKeys(out bool, node uint32, rev int, fn EdgeFunc) error {
	return s.read(func(*lmdb.Txn) error {
		cur := s.inCur
		if out {
			cur = s.outCur
		}
		var err error
		serr := s.scanCursor(cur, uint64(node), func(k, v []byte) {
			if err != nil || rev > 0 && valRev(v) > rev {
				return
			}
			rel, peer := splitEdgeKey(k)
			var key []byte
			if key, err = s.key(peer); err == nil {
				fn(relName(rel), aliasString(key))
			}
		})
		return firstError(serr, err)
	})
}

func firstError(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (s *LMDBRaw) GetOut(node uint32, fn EdgeFunc) error { return s.scanKeys(true, node, 0, fn) }
func (s *LMDBRaw) GetIn(node uint32, fn EdgeFunc) error  { return s.scanKeys(false, node, 0, fn) }

// GetOutAt filters on the stored revision: insert-only equivalent.
func (s *LMDBRaw) GetOutAt(node uint32, rev int, fn EdgeFunc) error {
	return s.scanKeys(true, node, rev, fn)
}

func (s *LMDBRaw) ThreeHop(node uint32, fn KeyFunc) (int, error) {
	var n int
	err := s.read(func(*lmdb.Txn) error {
		var err error
		n, err = s.hops.ThreeHop(uint64(node), func(id uint64, emit func(uint64)) error {
			return s.scanCursor(s.outCur, id, func(k, _ []byte) {
				_, peer := splitEdgeKey(k)
				emit(peer)
			})
		}, func(id uint64) error {
			key, err := s.key(id)
			if err == nil {
				fn(aliasString(key))
			}
			return err
		})
		return err
	})
	return n, err
}

// DiffSince scans every node and out-edge for rev > since: no change log.
func (s *LMDBRaw) DiffSince(since int) (int, error) {
	n := 0
	err := s.env.View(func(txn *lmdb.Txn) error {
		txn.RawRead = true
		for _, d := range []struct {
			dbi lmdb.DBI
			off int
		}{{s.nodes, 1}, {s.out, 0}} {
			cur, err := txn.OpenCursor(d.dbi)
			if err != nil {
				return err
			}
			_, v, err := cur.Get(nil, nil, lmdb.First)
			for err == nil {
				if valRev(v[d.off:]) > since {
					n++
				}
				_, v, err = cur.Get(nil, nil, lmdb.Next)
			}
			cur.Close()
			if !lmdb.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	return n, err
}

func (s *LMDBRaw) FreshArg(_ *gen.Graph, node uint32) string {
	return strconv.FormatUint(uint64(node), 10)
}

func (s *LMDBRaw) FreshQuery(dir, arg string, opened func()) (n int, done func() error, err error) {
	id, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		return 0, done, err
	}
	env, err := lmdbOpen(dir, lmdb.Readonly)
	if err != nil {
		return 0, nil, err
	}
	done = func() error { env.Close(); return nil }
	opened()
	err = env.View(func(txn *lmdb.Txn) error {
		txn.RawRead = true
		dbi, err := txn.OpenDBI("out", 0)
		if err != nil {
			return fmt.Errorf("lmdb-raw: %w", err)
		}
		names, err := txn.OpenDBI("names", 0)
		if err != nil {
			return fmt.Errorf("lmdb-raw: %w", err)
		}
		cur, err := txn.OpenCursor(dbi)
		if err != nil {
			return err
		}
		defer cur.Close()
		var kerr error
		err = s.scanCursor(cur, id, func(k, _ []byte) {
			_, peer := splitEdgeKey(k)
			_, err := txn.Get(names, idKey(nil, peer))
			if err != nil && kerr == nil {
				kerr = err
			}
			n++
		})
		return firstError(err, kerr)
	})
	return n, done, err
}

func (s *LMDBRaw) Close() error {
	if s.env == nil {
		return nil
	}
	if s.rtxn != nil {
		s.outCur.Close()
		s.inCur.Close()
		s.rtxn.Abort()
		s.rtxn = nil
	}
	err := s.env.Close()
	s.env = nil
	return err
}

// Space is each named database's pages (mdb_stat).
func (s *LMDBRaw) Space() ([]Keyspace, error) {
	var out []Keyspace
	err := s.env.View(func(txn *lmdb.Txn) error {
		for _, d := range []struct {
			name string
			dbi  lmdb.DBI
		}{{"nodes", s.nodes}, {"keys", s.keys}, {"names", s.names}, {"out", s.out}, {"in", s.in}} {
			st, err := txn.Stat(d.dbi)
			if err != nil {
				return err
			}
			pages := st.BranchPages + st.LeafPages + st.OverflowPages
			out = append(out, Keyspace{Name: d.name, Entries: int64(st.Entries), Pages: int64(pages), Bytes: int64(pages) * int64(st.PSize)})
		}
		return nil
	})
	return out, err
}

// VacuumInto is LMDB's compacting copy (mdb_env_copy2 with
// MDB_CP_COMPACT): free pages left out, pages renumbered, their fill kept.
func (s *LMDBRaw) VacuumInto(dir string) error {
	return s.env.CopyFlag(dir, lmdb.CopyCompact)
}
