package cli

import "github.com/urfave/cli/v2"

// STUB: owned by the snapshot implementer.
func snapshotCommands(env Env) []*cli.Command     { return nil }
func classifySnapshotError(err error) (int, bool) { return 0, false }
