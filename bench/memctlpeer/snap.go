package memctlpeer

import (
	"fmt"
	"path/filepath"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// MemctlSnap is memctl's exported mmap snapshot read through csr/: the
// read workloads only (a snapshot is one revision: no point-in-time read,
// no diff). Every read starts from the node's id and pays the id → index
// lookup, as a caller holding a key would.
type MemctlSnap struct {
	gr   *csr.Graph
	ids  []uint64          // generator index -> NodeID
	rels map[uint32]string // relation id -> name
	// three-hop scratch: seen[i] == epoch marks node i visited
	seen      []uint32
	epoch     uint32
	cur, next []uint32
	all       []uint32 // every node seen, in discovery order
}

const snapFile = "graph.snap"

func (s *MemctlSnap) Name() string                    { return "memctl-snap" }
func (s *MemctlSnap) Create(string, *gen.Graph) error { return peers.ErrNotSupported }
func (s *MemctlSnap) Load(peers.Batch) error          { return peers.ErrNotSupported }
func (s *MemctlSnap) PutEdge(gen.Edge) error          { return peers.ErrNotSupported }
func (s *MemctlSnap) Settle() error                   { return nil }

// DeriveFrom exports src's latest state to dir/graph.snap as `memctl
// export --include-superseded --include-expired` does and maps it: the
// workload's supersedes edges are graph data here, not memory semantics,
// so every edge is kept (the peers answer with all of them).
func (s *MemctlSnap) DeriveFrom(src peers.System, dir string) error {
	m, ok := src.(*Memctl)
	if !ok || m.st == nil {
		return fmt.Errorf("memctl-snap: source is not an open memctl store")
	}
	path := filepath.Join(dir, snapFile)
	all := lmdbstore.StatusFilter{IncludeSuperseded: true, IncludeExpired: true}
	if _, _, err := storesnap.ExportFiltered(m.st, path, lmdbstore.At{}, all, snapshot.WriterOptions{}); err != nil {
		return fmt.Errorf("memctl-snap: export: %w", err)
	}
	var err error
	if s.gr, err = csr.Open(path); err != nil {
		return err
	}
	s.ids = make([]uint64, len(m.ids))
	for i, id := range m.ids {
		s.ids[i] = uint64(id)
	}
	rels, err := s.gr.Relations()
	if err != nil {
		return err
	}
	s.rels = make(map[uint32]string, len(rels))
	for _, rel := range rels {
		s.rels[rel.ID] = rel.Name
	}
	s.seen = make([]uint32, s.gr.NumNodes())
	return nil
}

func (s *MemctlSnap) index(node uint32) (csr.NodeIndex, error) {
	i, ok, err := s.gr.Lookup(s.ids[node])
	if err == nil && !ok {
		err = fmt.Errorf("memctl-snap: node %016x not in snapshot", s.ids[node])
	}
	return i, err
}

func (s *MemctlSnap) GetOut(node uint32, fn peers.EdgeFunc) error {
	i, err := s.index(node)
	if err != nil {
		return err
	}
	targets, rels, _, err := s.gr.Out(i)
	if err != nil {
		return err
	}
	return s.emit(targets, rels, fn)
}

func (s *MemctlSnap) GetIn(node uint32, fn peers.EdgeFunc) error {
	i, err := s.index(node)
	if err != nil {
		return err
	}
	sources, rels, _, err := s.gr.In(i)
	if err != nil {
		return err
	}
	return s.emit(sources, rels, fn)
}

// emit hands fn each peer's key and relation name.
func (s *MemctlSnap) emit(ends, rels []uint32, fn peers.EdgeFunc) error {
	for k, t := range ends {
		key, err := s.gr.Key(csr.NodeIndex(t))
		if err != nil {
			return err
		}
		fn(s.rels[rels[k]], key)
	}
	return nil
}

// ThreeHop walks dense indices with an epoch-stamped visited array: no map,
// no allocation once the scratch has grown.
func (s *MemctlSnap) ThreeHop(node uint32, fn peers.KeyFunc) (int, error) {
	start, err := s.index(node)
	if err != nil {
		return 0, err
	}
	s.epoch++
	if s.epoch == 0 {
		clear(s.seen)
		s.epoch = 1
	}
	s.seen[start] = s.epoch
	s.all = append(s.all[:0], start)
	s.cur = append(s.cur[:0], start)
	for depth := 0; depth < 3 && len(s.cur) > 0; depth++ {
		s.next = s.next[:0]
		for _, v := range s.cur {
			targets, _, _, err := s.gr.Out(v)
			if err != nil {
				return 0, err
			}
			for _, t := range targets {
				if int(t) >= len(s.seen) {
					return 0, fmt.Errorf("memctl-snap: target %d out of range", t)
				}
				if s.seen[t] != s.epoch {
					s.seen[t] = s.epoch
					s.next = append(s.next, t)
					s.all = append(s.all, t)
				}
			}
		}
		s.cur, s.next = s.next, s.cur
	}
	for _, v := range s.all {
		key, err := s.gr.Key(v)
		if err != nil {
			return 0, err
		}
		fn(key)
	}
	return len(s.all), nil
}

func (s *MemctlSnap) GetOutAt(uint32, int, peers.EdgeFunc) error { return peers.ErrNotSupported }
func (s *MemctlSnap) DiffSince(int) (int, error)                 { return 0, peers.ErrNotSupported }

func (s *MemctlSnap) FreshArg(g *gen.Graph, node uint32) string { return g.Nodes[node].Key }

// FreshQuery maps the snapshot and answers get-out by canonical key.
func (s *MemctlSnap) FreshQuery(dir, key string, opened func()) (n int, done func() error, err error) {
	gr, err := csr.Open(filepath.Join(dir, snapFile))
	if err != nil {
		return 0, nil, err
	}
	done = gr.Close
	opened()
	i, ok, err := gr.LookupKey(key)
	if err != nil {
		return 0, done, err
	}
	if !ok {
		return 0, done, fmt.Errorf("memctl-snap: no node %q", key)
	}
	targets, rels, _, err := gr.Out(i)
	if err != nil {
		return 0, done, err
	}
	for k, t := range targets {
		if _, err := gr.Key(csr.NodeIndex(t)); err != nil {
			return 0, done, err
		}
		if _, err := gr.Relation(rels[k]); err != nil {
			return 0, done, err
		}
		n++
	}
	return n, done, nil
}

func (s *MemctlSnap) Close() error {
	if s.gr == nil {
		return nil
	}
	err := s.gr.Close()
	s.gr = nil
	return err
}
