package cli

import "github.com/urfave/cli/v2"

// STUB: owned by the ingest implementer.
func ingestCommands(env Env) []*cli.Command { return nil }
