package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/urfave/cli/v2"
)

func snapshotDiffCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "diff",
		Usage: "list nodes and edges added, removed and changed from snapshot A to snapshot B",
		Description: "Compares logical content (as snapshot hash does): a node changes when its type,\n" +
			"scope, payload, valid time or status (superseded, expired) does, an edge when its weight does; revisions and times are ignored.\n" +
			"Edges are matched by (source key, relation name, destination key).\n" +
			"Nodes come first, by key; then edges by (source, relation, destination).",
		Args:  []string{"A", "B"},
		Flags: []cli.Flag{noVerifyFlag()},
		Run:   runSnapshotDiff,
	})
}

// snapDiffJSON is one change as snapshot diff --json prints it (SPEC.md §6.x).
type snapDiffJSON struct {
	Change    string      `json:"change"` // added, removed, changed
	Kind      string      `json:"kind"`   // node, edge
	Key       string      `json:"key,omitempty"`
	Fields    []string    `json:"fields,omitempty"`
	Src       string      `json:"src,omitempty"`
	Rel       string      `json:"rel,omitempty"`
	Dst       string      `json:"dst,omitempty"`
	Weight    json.Number `json:"weight,omitempty"`
	OldWeight json.Number `json:"old_weight,omitempty"`
}

// diffEdge is one out-edge in comparable terms.
type diffEdge struct {
	rel, dst string
	weight   float32
}

func runSnapshotDiff(k *call) error {
	a, err := k.openSnapshot(k.args[0], true)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := k.openSnapshot(k.args[1], true)
	if err != nil {
		return err
	}
	defer b.Close()
	changes, err := diffSnapshots(a, b)
	if err != nil {
		return err
	}
	if k.out.json {
		for _, c := range changes {
			if err := k.out.record(c); err != nil {
				return err
			}
		}
		return nil
	}
	var count [2][3]int // node/edge × added/removed/changed
	sign := map[string]string{"added": "+", "removed": "-", "changed": "~"}
	idx := map[string]int{"added": 0, "removed": 1, "changed": 2}
	for _, c := range changes {
		kind := 0
		if c.Kind == "edge" {
			kind = 1
		}
		count[kind][idx[c.Change]]++
		switch {
		case c.Kind == "node" && c.Change == "changed":
			k.out.textf("~ node %s (%s)\n", textCell(c.Key), strings.Join(c.Fields, ", "))
		case c.Kind == "node":
			k.out.textf("%s node %s\n", sign[c.Change], textCell(c.Key))
		case c.Change == "changed":
			k.out.textf("~ edge %s -%s-> %s weight %s -> %s\n", textCell(c.Src), c.Rel, textCell(c.Dst), c.OldWeight, c.Weight)
		default:
			k.out.textf("%s edge %s -%s-> %s weight %s\n", sign[c.Change], textCell(c.Src), c.Rel, textCell(c.Dst), c.Weight)
		}
	}
	return k.out.textf("nodes: %d added, %d removed, %d changed; edges: %d added, %d removed, %d changed\n",
		count[0][0], count[0][1], count[0][2], count[1][0], count[1][1], count[1][2])
}

func diffSnapshots(a, b *csr.Graph) ([]snapDiffJSON, error) {
	var nodes, edges []snapDiffJSON
	ia, ib := uint32(0), uint32(0)
	na, nb := uint32(a.NumNodes()), uint32(b.NumNodes())
	for ia < na || ib < nb {
		var ida, idb uint64
		var err error
		if ia < na {
			if ida, err = a.NodeID(ia); err != nil {
				return nil, err
			}
		}
		if ib < nb {
			if idb, err = b.NodeID(ib); err != nil {
				return nil, err
			}
		}
		var inA, inB bool
		switch {
		case ib >= nb || (ia < na && ida < idb):
			inA = true
		case ia >= na || idb < ida:
			inB = true
		default:
			inA, inB = true, true
		}
		var nodeA, nodeB csr.Node
		var outA, outB []diffEdge
		if inA {
			if nodeA, err = a.Node(ia); err != nil {
				return nil, err
			}
			if outA, err = diffOut(a, ia); err != nil {
				return nil, err
			}
		}
		if inB {
			if nodeB, err = b.Node(ib); err != nil {
				return nil, err
			}
			if outB, err = diffOut(b, ib); err != nil {
				return nil, err
			}
		}
		liveA, liveB := inA && !nodeA.Missing, inB && !nodeB.Missing
		key := nodeA.Key
		if !inA {
			key = nodeB.Key
		}
		switch {
		case liveA && !liveB:
			nodes = append(nodes, snapDiffJSON{Change: "removed", Kind: "node", Key: key})
		case liveB && !liveA:
			nodes = append(nodes, snapDiffJSON{Change: "added", Kind: "node", Key: key})
		case liveA && liveB:
			fields, err := nodeChanges(a, ia, nodeA, b, ib, nodeB)
			if err != nil {
				return nil, err
			}
			if len(fields) > 0 {
				nodes = append(nodes, snapDiffJSON{Change: "changed", Kind: "node", Key: key, Fields: fields})
			}
		}
		edges = append(edges, edgeChanges(key, outA, outB)...)
		if inA {
			ia++
		}
		if inB {
			ib++
		}
	}
	slices.SortFunc(nodes, func(x, y snapDiffJSON) int { return cmp.Compare(x.Key, y.Key) })
	slices.SortFunc(edges, func(x, y snapDiffJSON) int {
		return cmp.Or(cmp.Compare(x.Src, y.Src), cmp.Compare(x.Rel, y.Rel), cmp.Compare(x.Dst, y.Dst))
	})
	return append(nodes, edges...), nil
}

func nodeChanges(a *csr.Graph, ia csr.NodeIndex, na csr.Node, b *csr.Graph, ib csr.NodeIndex, nb csr.Node) ([]string, error) {
	var fields []string
	if na.Type != nb.Type {
		fields = append(fields, "type")
	}
	if na.Scope != nb.Scope {
		fields = append(fields, "scope")
	}
	pa, err := a.Payload(ia)
	if err != nil {
		return nil, err
	}
	pb, err := b.Payload(ib)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pa, pb) {
		fields = append(fields, "payload")
	}
	if na.HasValidFrom != nb.HasValidFrom || na.ValidFrom != nb.ValidFrom || na.HasValidUntil != nb.HasValidUntil || na.ValidUntil != nb.ValidUntil {
		fields = append(fields, "valid")
	}
	if na.Superseded != nb.Superseded || na.Expired != nb.Expired {
		fields = append(fields, "status")
	}
	return fields, nil
}

// diffOut is node i's out-list by (relation name, destination key).
func diffOut(g *csr.Graph, i csr.NodeIndex) ([]diffEdge, error) {
	tg, rels, ws, err := g.OutChecked(i)
	if err != nil {
		return nil, err
	}
	out := make([]diffEdge, 0, len(tg))
	for j := range tg {
		dst, err := g.Key(tg[j])
		if err != nil {
			return nil, err
		}
		rel, err := g.Relation(rels[j])
		if err != nil {
			return nil, err
		}
		out = append(out, diffEdge{rel: rel.Name, dst: dst, weight: ws[j]})
	}
	slices.SortFunc(out, func(x, y diffEdge) int { return cmp.Or(cmp.Compare(x.rel, y.rel), cmp.Compare(x.dst, y.dst)) })
	return out, nil
}

func edgeChanges(src string, a, b []diffEdge) []snapDiffJSON {
	var out []snapDiffJSON
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var c int
		switch {
		case i >= len(a):
			c = 1
		case j >= len(b):
			c = -1
		default:
			c = cmp.Or(cmp.Compare(a[i].rel, b[j].rel), cmp.Compare(a[i].dst, b[j].dst))
		}
		switch {
		case c < 0:
			out = append(out, snapDiffJSON{Change: "removed", Kind: "edge", Src: src, Rel: a[i].rel, Dst: a[i].dst, Weight: formatWeight(a[i].weight)})
			i++
		case c > 0:
			out = append(out, snapDiffJSON{Change: "added", Kind: "edge", Src: src, Rel: b[j].rel, Dst: b[j].dst, Weight: formatWeight(b[j].weight)})
			j++
		default:
			if a[i].weight != b[j].weight {
				out = append(out, snapDiffJSON{Change: "changed", Kind: "edge", Src: src, Rel: a[i].rel, Dst: a[i].dst,
					Weight: formatWeight(b[j].weight), OldWeight: formatWeight(a[i].weight)})
			}
			i++
			j++
		}
	}
	return out
}
