package freshness

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/lmdbstore"
)

// ErrNoRevisionAtCommit: no ingest was recorded at the commit or at any of
// its ancestors.
var ErrNoRevisionAtCommit = errors.New("no revision ingested at or before that commit")

// CommitError: git could not resolve the commit in the tree's repository.
type CommitError struct {
	Commit string
	Err    error
}

func (e *CommitError) Error() string { return fmt.Sprintf("commit %q: %v", e.Commit, e.Err) }
func (e *CommitError) Unwrap() error { return e.Err }

// Resolution is where a commit lands in the store's history.
type Resolution struct {
	// Rev is the last revision at which the store's code graph was
	// ingested from the chosen commit: the view to read "as of" it
	// (memory written meanwhile included).
	Rev lmdbstore.Revision `json:"rev"`
	// IngestRev is the revision that recorded the chosen commit.
	IngestRev lmdbstore.Revision `json:"ingest_rev"`
	Commit    string             `json:"commit"` // the commit recorded (the one asked, or its nearest ingested ancestor)
	Dirty     bool               `json:"dirty"`  // that ingest read uncommitted changes too
	Distance  int                `json:"distance"`
}

// ResolveCommit maps a commit (anything git rev-parse takes) of the
// repository holding dir to the last revision ingested at that commit, or
// else at its nearest ingested ancestor (fewest commits between; among
// equals the latest; a clean ingest before a dirty one of the same
// commit). It reads the versions of memctl/ingest/git (SPEC.md §9.7).
func ResolveCommit(s *lmdbstore.Store, dir, commit string) (Resolution, error) {
	out, err := ingest.GitOutput(dir, "rev-parse", "--verify", "-q", commit+"^{commit}")
	if err != nil {
		return Resolution{}, &CommitError{commit, err}
	}
	want := strings.TrimSpace(string(out))
	type period struct {
		from, to lmdbstore.Revision
		st       ingest.GitState
	}
	var periods []period
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		latest := r.Revision()
		err := r.KVVersions(codetree.RecordScope, codetree.IngestNamespace, codetree.GitKey, func(v lmdbstore.Version) error {
			if n := len(periods); n > 0 && periods[n-1].to == latest {
				periods[n-1].to = v.Rev - 1
			}
			var st ingest.GitState
			if v.Deleted || json.Unmarshal(v.Payload, &st) != nil || st.Commit == "" {
				return nil
			}
			periods = append(periods, period{from: v.Rev, to: latest, st: st})
			return nil
		})
		return err
	})
	if err != nil {
		return Resolution{}, err
	}
	dist := map[string]int{}
	best := -1
	var res Resolution
	for i, p := range periods {
		d, seen := dist[p.st.Commit]
		if !seen {
			n, ok, err := ingest.GitDistance(dir, p.st.Commit, want)
			if err != nil {
				return Resolution{}, err
			}
			d = n
			if !ok {
				d = -1
			}
			dist[p.st.Commit] = d
		}
		if d < 0 {
			continue
		}
		better := best < 0 || d < res.Distance || d == res.Distance && (res.Dirty || !p.st.Dirty)
		if better {
			best = i
			res = Resolution{Rev: p.to, IngestRev: p.from, Commit: p.st.Commit, Dirty: p.st.Dirty, Distance: d}
		}
	}
	if best < 0 {
		return Resolution{}, fmt.Errorf("%w: %s", ErrNoRevisionAtCommit, want)
	}
	return res, nil
}
