package memctlpeer

import (
	"fmt"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
)

// MemctlSnap is memctl's exported mmap snapshot read through csr/: the
// read workloads only.
type MemctlSnap struct{}

var errNoSnapshot = fmt.Errorf("snapshot exporter not available yet: %w", peers.ErrNotSupported)

func (s *MemctlSnap) Name() string                               { return "memctl-snap" }
func (s *MemctlSnap) Create(string, *gen.Graph) error            { return peers.ErrNotSupported }
func (s *MemctlSnap) Load(peers.Batch) error                     { return peers.ErrNotSupported }
func (s *MemctlSnap) PutEdge(gen.Edge) error                     { return peers.ErrNotSupported }
func (s *MemctlSnap) Settle() error                              { return nil }
func (s *MemctlSnap) DeriveFrom(peers.System, string) error      { return errNoSnapshot }
func (s *MemctlSnap) GetOut(uint32, peers.EdgeFunc) error        { return errNoSnapshot }
func (s *MemctlSnap) GetIn(uint32, peers.EdgeFunc) error         { return errNoSnapshot }
func (s *MemctlSnap) ThreeHop(uint32) (int, error)               { return 0, errNoSnapshot }
func (s *MemctlSnap) GetOutAt(uint32, int, peers.EdgeFunc) error { return peers.ErrNotSupported }
func (s *MemctlSnap) DiffSince(int) (int, error)                 { return 0, peers.ErrNotSupported }
func (s *MemctlSnap) FreshArg(*gen.Graph, uint32) string         { return "" }
func (s *MemctlSnap) FreshQuery(string, string) (int, error)     { return 0, errNoSnapshot }
func (s *MemctlSnap) Close() error                               { return nil }
func (s *MemctlSnap) Decode(uint32, uint64) (gen.Rel, uint32, error) {
	return 0, 0, errNoSnapshot
}
