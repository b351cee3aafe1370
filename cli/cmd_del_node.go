package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func delNodeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "del-node",
		Usage: "delete a node (its history stays readable)",
		Args:  []string{"KEY"},
		Flags: writeFlags(true),
		Run:   runDelNode,
	})
}

func runDelNode(k *call) error {
	return k.write(func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteNode(k.args[0])
	})
}
