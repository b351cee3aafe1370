package cli

import (
	"github.com/urfave/cli/v2"
)

func compactCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "compact",
		Usage: "merge and prune every adjacency list (and history older than the horizon)",
		Description: "--retain N first sets the retention to the last N revisions (0: keep all\n" +
			"history); reads older than the horizon then fail instead of answering wrongly.",
		Flags: []cli.Flag{
			&cli.Uint64Flag{Name: "retain", Usage: "keep the last `N` revisions readable (0: all)"},
		},
		Run: runCompact,
	})
}

type compactJSON struct {
	ChunksBefore  int `json:"chunks_before"`
	ChunksAfter   int `json:"chunks_after"`
	EntriesBefore int `json:"entries_before"`
	EntriesAfter  int `json:"entries_after"`
	HistDropped   int `json:"hist_dropped"`
}

func runCompact(k *call) error {
	// Compaction writes no revision (its horizon is local, SPEC §13.7):
	// a bound store compacts without its remote.
	k.offline = true
	s, err := k.open(false)
	if err != nil {
		return err
	}
	if k.ctx.IsSet("retain") {
		if err := s.SetRetention(k.ctx.Uint64("retain")); err != nil {
			return err
		}
	}
	cs, err := s.Compact()
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(compactJSON{
			ChunksBefore: cs.ChunksBefore, ChunksAfter: cs.ChunksAfter,
			EntriesBefore: cs.EntriesBefore, EntriesAfter: cs.EntriesAfter,
			HistDropped: cs.HistDropped,
		})
	}
	return k.out.textf("compacted: adjacency chunks %d -> %d, entries %d -> %d, history versions dropped %d\n",
		cs.ChunksBefore, cs.ChunksAfter, cs.EntriesBefore, cs.EntriesAfter, cs.HistDropped)
}
