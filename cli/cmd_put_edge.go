package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/urfave/cli/v2"
)

func putEdgeCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "put-edge",
		Usage: "create or update the edge SRC -REL-> DST",
		Description: "SRC and DST are canonical keys (they need not exist as nodes yet); REL is a\n" +
			"registered relation (see `memctl rel list`).",
		Args: []string{"SRC", "REL", "DST"},
		Flags: append(writeFlags(true),
			&cli.Float64Flag{Name: "weight", Usage: "edge weight `W`, finite and > 0", DefaultText: "the relation's default weight"},
			payloadFlag()),
		Run: runPutEdge,
	})
}

func runPutEdge(k *call) error {
	weight, err := weightFlag(k)
	if err != nil {
		return err
	}
	payload, err := k.payload()
	if err != nil {
		return err
	}
	return k.write(func(tx *lmdbstore.WriteTxn) error {
		return tx.PutEdge(lmdbstore.EdgePut{
			Src: k.args[0], Rel: k.args[1], Dst: k.args[2],
			Weight: weight, Payload: payload,
		})
	})
}

// weightFlag is --weight as a float32 (0 when not given: the default).
func weightFlag(k *call) (float32, error) {
	if !k.ctx.IsSet("weight") {
		return 0, nil
	}
	return checkWeight("--weight", k.ctx.Float64("weight"))
}

// checkWeight accepts finite positive weights that fit a float32
// (ops.CheckWeight).
func checkWeight(what string, w float64) (float32, error) {
	return ops.CheckWeight(what, &w)
}
