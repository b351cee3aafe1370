package cli

import (
	"fmt"
	"io"

	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
	"github.com/urfave/cli/v2"
)

// progressMin is the number of nodes or edges from which export draws a
// progress bar (when stderr is a terminal).
const progressMin = 100_000

func exportCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "export",
		Usage: "write the store's state (latest, or at --at-rev / --at) to a snapshot file",
		Description: "The file is written under a temporary name, synced and renamed.\n" +
			"--logical zeroes revisions, times and run/task ids, so the file depends only on\n" +
			"the graph. A PageRank section is included unless --no-pagerank. Superseded items\n" +
			"and items not valid at --valid-at (default: now) are history: left out, with\n" +
			"their edges, unless --include-superseded / --include-expired (then marked).",
		Flags: append(append(readFlags(), statusFlags()...),
			&cli.StringFlag{Name: "out", Usage: "snapshot `FILE` to write (required)"},
			&cli.BoolFlag{Name: "logical", Usage: "zero history metadata (revisions, times, run/task ids)"},
			&cli.BoolFlag{Name: "no-pagerank", Usage: "leave out the PageRank section"},
		),
		Run: runExport,
	})
}

// exportJSON is what export prints with --json (SPEC.md §6.x).
type exportJSON struct {
	File         string `json:"file"`
	Rev          uint64 `json:"rev"`
	Nodes        int    `json:"nodes"`
	MissingNodes int    `json:"missing_nodes"`
	Edges        int    `json:"edges"`
	Bytes        int64  `json:"bytes"`
	Logical      bool   `json:"logical"`
	PageRank     bool   `json:"pagerank"`
}

func runExport(k *call) error {
	path := k.ctx.String("out")
	if path == "" {
		return usageErr("export needs --out FILE")
	}
	filter, err := k.statusFilter()
	if err != nil {
		return err
	}
	at, err := k.at()
	if err != nil {
		return err
	}
	s, err := k.open(true)
	if err != nil {
		return err
	}
	opts := snapshot.WriterOptions{Logical: k.ctx.Bool("logical")}
	withPageRank := !k.ctx.Bool("no-pagerank")
	if withPageRank {
		opts.Extra = engines.PageRankSection // default parameters, unweighted
	}
	var bar *exportProgress
	if k.env.StderrIsTerminal && k.env.Stderr != nil {
		bar = &exportProgress{w: k.env.Stderr}
		opts.Progress = bar.update
	}
	stats, rev, err := storesnap.ExportFiltered(s, path, at, filter, opts)
	bar.done()
	if err != nil {
		return err
	}
	rec := exportJSON{File: path, Rev: uint64(rev), Nodes: stats.Nodes, MissingNodes: stats.MissingNodes,
		Edges: stats.Edges, Bytes: stats.Bytes, Logical: opts.Logical, PageRank: withPageRank}
	if k.out.json {
		return k.out.record(rec)
	}
	return k.out.textf("exported rev %d to %s: %d nodes (%d missing), %d edges, %d bytes\n",
		rev, path, stats.Nodes, stats.MissingNodes, stats.Edges, stats.Bytes)
}

// exportProgress draws "export: edges  42% (4200000/10000000)" on one
// terminal line, only for phases with at least progressMin items.
type exportProgress struct {
	w     io.Writer
	drawn bool
}

func (b *exportProgress) update(p snapshot.Progress) {
	if p.Total < progressMin {
		return
	}
	fmt.Fprintf(b.w, "\rexport: %-5s %3d%% (%d/%d)", p.Phase, p.Done*100/p.Total, p.Done, p.Total)
	b.drawn = true
}

func (b *exportProgress) done() {
	if b != nil && b.drawn {
		fmt.Fprintln(b.w)
	}
}
