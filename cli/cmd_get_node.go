package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func getNodeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-node",
		Usage: "print a node (latest, or at --at-rev / --at)",
		Args:  []string{"KEY"},
		Flags: readFlags(),
		Run:   runGetNode,
	})
}

func runGetNode(k *call) error {
	return k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) error {
		n, err := r.GetNode(k.args[0], at)
		if err != nil {
			return err
		}
		return k.out.node(n)
	})
}
