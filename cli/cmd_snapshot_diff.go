package cli

import (
	"encoding/json"
	"strings"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/enginesnap"
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

// diffSnapshots is enginesnap.Diff as snapshot diff --json prints it.
func diffSnapshots(a, b *csr.Graph) ([]snapDiffJSON, error) {
	changes, err := enginesnap.Diff(a, b)
	if err != nil {
		return nil, err
	}
	out := make([]snapDiffJSON, len(changes))
	for i, c := range changes {
		out[i] = snapDiffJSON{Change: c.Change, Kind: c.Kind, Key: c.Key, Fields: c.Fields, Src: c.Src, Rel: c.Rel, Dst: c.Dst}
		if c.Kind == "edge" {
			out[i].Weight = formatWeight(c.Weight)
			if c.Change == "changed" {
				out[i].OldWeight = formatWeight(c.OldWeight)
			}
		}
	}
	return out, nil
}
