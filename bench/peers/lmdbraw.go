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
	nodes, keys, out, in   lmdb.DBI
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
		}{{"nodes", &s.nodes}, {"keys", &s.keys}, {"out", &s.out}, {"in", &s.in}} {
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

func (s *LMDBRaw) GetOut(node uint32, fn EdgeFunc) error {
	return s.read(func(*lmdb.Txn) error {
		return s.scanCursor(s.outCur, uint64(node), func(k, _ []byte) { fn(splitEdgeKey(k)) })
	})
}

func (s *LMDBRaw) GetIn(node uint32, fn EdgeFunc) error {
	return s.read(func(*lmdb.Txn) error {
		return s.scanCursor(s.inCur, uint64(node), func(k, _ []byte) { fn(splitEdgeKey(k)) })
	})
}

// GetOutAt filters on the stored revision: insert-only equivalent.
func (s *LMDBRaw) GetOutAt(node uint32, rev int, fn EdgeFunc) error {
	return s.read(func(*lmdb.Txn) error {
		return s.scanCursor(s.outCur, uint64(node), func(k, v []byte) {
			if valRev(v) <= rev {
				fn(splitEdgeKey(k))
			}
		})
	})
}

func (s *LMDBRaw) ThreeHop(node uint32) (int, error) {
	var n int
	err := s.read(func(*lmdb.Txn) error {
		var err error
		n, err = s.hops.ThreeHop(uint64(node), func(id uint64, emit func(uint64)) error {
			return s.scanCursor(s.outCur, id, func(k, _ []byte) {
				_, peer := splitEdgeKey(k)
				emit(peer)
			})
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

func (s *LMDBRaw) Decode(rel uint32, peer uint64) (gen.Rel, uint32, error) {
	return gen.Rel(rel), uint32(peer), nil
}

func (s *LMDBRaw) FreshArg(_ *gen.Graph, node uint32) string {
	return strconv.FormatUint(uint64(node), 10)
}

func (s *LMDBRaw) FreshQuery(dir, arg string) (int, error) {
	id, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		return 0, err
	}
	env, err := lmdbOpen(dir, lmdb.Readonly)
	if err != nil {
		return 0, err
	}
	defer env.Close()
	n := 0
	err = env.View(func(txn *lmdb.Txn) error {
		txn.RawRead = true
		dbi, err := txn.OpenDBI("out", 0)
		if err != nil {
			return fmt.Errorf("lmdb-raw: %w", err)
		}
		cur, err := txn.OpenCursor(dbi)
		if err != nil {
			return err
		}
		defer cur.Close()
		return s.scanCursor(cur, id, func(_, _ []byte) { n++ })
	})
	return n, err
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
