package peers

import (
	"bytes"
	"fmt"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/bench/gen"
)

// LMDBRaw is the floor: the same lmdb-go as memctl, the layout of
// layout.go (one key per edge in each direction, keyed by canonical keys),
// default durable commits, and one read transaction reused with
// Reset/Renew (the cheapest read path lmdb-go offers) under RawRead.
type LMDBRaw struct {
	env              *lmdb.Env
	nodes, out, in   lmdb.DBI
	g                *gen.Graph
	rev              int
	rtxn             *lmdb.Txn
	outCur, inCur    *lmdb.Cursor
	hops             KeyHopScratch
	kbuf, vbuf, pbuf []byte
	nbuf, prefix     []byte
}

const (
	lmdbMapSize   = 64 << 30
	lmdbMaxKeyLen = 511
)

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
		}{{"nodes", &s.nodes}, {"out", &s.out}, {"in", &s.in}} {
			if *d.dbi, err = txn.OpenDBI(d.name, lmdb.Create); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *LMDBRaw) putEdge(txn *lmdb.Txn, e gen.Edge) error {
	src, rel, dst := s.g.Nodes[e.Src].Key, e.Rel.Name(), s.g.Nodes[e.Dst].Key
	if err := firstError(checkName(src), firstError(checkName(rel), checkName(dst))); err != nil {
		return err
	}
	s.vbuf = edgeVal(s.vbuf, s.rev)
	s.kbuf = edgeKey(s.kbuf, src, rel, dst)
	if len(s.kbuf) > lmdbMaxKeyLen {
		return fmt.Errorf("lmdb-raw: edge key of %d bytes (LMDB's limit is %d)", len(s.kbuf), lmdbMaxKeyLen)
	}
	if err := txn.Put(s.out, s.kbuf, s.vbuf, 0); err != nil {
		return err
	}
	s.kbuf = edgeKey(s.kbuf, dst, rel, src)
	return txn.Put(s.in, s.kbuf, s.vbuf, 0)
}

func (s *LMDBRaw) Load(b Batch) error {
	s.rev++
	return s.env.Update(func(txn *lmdb.Txn) error {
		for _, n := range b.Nodes {
			node := s.g.Nodes[n]
			if err := checkName(node.Key); err != nil {
				return err
			}
			s.pbuf = s.g.Payload(n, s.pbuf[:0])
			s.nbuf = nodeVal(s.nbuf, uint8(node.Type), s.rev, s.pbuf)
			s.kbuf = append(s.kbuf[:0], node.Key...)
			if err := txn.Put(s.nodes, s.kbuf, s.nbuf, 0); err != nil {
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

// lmdbScan hands fn the relation, peer key and value of every edge of key
// under cur: one SetRange to "key 0x00", then Next while the prefix holds.
// prefix is scratch.
func lmdbScan(cur *lmdb.Cursor, prefix []byte, key string, fn func(rel, peer string, v []byte)) ([]byte, error) {
	prefix = nodePrefix(prefix, key)
	k, v, err := cur.Get(prefix, nil, lmdb.SetRange)
	for err == nil && bytes.HasPrefix(k, prefix) {
		rel, peer, serr := splitEdgeKey(k, len(prefix))
		if serr != nil {
			return prefix, serr
		}
		fn(rel, peer, v)
		k, v, err = cur.Get(nil, nil, lmdb.Next)
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return prefix, err
	}
	return prefix, nil
}

// scan hands fn every edge of node (with rev > 0, only those written at
// or before rev).
func (s *LMDBRaw) scan(out bool, node uint32, rev int, fn EdgeFunc) error {
	return s.read(func(*lmdb.Txn) error {
		cur := s.inCur
		if out {
			cur = s.outCur
		}
		var err error
		s.prefix, err = lmdbScan(cur, s.prefix, s.g.Nodes[node].Key, func(rel, peer string, v []byte) {
			if rev == 0 || valRev(v) <= rev {
				fn(rel, peer)
			}
		})
		return err
	})
}

func firstError(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (s *LMDBRaw) GetOut(node uint32, fn EdgeFunc) error { return s.scan(true, node, 0, fn) }
func (s *LMDBRaw) GetIn(node uint32, fn EdgeFunc) error  { return s.scan(false, node, 0, fn) }

// GetOutAt filters on the stored revision: insert-only equivalent.
func (s *LMDBRaw) GetOutAt(node uint32, rev int, fn EdgeFunc) error {
	return s.scan(true, node, rev, fn)
}

func (s *LMDBRaw) ThreeHop(node uint32, fn KeyFunc) (int, error) {
	var n int
	err := s.read(func(*lmdb.Txn) error {
		var err error
		n, err = s.hops.ThreeHop(s.g.Nodes[node].Key, func(key string, emit func(string)) error {
			var err error
			s.prefix, err = lmdbScan(s.outCur, s.prefix, key, func(_, peer string, _ []byte) { emit(peer) })
			return err
		}, fn.visit)
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

// FreshArg is the canonical key: a user's one-shot process asks by key.
func (s *LMDBRaw) FreshArg(g *gen.Graph, node uint32) string { return g.Nodes[node].Key }

// FreshQuery checks that the node exists (as memctl get-out does), then
// scans its out-edges.
func (s *LMDBRaw) FreshQuery(dir, key string, opened func()) (n int, done func() error, err error) {
	env, err := lmdbOpen(dir, lmdb.Readonly)
	if err != nil {
		return 0, nil, err
	}
	done = func() error { env.Close(); return nil }
	opened()
	err = env.View(func(txn *lmdb.Txn) error {
		txn.RawRead = true
		nodes, err := txn.OpenDBI("nodes", 0)
		if err != nil {
			return fmt.Errorf("lmdb-raw: %w", err)
		}
		out, err := txn.OpenDBI("out", 0)
		if err != nil {
			return fmt.Errorf("lmdb-raw: %w", err)
		}
		if _, err := txn.Get(nodes, []byte(key)); err != nil {
			return fmt.Errorf("lmdb-raw: node %q: %w", key, err)
		}
		cur, err := txn.OpenCursor(out)
		if err != nil {
			return err
		}
		defer cur.Close()
		_, err = lmdbScan(cur, nil, key, func(_, peer string, _ []byte) {
			if peer != "" {
				n++
			}
		})
		return err
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
		}{{"nodes", s.nodes}, {"out", s.out}, {"in", s.in}} {
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
