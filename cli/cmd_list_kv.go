package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func listKVCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "list-kv",
		Usage: "list the live entries of SCOPE/NS, ordered by key (latest, or at --at-rev / --at)",
		Args:  []string{"SCOPE", "NS"},
		Flags: readFlags(),
		Run:   runListKV,
	})
}

func runListKV(k *call) error {
	return k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) error {
		kvs, err := r.ListKV(k.args[0], k.args[1], at)
		if err != nil {
			return err
		}
		return k.out.kvs(kvs)
	})
}
