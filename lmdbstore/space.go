package lmdbstore

import "github.com/PowerDNS/lmdb-go/lmdb"

// KeyspaceSpace is the space one keyspace (LMDB named database) takes, as
// LMDB's own statistics give it: pages are whole, so Bytes includes the free
// room inside them (page fill).
type KeyspaceSpace struct {
	Name          string
	Entries       uint64
	BranchPages   uint64
	LeafPages     uint64
	OverflowPages uint64
	Bytes         uint64 // (branch + leaf + overflow pages) × page size
}

// InUse is the bytes of the pages of every keyspace in ks: what the store
// uses of its file.
func InUse(ks []KeyspaceSpace) uint64 {
	var n uint64
	for _, k := range ks {
		n += k.Bytes
	}
	return n
}

// Pages is the keyspace's page count.
func (k KeyspaceSpace) Pages() uint64 { return k.BranchPages + k.LeafPages + k.OverflowPages }

// Space returns the space of every keyspace in SPEC §2 order, read in one
// read transaction (mdb_stat per named database: no walk, O(1) each).
func (s *Store) Space() ([]KeyspaceSpace, error) {
	var out []KeyspaceSpace
	err := s.view(func(txn *lmdb.Txn) error {
		out = out[:0]
		return s.db.each(func(row *keyspace, dbi *lmdb.DBI) error {
			name := row.name
			st, err := txn.Stat(*dbi)
			if err != nil {
				return classifyLMDB(name, nil, err)
			}
			ks := KeyspaceSpace{Name: name, Entries: st.Entries, BranchPages: st.BranchPages,
				LeafPages: st.LeafPages, OverflowPages: st.OverflowPages}
			ks.Bytes = ks.Pages() * uint64(st.PSize)
			out = append(out, ks)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
