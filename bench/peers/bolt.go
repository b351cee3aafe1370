package peers

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/memctl/memctl/bench/gen"
	bolt "go.etcd.io/bbolt"
)

// Bolt is bbolt with the layout of layout.go (buckets nodes, out, in,
// keyed by canonical keys), default options: every commit is fsynced.
type Bolt struct {
	db   *bolt.DB
	g    *gen.Graph
	rev  int
	hops KeyHopScratch
	pbuf []byte
}

var (
	bNodes = []byte("nodes")
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
		for _, b := range [][]byte{bNodes, bOut, bIn} {
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
	src, rel, dst := s.g.Nodes[e.Src].Key, e.Rel.Name(), s.g.Nodes[e.Dst].Key
	if err := firstError(checkName(src), firstError(checkName(rel), checkName(dst))); err != nil {
		return err
	}
	v := edgeVal(make([]byte, 0, edgeValLen), s.rev)
	if err := tx.Bucket(bOut).Put(edgeKey(nil, src, rel, dst), v); err != nil {
		return err
	}
	return tx.Bucket(bIn).Put(edgeKey(nil, dst, rel, src), v)
}

func (s *Bolt) Load(b Batch) error {
	s.rev++
	return s.db.Update(func(tx *bolt.Tx) error {
		nodes := tx.Bucket(bNodes)
		for _, n := range b.Nodes {
			node := s.g.Nodes[n]
			if err := checkName(node.Key); err != nil {
				return err
			}
			s.pbuf = s.g.Payload(n, s.pbuf[:0])
			// bbolt keeps references to key and value until commit: fresh slices.
			if err := nodes.Put([]byte(node.Key), nodeVal(nil, uint8(node.Type), s.rev, s.pbuf)); err != nil {
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

// boltScan hands fn the relation, peer key and value of every edge of key
// in bucket b: one cursor seek to "key 0x00", then Next while the prefix
// holds.
func boltScan(b *bolt.Bucket, key string, fn func(rel, peer string, v []byte)) error {
	var pbuf [256]byte
	prefix := nodePrefix(pbuf[:0], key)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		rel, peer, err := splitEdgeKey(k, len(prefix))
		if err != nil {
			return err
		}
		fn(rel, peer, v)
	}
	return nil
}

// scan hands fn every edge of node in bucket (with rev > 0, only those
// written at or before rev).
func (s *Bolt) scan(bucket []byte, node uint32, rev int, fn EdgeFunc) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return boltScan(tx.Bucket(bucket), s.g.Nodes[node].Key, func(rel, peer string, v []byte) {
			if rev == 0 || valRev(v) <= rev {
				fn(rel, peer)
			}
		})
	})
}

func (s *Bolt) GetOut(node uint32, fn EdgeFunc) error { return s.scan(bOut, node, 0, fn) }
func (s *Bolt) GetIn(node uint32, fn EdgeFunc) error  { return s.scan(bIn, node, 0, fn) }

// GetOutAt filters on the revision stored with each edge: an equivalent
// only for insert-only histories (deletes are not kept).
func (s *Bolt) GetOutAt(node uint32, rev int, fn EdgeFunc) error { return s.scan(bOut, node, rev, fn) }

func (s *Bolt) ThreeHop(node uint32, fn KeyFunc) (int, error) {
	var n int
	err := s.db.View(func(tx *bolt.Tx) error {
		out := tx.Bucket(bOut)
		var err error
		n, err = s.hops.ThreeHop(s.g.Nodes[node].Key, func(key string, emit func(string)) error {
			return boltScan(out, key, func(_, peer string, _ []byte) { emit(peer) })
		}, fn.visit)
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

// FreshArg is the canonical key: a user's one-shot process asks by key.
func (s *Bolt) FreshArg(g *gen.Graph, node uint32) string { return g.Nodes[node].Key }

// FreshQuery checks that the node exists (as memctl get-out does), then
// scans its out-edges.
func (s *Bolt) FreshQuery(dir, key string, opened func()) (n int, done func() error, err error) {
	db, err := boltOpen(dir, true)
	if err != nil {
		return 0, nil, err
	}
	done = db.Close
	opened()
	err = db.View(func(tx *bolt.Tx) error {
		nodes, out := tx.Bucket(bNodes), tx.Bucket(bOut)
		if nodes == nil || out == nil {
			return fmt.Errorf("bbolt: no nodes or out bucket in %s", dir)
		}
		if nodes.Get([]byte(key)) == nil {
			return fmt.Errorf("bbolt: no node %q", key)
		}
		return boltScan(out, key, func(_, peer string, _ []byte) {
			if peer != "" {
				n++
			}
		})
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
		for _, b := range [][]byte{bNodes, bOut, bIn} {
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
