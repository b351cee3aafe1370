package cli

import (
	"cmp"
	"slices"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
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

// listEdges prints the live edges of the argument node in one direction
// (ops.ListEdges: ordered by relation name, then peer key).
func listEdges(k *call, dir edgeDirection) error {
	f, err := k.statusFilter()
	if err != nil {
		return err
	}
	return k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) error {
		list, err := ops.ListEdges(r, ops.EdgesRequest{
			Key: k.args[0], Rel: k.ctx.String("rel"), In: dir == inEdges, At: at, Filter: f,
		})
		if err != nil {
			return err
		}
		if list.Total == 0 {
			// Nothing listed: a node with no edges (or none shown) is
			// an empty answer, a key the store does not know is not.
			if exists, err := keyExists(r, at, k.args[0]); err != nil || !exists {
				if err == nil {
					err = unknownKeyError(r, at, k.args[0])
				}
				return err
			}
		}
		recs := make([]edgeJSON, len(list.Edges))
		for i, e := range list.Edges {
			recs[i] = edgeJSON{Edge: e, note: statusNote(list.Peers[i])}
		}
		return k.out.edges(recs)
	})
}

// sortEdgeRecords puts one node's snapshot edges (snapshot get) in the
// order ops.ListEdges gives the store's: (relation name, peer key).
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
