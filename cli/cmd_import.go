package cli

import (
	"errors"
	"os"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/storesnap"
	"github.com/urfave/cli/v2"
)

func importCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "import",
		Usage: "build a new store (--db) from a snapshot file's state",
		Description: "The store must not exist yet; it is created, and removed again if the import fails.\n" +
			"The snapshot is verified while the load is built from it: nothing is written unless it\n" +
			"passes. Revisions and times are the new store's: one per added relation, then one for\n" +
			"every node and edge (a bulk load).",
		Args: []string{"FILE"},
		Run:  runImport,
	})
}

// importJSON is what import prints with --json (SPEC.md §6.x).
type importJSON struct {
	DB        string `json:"db"`
	Rev       uint64 `json:"rev"`
	Nodes     int    `json:"nodes"`
	Edges     int    `json:"edges"`
	Relations int    `json:"relations"`
}

func runImport(k *call) (err error) {
	// Verified while the load is built from it (storesnap.ImportOptions):
	// nothing is written unless it passes.
	g, err := k.openSnapshot(k.args[0], false)
	if err != nil {
		return err
	}
	defer g.Close()
	opts, err := k.options(false)
	if err != nil {
		return err
	}
	// Every key is redacted once the snapshot's keys are read: the
	// scanner's rules compile beside that reading, the store's creation
	// and Verify, not on the first key's redaction (where the other
	// redacting goroutines would wait for them).
	if w, ok := opts.Redactor.(interface{ Warm() }); ok {
		go w.Warm()
	}
	path := k.dbPath()
	_, statErr := os.Stat(path)
	existed := !errors.Is(statErr, os.ErrNotExist)
	s, err := lmdbstore.Init(path, opts)
	if err != nil {
		return err
	}
	k.store = s
	defer func() {
		if err != nil && !existed {
			_ = s.Close()
			k.store = nil
			_ = os.RemoveAll(path)
		}
	}()
	stats, err := storesnap.Import(g.File(), s, storesnap.ImportOptions{Verify: func() error { return k.verifySnapshot(k.args[0], g) }})
	if err != nil {
		return err
	}
	var rev lmdbstore.Revision
	if err := s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil }); err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(importJSON{DB: path, Rev: uint64(rev), Nodes: stats.Nodes, Edges: stats.Edges, Relations: stats.Relations})
	}
	return k.out.textf("imported %d nodes, %d edges, %d relations into %s (rev %d)\n", stats.Nodes, stats.Edges, stats.Relations, path, rev)
}
