package cli

import "github.com/urfave/cli/v2"

func getInCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-in",
		Usage: "list the live in-edges of DST (latest, or at --at-rev / --at)",
		Description: "One edge per line, ordered by relation name, then source key.\n" +
			"--rel restricts to one relation.",
		Args:  []string{"DST"},
		Flags: append(readFlags(), relFilterFlag()),
		Run:   func(k *call) error { return listEdges(k, inEdges) },
	})
}
