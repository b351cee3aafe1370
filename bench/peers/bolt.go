package peers

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/memctl/memctl/bench/gen"
	bolt "go.etcd.io/bbolt"
)

// Bolt is bbolt with the layout of layout.go (buckets nodes, keys, names, out,
// in), default options: every commit is fsynced.
type Bolt struct {
	db   *bolt.DB
	g    *gen.Graph
	rev  int
	hops HopScratch
	kbuf []byte
	nbuf []byte
}

var (
	bNodes = []byte("nodes")
	bKeys  = []byte("keys")
	bNames = []byte("names")
	bOut   = []byte("out")
	bIn    = []byte("in")
)

func (s *Bolt) Name() string { return "bbolt" }

func boltOpen(dir string, readOnly bool) (*bolt.DB, error) {
	return bolt.Open(filepath.Join(dir, "graph.bolt"), 0o600, &bolt.Options{Timeout: 5 * time.Second, ReadOnly: readOnly})
}

func (s *Bolt) Create(dir string, g *gen.Graph) error {
	db, err := boltOpen(dir, false)
	if err != nil {
		return err
	}
	s.db, s.g = db, g
	return db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bNodes, bKeys, bNames, bOut, bIn} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// putEdge writes both keys of e. bbolt keeps references to keys and values
// until the transaction ends, so each Put gets its own slices.
func (s *Bolt) putEdge(tx *bolt.Tx, e gen.Edge) error {
	v := edgeVal(make([]byte, 0, edgeValLen), s.rev)
	out := edgeKey(make([]byte, 0, edgeKeyLen), uint64(e.Src), uint32(e.Rel), uint64(e.Dst))
	if err := tx.Bucket(bOut).Put(out, v); err != nil {
		return err
	}
	in := edgeKey(make([]byte, 0, edgeKeyLen), uint64(e.Dst), uint32(e.Rel), uint64(e.Src))
	return tx.Bucket(bIn).Put(in, v)
}

func (s *Bolt) Load(b Batch) error {
	s.rev++
	return s.db.Update(func(tx *bolt.Tx) error {
		var p []byte
		nodes, keys, names := tx.Bucket(bNodes), tx.Bucket(bKeys), tx.Bucket(bNames)
		for _, n := range b.Nodes {
			node := s.g.Nodes[n]
			p = s.g.Payload(n, p[:0])
			// bbolt keeps references to key and value until commit: fresh slices.
			k := idKey(nil, uint64(n))
			v := nodeVal(nil, uint8(node.Type), s.rev, node.Key, p)
			if err := nodes.Put(k, v); err != nil {
				return err
			}
			if err := keys.Put([]byte(node.Key), k); err != nil {
				return err
			}
			if err := names.Put(k, []byte(node.Key)); err != nil {
				return err
			}
		}
		for _, e := range b.Edges {
			if err := s.putEdge(tx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Bolt) PutEdge(e gen.Edge) error {
	s.rev++
	return s.db.Update(func(tx *bolt.Tx) error {
		return s.putEdge(tx, e)
	})
}

func (s *Bolt) Settle() error { return nil }

// scanPrefix calls fn for every key of bucket under the 8-byte id prefix.
func scanPrefix(tx *bolt.Tx, bucket []byte, id uint64, prefix []byte, fn func(k, v []byte)) []byte {
	prefix = idKey(prefix, id)
	c := tx.Bucket(bucket).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		fn(k, v)
	}
	return prefix
}

// scan hands fn every edge under node's prefix in bucket (with rev > 0,
// only those written at or before rev), resolving each peer's key in the
// names bucket.
func (s *Bolt) scan(bucket []byte, node uint32, rev int, fn EdgeFunc) error {
	return s.db.View(func(tx *bolt.Tx) error {
		names := tx.Bucket(bNames)
		var err error
		s.kbuf = scanPrefix(tx, bucket, uint64(node), s.kbuf, func(k, v []byte) {
			if err != nil || rev > 0 && valRev(v) > rev {
				return
			}
			rel, peer := splitEdgeKey(k)
			var key []byte
			if key, err = s.key(names, peer); err == nil {
				fn(relName(rel), aliasString(key))
			}
		})
		return err
	})
}

// key is the canonical key of node id (from the names bucket).
func (s *Bolt) key(names *bolt.Bucket, id uint64) ([]byte, error) {
	s.nbuf = idKey(s.nbuf, id)
	k := names.Get(s.nbuf)
	if k == nil {
		return nil, errNoName
	}
	return k, nil
}

func (s *Bolt) GetOut(node uint32, fn EdgeFunc) error { return s.scan(bOut, node, 0, fn) }
func (s *Bolt) GetIn(node uint32, fn EdgeFunc) error  { return s.scan(bIn, node, 0, fn) }

// GetOutAt filters on the revision stored with each edge: an equivalent
// only for insert-only histories (deletes are not kept).
func (s *Bolt) GetOutAt(node uint32, rev int, fn EdgeFunc) error { return s.scan(bOut, node, rev, fn) }

func (s *Bolt) ThreeHop(node uint32, fn KeyFunc) (int, error) {
	var n int
	err := s.db.View(func(tx *bolt.Tx) error {
		names := tx.Bucket(bNames)
		var err error
		n, err = s.hops.ThreeHop(uint64(node), func(id uint64, emit func(uint64)) error {
			s.kbuf = scanPrefix(tx, bOut, id, s.kbuf, func(k, _ []byte) {
				_, peer := splitEdgeKey(k)
				emit(peer)
			})
			return nil
		}, func(id uint64) error {
			key, err := s.key(names, id)
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
func (s *Bolt) DiffSince(since int) (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bNodes).ForEach(func(_, v []byte) error {
			if valRev(v[1:]) > since {
				n++
			}
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bOut).ForEach(func(_, v []byte) error {
			if valRev(v) > since {
				n++
			}
			return nil
		})
	})
	return n, err
}

func (s *Bolt) FreshArg(_ *gen.Graph, node uint32) string {
	return strconv.FormatUint(uint64(node), 10)
}

func (s *Bolt) FreshQuery(dir, arg string, opened func()) (n int, done func() error, err error) {
	id, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		return 0, done, err
	}
	db, err := boltOpen(dir, true)
	if err != nil {
		return 0, nil, err
	}
	done = db.Close
	opened()
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bOut) == nil {
			return fmt.Errorf("bbolt: no out bucket in %s", dir)
		}
		names := tx.Bucket(bNames)
		var err error
		scanPrefix(tx, bOut, id, nil, func(k, _ []byte) {
			_, peer := splitEdgeKey(k)
			var key []byte
			if err == nil {
				key, err = s.key(names, peer)
			}
			if len(key) > 0 {
				n++
			}
		})
		return err
	})
	return n, done, err
}

func (s *Bolt) Close() error {
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}

// Space is each bucket's pages (bbolt's bucket statistics).
func (s *Bolt) Space() ([]Keyspace, error) {
	var out []Keyspace
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bNodes, bKeys, bNames, bOut, bIn} {
			st := tx.Bucket(b).Stats()
			out = append(out, Keyspace{Name: string(b), Entries: int64(st.KeyN),
				Pages: int64(st.BranchPageN + st.BranchOverflowN + st.LeafPageN + st.LeafOverflowN),
				Bytes: int64(st.BranchAlloc + st.LeafAlloc)})
		}
		return nil
	})
	return out, err
}

// VacuumInto is bbolt's Compact (what `bbolt compact` runs): every bucket
// rewritten into a new file with fill percent 1.
func (s *Bolt) VacuumInto(dir string) error {
	dst, err := boltOpen(dir, false)
	if err != nil {
		return err
	}
	if err := bolt.Compact(dst, s.db, 64<<20); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
