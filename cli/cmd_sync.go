package cli

import (
	"fmt"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
	"github.com/urfave/cli/v2"
)

func syncCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "sync",
		Usage: "apply the revisions the store's remote holds beyond it (SPEC.md §13)",
		Run:   runSync,
	})
}

type syncJSON struct {
	Remote  string `json:"remote"`
	Applied int    `json:"applied"`
	Rev     uint64 `json:"rev"`
	Pos     uint64 `json:"pos"`
}

func runSync(k *call) error {
	path := k.dbPath()
	addr, bound, err := replica.ReadBinding(path)
	if err != nil {
		return err
	}
	if !bound {
		return fmt.Errorf("%w: %s is not bound to a remote (memctl remote add URL binds it)", lmdbstore.ErrInvalid, path)
	}
	k.noCatchUp = true // the sync is this command's own
	s, err := k.open(false)
	if err != nil {
		return err
	}
	n, b, err := syncBinding(k.remotes[len(k.remotes)-1], s)
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(syncJSON{Remote: addr.String(), Applied: n, Rev: uint64(b.Rev), Pos: b.Pos})
	}
	return k.out.textf("applied %d revisions from %s: at revision %d\n", n, addr, b.Rev)
}
