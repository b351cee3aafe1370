package cli

import (
	"cmp"
	"slices"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
	"github.com/urfave/cli/v2"
)

func getOutCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-out",
		Usage: "list the live out-edges of SRC (latest, or at --at-rev / --at)",
		Description: "One edge per line, ordered by relation name, then destination key.\n" +
			"--rel restricts to one relation. Edges to superseded destinations, or to ones\n" +
			"not valid at --valid-at (default: now), are left out unless --include-superseded\n" +
			"/ --include-expired (supersedes edges are always listed).",
		Args:  []string{"SRC"},
		Flags: append(append(readFlags(), relFilterFlag()), statusFlags()...),
		Run:   func(k *call) error { return listEdges(k, outEdges) },
	})
}

func relFilterFlag() cli.Flag {
	return &cli.StringFlag{Name: "rel", Usage: "only edges of relation `R`"}
}

type edgeDirection bool

const (
	outEdges edgeDirection = true
	inEdges  edgeDirection = false
)

// listEdges prints the live edges of the argument node in one direction,
// ordered by (relation name, peer key) so output does not depend on ids.
func listEdges(k *call, dir edgeDirection) error {
	f, err := k.statusFilter()
	if err != nil {
		return err
	}
	return k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) error {
		key, rel := k.args[0], k.ctx.String("rel")
		var es []lmdbstore.Edge
		var err error
		if dir == outEdges {
			es, err = r.GetOut(key, rel, at)
		} else {
			es, err = r.GetIn(key, rel, at)
		}
		if err != nil {
			return err
		}
		res := newEdgeResolver(r, at)
		recs := make([]edgeJSON, 0, len(es))
		for _, e := range es {
			rec, err := res.record(e)
			if err != nil {
				return err
			}
			peer := rec.Dst
			if dir == inEdges {
				peer = rec.Src
			}
			show, err := res.peerStatus(&rec, peer, f)
			if err != nil {
				return err
			}
			if show {
				recs = append(recs, rec)
			}
		}
		sortEdgeRecords(recs, dir)
		return k.out.edges(recs)
	})
}

// sortEdgeRecords puts one node's edges in output order: (relation name,
// peer key), so output depends on neither ids nor the source (store or
// snapshot) of the edges.
func sortEdgeRecords(recs []edgeJSON, dir edgeDirection) {
	slices.SortFunc(recs, func(a, b edgeJSON) int {
		if c := cmp.Compare(a.Rel, b.Rel); c != 0 {
			return c
		}
		if dir == outEdges {
			return cmp.Compare(a.Dst, b.Dst)
		}
		return cmp.Compare(a.Src, b.Src)
	})
}

// edgeResolver turns store edges (ids) into printable records (keys,
// relation names, commit times, payloads), caching what repeats.
type edgeResolver struct {
	r     *lmdbstore.ReadTxn
	at    lmdbstore.At
	keys  map[lmdbstore.NodeID]string
	rels  map[lmdbstore.RelID]string
	times map[lmdbstore.Revision]string
}

func newEdgeResolver(r *lmdbstore.ReadTxn, at lmdbstore.At) *edgeResolver {
	return &edgeResolver{
		r: r, at: at,
		keys:  make(map[lmdbstore.NodeID]string),
		times: make(map[lmdbstore.Revision]string),
	}
}

func (x *edgeResolver) key(id lmdbstore.NodeID) (string, error) {
	if k, ok := x.keys[id]; ok {
		return k, nil
	}
	k, err := x.r.KeyOf(id)
	if err != nil {
		return "", err
	}
	x.keys[id] = k
	return k, nil
}

func (x *edgeResolver) rel(id lmdbstore.RelID) (string, error) {
	if x.rels == nil {
		rels, err := x.r.Relations()
		if err != nil {
			return "", err
		}
		x.rels = make(map[lmdbstore.RelID]string, len(rels))
		for _, rel := range rels {
			x.rels[rel.ID] = rel.Name
		}
	}
	if name, ok := x.rels[id]; ok {
		return name, nil
	}
	r, err := x.r.RelationByID(id)
	if err != nil {
		return "", err
	}
	x.rels[id] = r.Name
	return r.Name, nil
}

func (x *edgeResolver) time(rev lmdbstore.Revision) (string, error) {
	if t, ok := x.times[rev]; ok {
		return t, nil
	}
	t, err := x.r.RevisionTime(rev)
	if err != nil {
		return "", err
	}
	s := records.Time(t)
	x.times[rev] = s
	return s, nil
}

// peerStatus applies the listing filter (SPEC.md §4) to the edge's peer:
// it reports whether to show the edge, and records the peer's status on it
// when the peer is not simply current. Supersedes edges are always shown.
// This is the only status work of get-out/get-in: a layer over the scan.
func (x *edgeResolver) peerStatus(rec *edgeJSON, peer string, f lmdbstore.StatusFilter) (bool, error) {
	st, err := x.r.Status(peer, x.at, f.ValidAt)
	if err != nil {
		return false, err
	}
	if rec.Rel != "supersedes" && !f.Shows(st) {
		return false, nil
	}
	if note := statusNote(st); note != "" {
		js := records.StatusOf(st)
		rec.PeerStatus, rec.note = &js, note
	}
	return true, nil
}

func (x *edgeResolver) record(e lmdbstore.Edge) (edgeJSON, error) {
	src, err := x.key(e.Src)
	if err != nil {
		return edgeJSON{}, err
	}
	dst, err := x.key(e.Dst)
	if err != nil {
		return edgeJSON{}, err
	}
	rel, err := x.rel(e.Rel)
	if err != nil {
		return edgeJSON{}, err
	}
	ts, err := x.time(e.Rev)
	if err != nil {
		return edgeJSON{}, err
	}
	full, err := x.r.GetEdge(src, rel, dst, x.at)
	if err != nil {
		return edgeJSON{}, err
	}
	return edgeJSON{Edge: records.Edge{
		Src: src, Rel: rel, Dst: dst,
		Rev: uint64(e.Rev), TS: ts, Weight: records.Weight(e.Weight),
		Payload: records.OptionalPayload(full.Payload),
	}}, nil
}
