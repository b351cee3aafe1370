package storesnap

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
)

// ExportBytesKeeping is ExportBytesFiltered by a state that keeps at most
// keep bytes of the store's records (keep < 0: none, so that every pass of
// the writer and of findMissing reads the store again, the way every
// export was made before states kept them). Tests compare the exports;
// rescanned says whether the state ended up reading the store each pass.
func ExportBytesKeeping(s *lmdbstore.Store, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions, keep int) (out []byte, rescanned bool, err error) {
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		st, err := NewStateFiltered(r, at, f)
		if err != nil {
			return err
		}
		st.rescan, st.keepBytes = keep < 0, keep
		out, _, err = snapshot.Write(st, st.withIndex(opts))
		rescanned = st.rescan
		return err
	})
	return out, rescanned, err
}

// ExportFromKeeping is ExportBytesKeeping started from b (ExportInMemoryFrom);
// fromBase says whether it did.
func ExportFromKeeping(s *lmdbstore.Store, at lmdbstore.At, f lmdbstore.StatusFilter, opts snapshot.WriterOptions, b *Base, keep int) (out []byte, fromBase bool, err error) {
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		st, err := NewStateFiltered(r, at, f)
		if err != nil {
			return err
		}
		st.rescan, st.keepBytes = keep < 0, keep
		if fromBase, err = st.useBase(b); err != nil {
			return err
		}
		out, _, err = snapshot.Write(st, st.withIndex(opts))
		return err
	})
	return out, fromBase, err
}
