package cli

import "github.com/urfave/cli/v2"

// STUB: owned by the store-CLI implementer.
func globalFlags(env Env) []cli.Flag           { return nil }
func storeCommands(env Env) []*cli.Command     { return nil }
func classifyStoreError(err error) (int, bool) { return 0, false }
