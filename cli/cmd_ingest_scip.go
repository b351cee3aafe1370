package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/memctl/memctl/ingest/scip"
	"github.com/urfave/cli/v2"
)

// ingestScipCommand is `ingest scip INDEX`: a SCIP index of any language
// written as the same keys and relations as `ingest code` (SPEC.md §9.7).
func ingestScipCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "scip",
		Usage: "import a SCIP index (scip-go, scip-python, scip-typescript, …) as a code graph",
		Description: "Reads INDEX (a SCIP protobuf index) and writes its files, symbols and their\n" +
			"defines, calls, references, implements and imports edges under the keys of\n" +
			"`ingest code`, as one revision holding only what differs from the last import by\n" +
			"the same indexer. Keys and payloads: SPEC.md §9.7.",
		Args:  []string{"INDEX"},
		Flags: writeFlags(true),
		Run:   runIngestScip,
	})
}

func runIngestScip(k *call) error {
	start := time.Now()
	file := k.args[0]
	s, err := k.open(false)
	if err != nil {
		return err
	}
	bar := newProgressBar(k.env)
	defer bar.done()
	out, stats, err := scip.Import(s, file, k.meta(), bar.update)
	if err := scipInputErr("ingest scip", file, err); err != nil {
		return err
	}
	bar.done()
	out.Seconds = time.Since(start).Seconds()
	if k.out.json {
		return k.out.record(out)
	}
	return k.out.textf("ingest scip %s: %s %s, %d documents, %d symbols; %d nodes, %d edges; %s; %.2fs\n",
		file, out.Tool, out.ToolVersion, out.Documents, out.Symbols, out.Nodes, out.Edges, writeText(stats), out.Seconds)
}

// scipInputErr turns a missing, unreadable, non-SCIP or empty index into
// a usage error (exit 2) naming the file; other errors pass through.
func scipInputErr(verb, file string, err error) error {
	var fe *scip.FormatError
	var pe *fs.PathError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return usageErr("%s: %v", verb, fe)
	case errors.Is(err, scip.ErrEmptyIndex):
		return usageErr("%s: %s: %v", verb, file, err)
	case errors.As(err, &pe) && pe.Path == file:
		return usageErr("%s: %v", verb, err)
	}
	return fmt.Errorf("%s: %w", verb, err)
}
