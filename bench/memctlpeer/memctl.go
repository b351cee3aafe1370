package memctlpeer

import (
	"encoding/json"
	"path/filepath"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
	"github.com/memctl/memctl/lmdbstore"
)

// New returns a zero System by name: memctl, memctl-snap, or a peer.
func New(name string) (peers.System, error) {
	switch name {
	case "memctl":
		return &Memctl{}, nil
	case "memctl-snap":
		return &MemctlSnap{}, nil
	}
	return peers.New(name)
}

// Memctl is this store through its Go API: one Update per batch (default
// options, so every commit is synced), one View per read, ScanOut/ScanIn
// for the zero-allocation scans.
type Memctl struct {
	st   *lmdbstore.Store
	g    *gen.Graph
	dir  string
	revs []lmdbstore.Revision // harness revision -> store revision
	ids  []lmdbstore.NodeID   // generator index -> NodeID
	hops peers.HopScratch
	// three-hop scratch: the ids reached and their keys
	hopIDs  []lmdbstore.NodeID
	hopKeys []string
}

func (s *Memctl) Name() string { return "memctl" }

// StorePath is where the store lives under the system's directory.
func memctlPath(dir string) string { return filepath.Join(dir, "store") }

func (s *Memctl) Create(dir string, g *gen.Graph) error {
	st, err := lmdbstore.Init(memctlPath(dir), lmdbstore.Options{})
	if err != nil {
		return err
	}
	s.st, s.g, s.dir = st, g, dir
	s.revs = []lmdbstore.Revision{0}
	return nil
}

// Store is the open store (for the snapshot exporter).
func (s *Memctl) Store() *lmdbstore.Store { return s.st }

func (s *Memctl) Load(b peers.Batch) error {
	payloads := make([]json.RawMessage, len(b.Nodes))
	for i, n := range b.Nodes {
		payloads[i] = s.g.Payload(n, nil)
	}
	c, err := s.st.Update(lmdbstore.WriteMeta{Scope: "repo", RunID: "bench"}, func(tx *lmdbstore.WriteTxn) error {
		for i, n := range b.Nodes {
			node := s.g.Nodes[n]
			if err := tx.PutNode(lmdbstore.NodePut{Key: node.Key, Type: node.Type.String(), Payload: payloads[i]}); err != nil {
				return err
			}
		}
		for _, e := range b.Edges {
			if err := tx.PutEdge(lmdbstore.EdgePut{Src: s.g.Nodes[e.Src].Key, Rel: e.Rel.Name(), Dst: s.g.Nodes[e.Dst].Key}); err != nil {
				return err
			}
		}
		return nil
	})
	s.revs = append(s.revs, c.Rev)
	return err
}

func (s *Memctl) PutEdge(e gen.Edge) error {
	c, err := s.st.Update(lmdbstore.WriteMeta{Scope: "repo", RunID: "bench"}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutEdge(lmdbstore.EdgePut{Src: s.g.Nodes[e.Src].Key, Rel: e.Rel.Name(), Dst: s.g.Nodes[e.Dst].Key})
	})
	s.revs = append(s.revs, c.Rev)
	return err
}

// Settle computes every node's id once, outside the timed reads (a caller
// holding a key hashes it; the read itself starts from the id).
func (s *Memctl) Settle() error {
	s.ids = make([]lmdbstore.NodeID, len(s.g.Nodes))
	for i, n := range s.g.Nodes {
		s.ids[i] = lmdbstore.IDOf(n.Key)
	}
	return nil
}

func (s *Memctl) scan(out bool, node uint32, at lmdbstore.At, fn peers.EdgeFunc) error {
	return s.st.View(func(r *lmdbstore.ReadTxn) error {
		return scanKeys(r, out, s.ids[node], at, fn)
	})
}

// scanKeys is a get-out/get-in returning each peer's canonical key and
// relation name (ReadTxn.Neighbours).
func scanKeys(r *lmdbstore.ReadTxn, out bool, id lmdbstore.NodeID, at lmdbstore.At, fn peers.EdgeFunc) error {
	return r.Neighbours(out, id, 0, at, func(n lmdbstore.Neighbour) bool {
		fn(n.RelName, n.Key)
		return true
	})
}

func (s *Memctl) GetOut(node uint32, fn peers.EdgeFunc) error {
	return s.scan(true, node, lmdbstore.At{}, fn)
}

func (s *Memctl) GetIn(node uint32, fn peers.EdgeFunc) error {
	return s.scan(false, node, lmdbstore.At{}, fn)
}

func (s *Memctl) GetOutAt(node uint32, rev int, fn peers.EdgeFunc) error {
	return s.scan(true, node, lmdbstore.AtRevision(s.revs[rev]), fn)
}

func (s *Memctl) ThreeHop(node uint32, fn peers.KeyFunc) (int, error) {
	var n int
	err := s.st.View(func(r *lmdbstore.ReadTxn) error {
		var err error
		s.hopIDs = s.hopIDs[:0]
		n, err = s.hops.ThreeHop(uint64(s.ids[node]), func(id uint64, emit func(uint64)) error {
			return r.ScanOut(lmdbstore.NodeID(id), 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool {
				emit(uint64(e.Peer))
				return true
			})
		}, func(id uint64) error {
			s.hopIDs = append(s.hopIDs, lmdbstore.NodeID(id))
			return nil
		})
		if err != nil {
			return err
		}
		// The keys of every node reached, resolved in one pass.
		if cap(s.hopKeys) < len(s.hopIDs) {
			s.hopKeys = make([]string, len(s.hopIDs))
		}
		s.hopKeys = s.hopKeys[:len(s.hopIDs)]
		if err := r.KeysOf(s.hopIDs, s.hopKeys); err != nil {
			return err
		}
		for _, k := range s.hopKeys {
			fn(k)
		}
		return err
	})
	return n, err
}

// DiffSince reads the append log after rev and counts node and edge writes.
func (s *Memctl) DiffSince(rev int) (int, error) {
	n := 0
	err := s.st.View(func(r *lmdbstore.ReadTxn) error {
		return r.DiffSince(lmdbstore.AtRevision(s.revs[rev]), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			if op.Kind == lmdbstore.OpPutNode || op.Kind == lmdbstore.OpPutEdge {
				n++
			}
			return nil
		})
	})
	return n, err
}

// FreshArg is the canonical key: a fresh process asks by key, as memctl
// get-out does.
func (s *Memctl) FreshArg(g *gen.Graph, node uint32) string { return g.Nodes[node].Key }

func (s *Memctl) FreshQuery(dir, key string, opened func()) (n int, done func() error, err error) {
	st, err := lmdbstore.Open(memctlPath(dir), lmdbstore.Options{ReadOnly: true})
	if err != nil {
		return 0, nil, err
	}
	done = st.Close
	opened()
	err = st.View(func(r *lmdbstore.ReadTxn) error {
		if _, err := r.KeyOf(lmdbstore.IDOf(key)); err != nil { // the key is known (as get-out checks)
			return err
		}
		return scanKeys(r, true, lmdbstore.IDOf(key), lmdbstore.At{}, func(string, string) { n++ })
	})
	return n, done, err
}

func (s *Memctl) Close() error {
	if s.st == nil {
		return nil
	}
	err := s.st.Close()
	s.st = nil
	return err
}

// Space is the store's per-keyspace space (memctl stats).
func (s *Memctl) Space() ([]peers.Keyspace, error) {
	ks, err := s.st.Space()
	out := make([]peers.Keyspace, len(ks))
	for i, k := range ks {
		out[i] = peers.Keyspace{Name: k.Name, Entries: int64(k.Entries), Pages: int64(k.Pages()), Bytes: int64(k.Bytes)}
	}
	return out, err
}

// BulkLoad is memctl import / batch --bulk: one lmdbstore.Bulk into a new
// store (keyspaces appended in key order), durable at commit.
func (s *Memctl) BulkLoad(dir string, g *gen.Graph, batch peers.Batch) error {
	st, err := lmdbstore.Init(memctlPath(dir), lmdbstore.Options{})
	if err != nil {
		return err
	}
	b := st.NewBulk(lmdbstore.WriteMeta{Scope: "repo", RunID: "bench"})
	for _, n := range batch.Nodes {
		node := g.Nodes[n]
		if err = b.PutNode(lmdbstore.NodePut{Key: node.Key, Type: node.Type.String(), Payload: g.Payload(n, nil)}); err != nil {
			break
		}
	}
	for _, e := range batch.Edges {
		if err != nil {
			break
		}
		err = b.PutEdge(lmdbstore.EdgePut{Src: g.Nodes[e.Src].Key, Rel: e.Rel.Name(), Dst: g.Nodes[e.Dst].Key})
	}
	if err == nil {
		_, err = b.Commit()
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return err
}

// VacuumInto is `memctl vacuum --to`: every keyspace, history included,
// copied in key order into full pages.
func (s *Memctl) VacuumInto(dir string) error {
	_, err := s.st.VacuumInto(memctlPath(dir))
	return err
}
