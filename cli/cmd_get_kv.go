package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func getKVCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-kv",
		Usage: "print the entry SCOPE/NS/KEY (latest, or at --at-rev / --at) with its status",
		Args:  []string{"SCOPE", "NS", "KEY"},
		Flags: append(readFlags(), statusFlags()[0]),
		Run:   runGetKV,
	})
}

func runGetKV(k *call) error {
	f, err := k.statusFilter()
	if err != nil {
		return err
	}
	return k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) error {
		kv, err := r.GetKV(k.args[0], k.args[1], k.args[2], at)
		if err != nil {
			return err
		}
		st, err := r.Status(lmdbstore.KVAddress(kv.Scope, kv.Namespace, kv.Key), at, f.ValidAt)
		if err != nil {
			return err
		}
		return k.out.kvs([]lmdbstore.KV{kv}, []lmdbstore.Status{st})
	})
}
