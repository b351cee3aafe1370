package peers

import (
	"bytes"
	"slices"

	"github.com/memctl/memctl/bench/gen"
	bolt "go.etcd.io/bbolt"
)

// bulkVia creates sys's store in dir, runs load (one transaction) and
// closes it.
func bulkVia(sys System, dir string, g *gen.Graph, load func() error) error {
	if err := sys.Create(dir, g); err != nil {
		return err
	}
	err := load()
	if cerr := sys.Close(); err == nil {
		err = cerr
	}
	return err
}

// BulkLoad for SQLite and raw LMDB is their Load (prepared statements or
// puts) with everything in one transaction.
func (s *SQLite) BulkLoad(dir string, g *gen.Graph, b Batch) error {
	sys := &SQLite{}
	return bulkVia(sys, dir, g, func() error { return sys.Load(b) })
}

// BulkLoad for bbolt writes every bucket's keys in ascending order with a
// fill percent of 1 (bbolt's fastest way to build a B+tree: pages fill
// left to right and split once). Through Load, one transaction of random
// inserts slows down as it grows (10K nodes: 7.7 s; 100K: over 30 minutes).
func (s *Bolt) BulkLoad(dir string, g *gen.Graph, b Batch) error {
	sys := &Bolt{}
	return bulkVia(sys, dir, g, func() error { return sys.sortedLoad(b) })
}

func (s *Bolt) sortedLoad(b Batch) error {
	s.rev++
	type kv struct{ k, v []byte }
	byKey := func(x []kv) {
		slices.SortFunc(x, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	}
	var nodes, out, in []kv
	for _, n := range b.Nodes {
		node := s.g.Nodes[n]
		if err := checkName(node.Key); err != nil {
			return err
		}
		nodes = append(nodes, kv{[]byte(node.Key), nodeVal(nil, uint8(node.Type), s.rev, s.g.Payload(n, nil))})
	}
	for _, e := range b.Edges {
		src, rel, dst := s.g.Nodes[e.Src].Key, e.Rel.Name(), s.g.Nodes[e.Dst].Key
		if err := firstError(checkName(rel), firstError(checkName(src), checkName(dst))); err != nil {
			return err
		}
		v := edgeVal(make([]byte, 0, edgeValLen), s.rev)
		out = append(out, kv{edgeKey(nil, src, rel, dst), v})
		in = append(in, kv{edgeKey(nil, dst, rel, src), v})
	}
	for _, x := range [][]kv{nodes, out, in} {
		byKey(x)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		for i, name := range [][]byte{bNodes, bOut, bIn} {
			bk := tx.Bucket(name)
			bk.FillPercent = 1
			for _, x := range [][]kv{nodes, out, in}[i] {
				if err := bk.Put(x.k, x.v); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
func (s *LMDBRaw) BulkLoad(dir string, g *gen.Graph, b Batch) error {
	sys := &LMDBRaw{}
	return bulkVia(sys, dir, g, func() error { return sys.Load(b) })
}
