package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/urfave/cli/v2"
)

func initCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "init",
		Usage: "create a new, empty store at --db (the only command that creates one)",
		Run:   runInit,
	})
}

type initJSON struct {
	Path string `json:"path"`
}

func runInit(k *call) error {
	path := k.dbPath()
	opts, err := k.options(false)
	if err != nil {
		return err
	}
	s, err := lmdbstore.Init(path, opts)
	if err != nil {
		return err // the store's errors name the path
	}
	k.store = s
	if k.out.json {
		return k.out.record(initJSON{Path: path})
	}
	return k.out.textf("initialized empty store at %s\n", path)
}
