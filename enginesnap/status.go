package enginesnap

// The store's status rules (SPEC.md §4) read from a snapshot instead of
// the store, for the commands that answer from a snapshot file.

import (
	"cmp"
	"slices"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// Status is lmdbstore.ReadTxn.Status over a snapshot (SPEC.md §4, §6.6):
// supersessions and contradictions from the snapshot's `supersedes` and
// `contradicts` edges, validity from the node row. A superseder's
// revision is that of the edge's version in the file (the store reports
// the revision that created the edge; they differ only for an edge
// rewritten with another weight). A default export leaves superseded and
// expired items out, so there most nodes are simply current.
func Status(g *csr.Graph, i csr.NodeIndex, validAt time.Time) (lmdbstore.Status, error) {
	sup, hasSup, err := g.RelationByName(roles.RelSupersedes)
	if err != nil {
		return lmdbstore.Status{}, err
	}
	con, hasCon, err := g.RelationByName(roles.RelContradicts)
	if err != nil {
		return lmdbstore.Status{}, err
	}
	valid := func(n csr.NodeIndex) (bool, error) {
		v, err := Validity(g, n)
		return v.Contains(validAt), err
	}
	type superseder struct {
		by  csr.NodeIndex
		key string
		rev uint64
	}
	superseders := func(n csr.NodeIndex) ([]superseder, error) {
		if !hasSup {
			return nil, nil
		}
		srcs, rels, _, err := g.InChecked(n)
		if err != nil {
			return nil, err
		}
		var out []superseder
		for j, s := range srcs {
			if rels[j] != sup.ID {
				continue
			}
			rev, _, err := g.EdgeRev(s, sup.ID, n)
			if err != nil {
				return nil, err
			}
			key, err := g.Key(s)
			if err != nil {
				return nil, err
			}
			out = append(out, superseder{s, key, rev})
		}
		return out, nil
	}
	var st lmdbstore.Status
	if st.Valid, err = valid(i); err != nil {
		return st, err
	}
	sups, err := superseders(i)
	if err != nil {
		return st, err
	}
	for _, s := range sups {
		ts, _ := g.RevisionTime(s.rev)
		st.SupersededBy = append(st.SupersededBy, lmdbstore.Supersession{By: s.key, Rev: lmdbstore.Revision(s.rev), TS: nsTime(ts)})
	}
	slices.SortFunc(st.SupersededBy, func(a, b lmdbstore.Supersession) int {
		if c := cmp.Compare(a.Rev, b.Rev); c != 0 {
			return c
		}
		return cmp.Compare(a.By, b.By)
	})
	if len(sups) > 0 {
		seen := map[csr.NodeIndex]bool{i: true}
		cur, curKey := i, ""
		for {
			next, err := superseders(cur)
			if err != nil {
				return st, err
			}
			if len(next) == 0 {
				break
			}
			best := next[0]
			for _, s := range next[1:] {
				if s.rev > best.rev || s.rev == best.rev && s.key < best.key {
					best = s
				}
			}
			if seen[best.by] {
				break
			}
			seen[best.by] = true
			cur, curKey = best.by, best.key
		}
		st.Newest = curKey
		return st, nil
	}
	if !st.Valid || !hasCon {
		return st, nil
	}
	var peers []csr.NodeIndex
	for _, out := range []bool{true, false} {
		var ps, rels []uint32
		if out {
			ps, rels, _, err = g.OutChecked(i)
		} else {
			ps, rels, _, err = g.InChecked(i)
		}
		if err != nil {
			return st, err
		}
		for j, p := range ps {
			if rels[j] == con.ID && p != i {
				peers = append(peers, p)
			}
		}
	}
	for _, p := range peers {
		s, err := superseders(p)
		if err != nil {
			return st, err
		}
		ok, err := valid(p)
		if err != nil {
			return st, err
		}
		if len(s) > 0 || !ok {
			continue
		}
		key, err := g.Key(p)
		if err != nil {
			return st, err
		}
		st.Contradicts = append(st.Contradicts, key)
	}
	slices.Sort(st.Contradicts)
	st.Contradicts = slices.Compact(st.Contradicts)
	return st, nil
}

// Validity is a node's valid time as the snapshot records it.
func Validity(g *csr.Graph, i csr.NodeIndex) (lmdbstore.Validity, error) {
	n, err := g.Node(i)
	if err != nil {
		return lmdbstore.Validity{}, err
	}
	var v lmdbstore.Validity
	if n.HasValidFrom {
		v.From = time.Unix(0, n.ValidFrom).UTC()
	}
	if n.HasValidUntil {
		v.Until = time.Unix(0, n.ValidUntil).UTC()
	}
	return v, nil
}

// nsTime is a snapshot's unix-nanosecond time (0: none).
func nsTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
