package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func supersedeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "supersede",
		Usage: "record that NEW replaces OLD (one revision): OLD becomes history",
		Description: "OLD and NEW are memory items: node keys, or kv entries as kv:SCOPE/NS/KEY\n" +
			"('%' and '/' inside a part written %25 and %2F). Writes the edge\n" +
			"NEW -supersedes-> OLD. Both must exist; a chain may not loop back.\n" +
			"Listing reads, exports and engines leave OLD out unless --include-superseded;\n" +
			"get-node OLD says by what and since when; reads before this revision see OLD\n" +
			"as current. Undo with: memctl del-edge NEW supersedes OLD.",
		Args:  []string{"OLD", "NEW"},
		Flags: writeFlags(true),
		Run: func(k *call) error {
			return k.write(func(tx *lmdbstore.WriteTxn) error { return tx.Supersede(k.args[0], k.args[1]) })
		},
	})
}
