package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func delEdgeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "del-edge",
		Usage: "delete the edge SRC -REL-> DST (a tombstone: its history stays readable)",
		Args:  []string{"SRC", "REL", "DST"},
		Flags: writeFlags(true),
		Run:   runDelEdge,
	})
}

func runDelEdge(k *call) error {
	return k.write(func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteEdge(k.args[0], k.args[1], k.args[2])
	})
}
