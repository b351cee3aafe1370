package cli

import "github.com/urfave/cli/v2"

func getInCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "get-in",
		Usage: "list the live in-edges of DST (latest, or at --at-rev / --at)",
		Description: "One edge per line, ordered by relation name, then source key.\n" +
			"--rel restricts to one relation. Edges from superseded sources, or from ones\n" +
			"not valid at --valid-at (default: now), are left out unless --include-superseded\n" +
			"/ --include-expired (supersedes edges are always listed).",
		Args:  []string{"DST"},
		Flags: append(append(readFlags(), relFilterFlag()), statusFlags()...),
		Run:   func(k *call) error { return listEdges(k, inEdges) },
	})
}
