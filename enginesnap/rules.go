package enginesnap

import (
	"bytes"
	"errors"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// Kind selects what a snapshot must agree with a fresh export on, and so
// which operations keep it.
type Kind uint8

const (
	// Ranking is what context packs read (SPEC.md §12.5): activation
	// over the ranking relations, with node data read from the store at
	// the view. Only an edge write of a ranking relation changes its
	// answers; node writes, kv writes, policy edges and the passing of
	// valid time do not (the consumer checks each item's liveness and
	// status in the store). It may be persisted.
	Ranking Kind = iota
	// Exact is what the analysis tools read (SPEC.md §10.3): every
	// relation (a tool's rel filter may name any), every node and every
	// valid time, as an export judged at the clock would hold them. Kept
	// only across kv writes and payload-only node puts (type and git
	// history unchanged) that leave every item exactly as valid now as it
	// was, and only until the first valid-time bound. Exported in memory;
	// a provider's first one may be the Ranking file (the same export),
	// when its validity file records the export's valid-time window.
	Exact
	numKinds
)

func (k Kind) String() string {
	switch k {
	case Ranking:
		return "ranking"
	case Exact:
		return "exact"
	}
	return "kind(?)"
}

// IsRankingRelation reports whether the relation named rel ranks code:
// Related spreads along it, and writing one of its edges changes a
// Ranking snapshot. The relation vocabulary decides (roles.Ranked: every
// relation but its unranked rows, constrains, decided_for, supersedes and
// contradicts).
func IsRankingRelation(rel string) bool { return roles.Ranked(rel) }

// maxWalkOps bounds the log read that decides whether an Exact snapshot
// is kept: past it, rebuilding is cheaper to reason about.
const maxWalkOps = 10000

// errChanged stops a log walk at the first operation that changes the
// snapshot.
var errChanged = errors.New("snapshot changed")

// keeps reports whether op, committed after s's export, leaves the answers
// of s's kind as s gives them, judged at now. For Exact, until is lowered
// to the next bound of the valid time op wrote.
func (s *Snap) keeps(r *lmdbstore.ReadTxn, op lmdbstore.Op, now time.Time, until *time.Time) (bool, error) {
	switch op.Kind {
	case lmdbstore.OpPutEdge, lmdbstore.OpDelEdge:
		return s.kind == Ranking && !IsRankingRelation(op.Rel), nil
	case lmdbstore.OpPutKV, lmdbstore.OpDelKV:
		if s.kind == Ranking {
			return true, nil
		}
		// The entry's address may end edges: it must be as valid now as
		// it was at the export.
		before, err := r.ValidTime(lmdbstore.KVAddress(op.Scope, op.Namespace, op.Key), lmdbstore.AtRevision(s.Rev))
		if err != nil {
			return false, err
		}
		if before.Contains(now) && (op.Kind == lmdbstore.OpDelKV || op.Valid.Contains(now)) {
			*until = lmdbstore.EarlierBound(*until, op.Valid.NextChange(now))
			return true, nil
		}
		return false, nil
	case lmdbstore.OpPutNode:
		if s.kind == Ranking {
			return true, nil
		}
		// A new payload of a node the snapshot holds as live, valid now:
		// the engines read keys, relations, edges, node types and the
		// payloads' git history (the recency term), nothing else of a
		// node.
		idx, ok, err := s.Graph.LookupKey(op.NodeKey)
		if err != nil || !ok || !op.Valid.Contains(now) {
			return false, err
		}
		node, err := s.Graph.Node(idx)
		if err != nil || node.Missing || node.Type != op.NodeType {
			return false, err
		}
		held, err := s.Graph.Payload(idx)
		if err != nil || mayHoldHistory(held) || mayHoldHistory(op.Payload) {
			return false, err
		}
		*until = lmdbstore.EarlierBound(*until, op.Valid.NextChange(now))
		return true, nil
	default: // del_node, add_rel
		return s.kind == Ranking, nil
	}
}

// mayHoldHistory reports whether a payload may hold the "git" field the
// engines' recency term reads (the engines' own byte test).
func mayHoldHistory(payload []byte) bool { return bytes.Contains(payload, []byte(`"git"`)) }

// walk reports whether every operation of revisions (from, to] keeps s;
// until as keeps lowers it.
func (s *Snap) walk(r *lmdbstore.ReadTxn, from, to lmdbstore.Revision, now time.Time, until *time.Time) (bool, error) {
	if to > r.Revision() || s.Rev > r.Revision() {
		// Exported by a call in a newer transaction than r: r cannot read
		// the log that far.
		return false, nil
	}
	n := 0
	for rev := from + 1; rev <= to; rev++ {
		err := r.RevisionOps(rev, func(op lmdbstore.Op) error {
			if n++; s.kind == Exact && n > maxWalkOps {
				return errChanged
			}
			ok, err := s.keeps(r, op, now, until)
			if err == nil && !ok {
				err = errChanged
			}
			return err
		})
		if errors.Is(err, errChanged) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// serves reports whether s serves view at now, widening its range when
// the revisions between show nothing that changes it. An Exact snapshot
// serves only while now lies in its valid-time window, and widens only
// forward (its rules judge writes against the content it holds).
func (s *Snap) serves(r *lmdbstore.ReadTxn, view lmdbstore.Revision, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kind == Exact && (now.Before(s.validAt) || !s.until.IsZero() && !now.Before(s.until)) {
		return false, nil
	}
	until := s.until
	switch {
	case view >= s.lo && view <= s.hi:
		return true, nil
	case view > s.hi:
		ok, err := s.walk(r, s.hi, view, now, &until)
		if err != nil || !ok {
			return false, err
		}
		s.hi, s.until = view, until
	case s.kind == Exact:
		return false, nil
	default:
		ok, err := s.walk(r, view, s.lo, now, &until)
		if err != nil || !ok {
			return false, err
		}
		s.lo = view
	}
	return true, nil
}
