package cli

import (
	"errors"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func getNodeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-node",
		Usage: "print a node (latest, or at --at-rev / --at) with its status",
		Description: "The status says whether the node is current, superseded (by what, since when,\n" +
			"and the newest item of the chain), expired at --valid-at (default: now), and\n" +
			"which current items contradict it.",
		Args:  []string{"KEY"},
		Flags: append(readFlags(), statusFlags()[0]),
		Run:   runGetNode,
	})
}

func runGetNode(k *call) error {
	f, err := k.statusFilter()
	if err != nil {
		return err
	}
	return k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) error {
		n, err := r.GetNode(k.args[0], at)
		if errors.Is(err, lmdbstore.ErrNotFound) {
			return withSuggestion(r, at, k.args[0], err)
		}
		if err != nil {
			return err
		}
		st, err := r.Status(n.Key, at, f.ValidAt)
		if err != nil {
			return err
		}
		return k.out.node(n, st)
	})
}
