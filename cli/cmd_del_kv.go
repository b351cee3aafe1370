package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func delKVCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "del-kv",
		Usage: "delete the entry SCOPE/NS/KEY (its history stays readable)",
		Args:  []string{"SCOPE", "NS", "KEY"},
		Flags: writeFlags(false),
		Run:   runDelKV,
	})
}

func runDelKV(k *call) error {
	return k.write(func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteKV(k.args[0], k.args[1], k.args[2])
	})
}
