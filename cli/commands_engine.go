package cli

import "github.com/urfave/cli/v2"

// STUB: owned by the engines implementer.
func engineCommands(env Env) []*cli.Command { return nil }
