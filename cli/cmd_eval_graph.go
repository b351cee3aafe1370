package cli

import (
	"os"

	"github.com/memctl/memctl/eval"
	"github.com/urfave/cli/v2"
)

// evalGraphCommand is `eval graph DIR --scip INDEX`: the --db store's code
// graph scored against a SCIP index of DIR (SPEC.md §11.3).
func evalGraphCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "graph",
		Usage: "score the --db store's code graph of DIR against a SCIP index: caller and implements recall and precision",
		Description: "Matches functions between the store (built by `ingest code DIR` or `ingest scip`)\n" +
			"and INDEX by file and definition line, and compares each function's callers as\n" +
			"SCIP sees them with memctl's calls/references in-edges (SPEC.md §11.3).\n" +
			"--json lists every missed and extra pair.",
		Args: []string{"DIR"},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scip", Usage: "the SCIP `INDEX` of DIR (the truth)"},
		},
		Run: runEvalGraph,
	})
}

func runEvalGraph(k *call) error {
	dir, index := k.args[0], k.ctx.String("scip")
	if index == "" {
		return usageErr("eval graph: --scip INDEX is required")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageErr("eval graph: %s is not a directory", dir)
	}
	s, err := k.open(true)
	if err != nil {
		return err
	}
	res, err := eval.Graph(s, eval.GraphOptions{Dir: dir, Index: index})
	if err := scipInputErr("eval graph", index, err); err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(res)
	}
	return k.out.textf("%s\n", res.Text())
}
