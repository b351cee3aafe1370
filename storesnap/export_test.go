package storesnap

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
)

// ExportBytesRescanning is ExportBytesFiltered by the state as it was
// before it kept the records it read: every pass of the writer and of
// findMissing reads the store again. Tests compare the two exports.
func ExportBytesRescanning(s *lmdbstore.Store, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions) ([]byte, error) {
	var out []byte
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		st, err := NewStateFiltered(r, at, f)
		if err != nil {
			return err
		}
		st.rescan = true
		out, _, err = snapshot.Write(st, st.withIndex(opts))
		return err
	})
	return out, err
}
