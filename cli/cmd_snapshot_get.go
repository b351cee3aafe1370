package cli

import (
	"fmt"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/records"
	"github.com/urfave/cli/v2"
)

func snapshotGetNodeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-node",
		Usage: "print a node of a snapshot (same output as get-node)",
		Args:  []string{"FILE", "KEY"},
		Flags: []cli.Flag{noVerifyFlag(), statusFlags()[0]},
		Run:   runSnapshotGetNode,
	})
}

func snapshotGetOutCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-out",
		Usage: "list the out-edges of KEY in a snapshot (same output as get-out, without edge payloads)",
		Args:  []string{"FILE", "KEY"},
		Flags: []cli.Flag{relFilterFlag(), noVerifyFlag()},
		Run:   func(k *call) error { return runSnapshotEdges(k, outEdges) },
	})
}

func snapshotGetInCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-in",
		Usage: "list the in-edges of KEY in a snapshot (same output as get-in, without edge payloads)",
		Args:  []string{"FILE", "KEY"},
		Flags: []cli.Flag{relFilterFlag(), noVerifyFlag()},
		Run:   func(k *call) error { return runSnapshotEdges(k, inEdges) },
	})
}

func runSnapshotGetNode(k *call) error {
	f, err := k.statusFilter()
	if err != nil {
		return err
	}
	path, key := k.args[0], k.args[1]
	g, err := k.openSnapshot(path, true)
	if err != nil {
		return err
	}
	defer g.Close()
	i, err := lookupKey(g, path, key)
	if err != nil {
		return err
	}
	n, err := g.Node(i)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if n.Missing {
		// Like the store: an id only referenced by edges is not a node.
		return fmt.Errorf("node %q %w %s (it is only an edge endpoint)", key, errNotInSnapshot, path)
	}
	sn, err := storeNode(g, i)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st, err := snapshotStatus(g, i, f.ValidAt)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return k.out.node(sn, st)
}

// runSnapshotEdges prints the edges of KEY in one direction, ordered like
// the store commands: by relation name, then peer key.
func runSnapshotEdges(k *call, dir edgeDirection) error {
	path, key := k.args[0], k.args[1]
	g, err := k.openSnapshot(path, true)
	if err != nil {
		return err
	}
	defer g.Close()
	i, err := lookupKey(g, path, key)
	if err != nil {
		return err
	}
	var relFilter uint32
	if name := k.ctx.String("rel"); name != "" {
		r, ok, err := g.RelationByName(name)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !ok {
			return usageErr("unknown relation %q in %s", name, path)
		}
		relFilter = r.ID
	}
	recs, err := snapshotEdgeRecords(g, i, dir, relFilter)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return k.out.edges(recs)
}

func snapshotEdgeRecords(g *csr.Graph, i csr.NodeIndex, dir edgeDirection, relFilter uint32) ([]edgeJSON, error) {
	self, err := g.Key(i)
	if err != nil {
		return nil, err
	}
	var peers, rels []uint32
	var weights []float32
	// The checked variants report a stored index out of range as damage of
	// its section (exit 3), also under --no-verify.
	if dir == outEdges {
		peers, rels, weights, err = g.OutChecked(i)
	} else {
		peers, rels, weights, err = g.InChecked(i)
	}
	if err != nil {
		return nil, err
	}
	var revs []uint64
	if dir == outEdges {
		if revs, err = g.OutRevs(i); err != nil {
			return nil, err
		}
	}
	recs := make([]edgeJSON, 0, len(peers))
	for j := range peers {
		if relFilter != 0 && rels[j] != relFilter {
			continue
		}
		peer, err := g.Key(peers[j])
		if err != nil {
			return nil, err
		}
		rel, err := g.Relation(rels[j])
		if err != nil {
			return nil, err
		}
		var rev uint64
		if dir == outEdges {
			rev = revs[j]
		} else if rev, _, err = g.EdgeRev(peers[j], rels[j], i); err != nil {
			return nil, err
		}
		ts, _ := g.RevisionTime(rev)
		rec := edgeJSON{Edge: records.Edge{Src: self, Rel: rel.Name, Dst: peer, Rev: rev, TS: records.Time(nsTime(ts)), Weight: records.Weight(weights[j])}}
		if dir == inEdges {
			rec.Src, rec.Dst = peer, self
		}
		recs = append(recs, rec)
	}
	sortEdgeRecords(recs, dir)
	return recs, nil
}
