package cli

import (
	"encoding/hex"
	"fmt"

	"github.com/urfave/cli/v2"
)

func snapshotHashCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "hash",
		Usage: "print the SHA-256 of a snapshot's logical content (same graph, same hash)",
		Description: "Covers relations, nodes (id, key, type, scope, payload, missing flag) and edges\n" +
			"(src, rel, dst, weight); not revisions, times, run/task ids or PageRank (SPEC.md §7).\n" +
			"The file is verified first.",
		Args: []string{"FILE"},
		Run:  runSnapshotHash,
	})
}

type hashJSON struct {
	File string `json:"file"`
	Hash string `json:"hash"`
}

func runSnapshotHash(k *call) error {
	path := k.args[0]
	g, err := k.openSnapshot(path, true)
	if err != nil {
		return err
	}
	defer g.Close()
	sum, err := g.File().LogicalHash()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	h := hex.EncodeToString(sum[:])
	if k.out.json {
		return k.out.record(hashJSON{File: path, Hash: h})
	}
	return k.out.textf("%s  %s\n", h, path)
}
