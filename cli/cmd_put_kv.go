package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func putKVCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "put-kv",
		Usage: "record a decision, constraint or procedure: SCOPE/NS/KEY = PAYLOAD (JSON)",
		Description: "E.g. memctl put-kv repo decisions error-handling '{\"rule\":\"wrap with %w\"}'.\n" +
			"The previous version stays readable.",
		Args:  []string{"SCOPE", "NS", "KEY", "PAYLOAD"},
		Flags: append(writeFlags(false), validityFlags()...),
		Run:   runPutKV,
	})
}

func runPutKV(k *call) error {
	payload, err := k.parsePayload("PAYLOAD", k.args[3])
	if err != nil {
		return err
	}
	valid, err := k.validity()
	if err != nil {
		return err
	}
	return k.write(func(tx *lmdbstore.WriteTxn) error {
		return tx.PutKV(lmdbstore.KVPut{Scope: k.args[0], Namespace: k.args[1], Key: k.args[2], Payload: payload, Valid: valid})
	})
}
