package cli

// The eval commands measure how well memory answers questions about a real
// git repository, against its own history (package eval, SPEC.md §11). They
// never touch the --db store: each run keeps its own store in a work
// directory.

import "github.com/urfave/cli/v2"

func evalCommands(env Env) []*cli.Command {
	return []*cli.Command{{
		Name:  "eval",
		Usage: "measure answer quality on a git repository (eval cochange DIR)",
		Subcommands: []*cli.Command{
			evalCochangeCommand(env),
		},
	}}
}
