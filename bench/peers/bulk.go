package peers

import "github.com/memctl/memctl/bench/gen"

// bulkVia loads b as one transaction through sys's own Create and Load (a
// peer's fastest plain way: one transaction, prepared statements or
// buckets as in its Load) and closes it.
func bulkVia(sys System, dir string, g *gen.Graph, b Batch) error {
	if err := sys.Create(dir, g); err != nil {
		return err
	}
	err := sys.Load(b)
	if cerr := sys.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *SQLite) BulkLoad(dir string, g *gen.Graph, b Batch) error {
	return bulkVia(&SQLite{}, dir, g, b)
}
func (s *Bolt) BulkLoad(dir string, g *gen.Graph, b Batch) error { return bulkVia(&Bolt{}, dir, g, b) }
func (s *LMDBRaw) BulkLoad(dir string, g *gen.Graph, b Batch) error {
	return bulkVia(&LMDBRaw{}, dir, g, b)
}
