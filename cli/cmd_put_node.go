package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func putNodeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "put-node",
		Usage: "create or update a node (the previous version stays readable)",
		Description: "KEY is the node's canonical key, e.g. file:cli/app.go or decision:error-handling.\n" +
			"--type defaults to the part of KEY before the first ':'. --payload takes JSON,\n" +
			"@FILE or - (stdin); --valid-from/--valid-until say when the fact holds.\n" +
			"Credentials in the key or payload are stored as [REDACTED:<kind>] unless --allow-secrets.",
		Args: []string{"KEY"},
		Flags: append(append(writeFlags(true),
			&cli.StringFlag{Name: "type", Usage: "node `TYPE` (default: KEY's prefix before ':')"},
			payloadFlag()), validityFlags()...),
		Run: runPutNode,
	})
}

func runPutNode(k *call) error {
	payload, err := k.payload()
	if err != nil {
		return err
	}
	valid, err := k.validity()
	if err != nil {
		return err
	}
	return k.write(func(tx *lmdbstore.WriteTxn) error {
		return tx.PutNode(lmdbstore.NodePut{Key: k.args[0], Type: k.ctx.String("type"), Payload: payload, Valid: valid})
	})
}
