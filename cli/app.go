// Package cli is the memctl command line: one file per verb, output to an
// injected writer, exit codes in exit.go. Nothing imports cli except
// cmd/memctl.
package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/memctl/memctl/suggest"
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
func Run(args []string, env Env) (code int) {
	env = env.withDefaults()
	// Bad input must never crash memctl: a panic anywhere below becomes one
	// error line and exit 5.
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(env.Stderr, "memctl: internal error: %s\n", oneLine(fmt.Sprint(p)))
			code = ExitUnexpected
		}
	}()
	app := newApp(env)
	argv, err := interspersed(app, args)
	if err == nil {
		err = app.Run(argv)
	}
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "memctl: %s\n", oneLine(err.Error()))
	return exitCode(err)
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " ")
}

// withDefaults fills what a caller left nil: no input, discarded output, an
// empty environment.
func (env Env) withDefaults() Env {
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	return env
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
		Flags:  globalFlags(env),
		Action: unknownCommand,
	}
	app.Commands = append(app.Commands, storeCommands(env)...)
	app.Commands = append(app.Commands, snapshotCommands(env)...)
	app.Commands = append(app.Commands, engineCommands(env)...)
	app.Commands = append(app.Commands, ingestCommands(env)...)
	app.Commands = append(app.Commands, mcpCommand(env))
	app.Commands = append(app.Commands, evalCommand(env))
	app.Commands = append(app.Commands, contextCommand(env))
	app.Commands = append(app.Commands, searchCommand(env))
	// Usage errors are one line at every level (never the help page).
	var inherit func(cmds []*cli.Command)
	inherit = func(cmds []*cli.Command) {
		for _, c := range cmds {
			if c.OnUsageError == nil {
				c.OnUsageError = app.OnUsageError
			}
			inherit(c.Subcommands)
		}
	}
	inherit(app.Commands)
	return app
}

// unknownCommand is the action of the app and of every command group: with
// no argument it shows help; otherwise the argument names no command.
func unknownCommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return cli.ShowSubcommandHelp(c)
	}
	name := c.Args().First()
	if name == "help" {
		return cli.ShowSubcommandHelp(c)
	}
	var cmds []*cli.Command
	if c.Command != nil && len(c.Command.Subcommands) > 0 {
		cmds = c.Command.Subcommands
	} else {
		cmds = c.App.Commands
	}
	var names []string
	for _, cmd := range cmds {
		if !cmd.Hidden {
			names = append(names, cmd.Name)
		}
	}
	if s := suggest.Nearest(name, names); s != "" {
		return usageErr("unknown command %q (did you mean %q?)", name, s)
	}
	return usageErr("unknown command %q", name)
}
