// Package cli is the memctl command line: one file per verb, output to an
// injected writer, exit codes in exit.go. Nothing imports cli except
// cmd/memctl.
package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Env is what a command run sees of the outside world. Tests inject their own.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// StderrIsTerminal enables progress bars.
	StderrIsTerminal bool
}

// Run executes memctl with args (args[0] is the program name) and returns the
// process exit code. Errors are printed as one line on Stderr.
func Run(args []string, env Env) int {
	app := newApp(env)
	err := app.Run(args)
	if err == nil {
		return ExitOK
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(env.Stderr, "memctl: %s\n", msg)
	return exitCode(err)
}

func newApp(env Env) *cli.App {
	app := &cli.App{
		Name:                 "memctl",
		Usage:                "a local, versioned graph memory for coding agents",
		Reader:               env.Stdin,
		Writer:               env.Stdout,
		ErrWriter:            env.Stderr,
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		// Errors are printed once, by Run; never os.Exit from inside urfave.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErr("%v", err)
		},
		Flags: globalFlags(env),
	}
	app.Commands = append(app.Commands, storeCommands(env)...)
	app.Commands = append(app.Commands, snapshotCommands(env)...)
	app.Commands = append(app.Commands, engineCommands(env)...)
	app.Commands = append(app.Commands, ingestCommands(env)...)
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = app.OnUsageError
		}
	}
	return app
}
