package cli

// The snapshot commands: export (store → snapshot file), import (snapshot →
// new store) and the snapshot group (info, verify, hash, get-node, get-out,
// get-in, diff), one cmd_<verb>.go each. What they share lives here: opening
// a snapshot, converting its records to the store commands' output records,
// and the mapping of snapshot errors to exit codes.

import (
	"errors"
	"fmt"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
	"github.com/urfave/cli/v2"
)

// errNotInSnapshot: a key the snapshot does not hold (exit 1).
var errNotInSnapshot = errors.New("not found in snapshot")

func snapshotCommands(env Env) []*cli.Command {
	return []*cli.Command{
		exportCommand(env),
		importCommand(env),
		{
			Name:            "snapshot",
			Usage:           "inspect snapshot files written by export",
			HideHelpCommand: true,
			Subcommands: []*cli.Command{
				snapshotInfoCommand(env),
				snapshotVerifyCommand(env),
				snapshotHashCommand(env),
				snapshotGetNodeCommand(env),
				snapshotGetOutCommand(env),
				snapshotGetInCommand(env),
				snapshotDiffCommand(env),
			},
		},
	}
}

// classifySnapshotError maps the snapshot layer's errors to exit codes: a
// damaged, foreign or too-new file is 3 (like a damaged store).
func classifySnapshotError(err error) (int, bool) {
	switch {
	case errors.Is(err, snapshot.ErrCorrupt),
		errors.Is(err, snapshot.ErrNewerVersion),
		errors.Is(err, snapshot.ErrUnsupported),
		errors.Is(err, snapshot.ErrInvalidState):
		return ExitCorrupt, true
	case errors.Is(err, errNotInSnapshot):
		return ExitNotFound, true
	case errors.Is(err, storesnap.ErrImport):
		return ExitUsage, true
	}
	return 0, false
}

func noVerifyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-verify", Usage: "skip the full integrity check (CRCs and invariants) before reading"}
}

// openSnapshot maps path and, unless --no-verify (or verify is false),
// checks it fully. Errors name the file; format errors name the section.
func (k *call) openSnapshot(path string, verify bool) (*csr.Graph, error) {
	g, err := csr.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if verify {
		if err := k.verifySnapshot(path, g); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// verifySnapshot is g's full verify, unless --no-verify.
func (k *call) verifySnapshot(path string, g *csr.Graph) error {
	if k.ctx.Bool("no-verify") {
		return nil
	}
	if err := g.Verify(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// nsTime converts a snapshot timestamp; 0 (a logical export) is no time.
func nsTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// lookupKey finds key's node index or fails with errNotInSnapshot.
func lookupKey(g *csr.Graph, path, key string) (csr.NodeIndex, error) {
	i, ok, err := g.LookupKey(key)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		return 0, fmt.Errorf("node %q %w %s", key, errNotInSnapshot, path)
	}
	return i, nil
}

// storeNode is snapshot node i as the store commands print nodes.
func storeNode(g *csr.Graph, i csr.NodeIndex) (lmdbstore.Node, error) {
	n, err := g.Node(i)
	if err != nil {
		return lmdbstore.Node{}, err
	}
	p, err := g.Payload(i)
	if err != nil {
		return lmdbstore.Node{}, err
	}
	valid, err := snapshotValidity(g, i)
	if err != nil {
		return lmdbstore.Node{}, err
	}
	return lmdbstore.Node{
		ID: lmdbstore.NodeID(n.ID), Key: n.Key, Type: n.Type, Payload: p,
		Scope: n.Scope, RunID: n.RunID, TaskID: n.TaskID,
		CreatedTS: nsTime(n.CreatedTS), UpdatedTS: nsTime(n.UpdatedTS),
		CreatedRev: lmdbstore.Revision(n.CreatedRev), Rev: lmdbstore.Revision(n.Rev), Valid: valid,
	}, nil
}
