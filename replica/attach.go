package replica

// Binding an existing store to a stream (memctl remote add, SPEC.md
// §13.4): the store's history and the stream's must agree on every
// revision both hold; whichever is longer then extends the other.

import (
	"errors"
	"fmt"

	"github.com/memctl/memctl/lmdbstore"
)

// AttachReport says what Attach did.
type AttachReport struct {
	Local     lmdbstore.Revision // the store's latest revision
	Matched   lmdbstore.Revision // revisions both held, compared byte for byte
	Published int                // revisions of the store published to the stream
	Pos       uint64             // the remote position the store was bound at
}

// Attach binds s, opened without a Replicator, to r's stream (which must
// be open). A store whose history is not a prefix of the stream's, nor the
// stream's of the store's, is refused with ErrDiverged and nothing is
// published or bound. The caller writes the binding file and catches up.
func Attach(s *lmdbstore.Store, r *Remote) (AttachReport, error) {
	var rep AttachReport
	if err := s.View(func(rt *lmdbstore.ReadTxn) error { rep.Local = rt.Revision(); return nil }); err != nil {
		return rep, err
	}
	last, err := r.LastSeq()
	if err != nil {
		return rep, err
	}
	local := func(rev lmdbstore.Revision) ([]byte, error) {
		var b []byte
		err := s.View(func(rt *lmdbstore.ReadTxn) error {
			var err error
			b, err = rt.LogRecord(rev)
			return err
		})
		return b, err
	}
	if rep.Local > 0 {
		err = r.revisions(0, 1, last, func(rc lmdbstore.Replicated) error {
			mine, err := local(rc.Rev)
			if err != nil {
				return err
			}
			if string(mine) != string(rc.Record) {
				return fmt.Errorf("%w: revision %d of %s differs from this store's: the store's history is not a prefix of the stream's (nothing published, nothing bound)", lmdbstore.ErrDiverged, rc.Rev, r.addr)
			}
			rep.Matched, rep.Pos = rc.Rev, rc.Pos
			if rc.Rev == rep.Local {
				return errStop
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
	}
	for rev := rep.Matched + 1; rev <= rep.Local; rev++ {
		rec, err := local(rev)
		if err != nil {
			return rep, err
		}
		pos, err := r.Publish(lmdbstore.Pending{Rev: rev, Record: rec, Pos: rep.Pos, PosRev: rev - 1})
		if errors.Is(err, lmdbstore.ErrBehind) {
			return rep, fmt.Errorf("%w: %s moved while this store's history was published (at revision %d); run memctl remote add again", lmdbstore.ErrRemote, r.addr, rev)
		}
		if err != nil {
			return rep, err
		}
		rep.Pos = pos
		rep.Published++
	}
	return rep, s.Bind(rep.Pos, rep.Local)
}
