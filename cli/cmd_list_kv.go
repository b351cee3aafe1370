package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func listKVCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "list-kv",
		Usage: "list the current entries of SCOPE/NS, ordered by key (latest, or at --at-rev / --at)",
		Description: "Entries a newer item supersedes, or not valid at --valid-at (default: now), are\n" +
			"history and left out unless --include-superseded / --include-expired.",
		Args:  []string{"SCOPE", "NS"},
		Flags: append(readFlags(), statusFlags()...),
		Run:   runListKV,
	})
}

func runListKV(k *call) error {
	f, err := k.statusFilter()
	if err != nil {
		return err
	}
	return k.view(func(r *lmdbstore.ReadTxn, at lmdbstore.At) error {
		kvs, err := r.ListKV(k.args[0], k.args[1], at)
		if err != nil {
			return err
		}
		shown, sts := kvs[:0], make([]lmdbstore.Status, 0, len(kvs))
		for _, kv := range kvs {
			st, err := r.Status(lmdbstore.KVAddress(kv.Scope, kv.Namespace, kv.Key), at, f.ValidAt)
			if err != nil {
				return err
			}
			if f.Shows(st) {
				shown, sts = append(shown, kv), append(sts, st)
			}
		}
		return k.out.kvs(shown, sts)
	})
}
