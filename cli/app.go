// Package cli is the memctl command line: one file per verb, output to an
// injected writer, exit codes in exit.go. Nothing imports cli except
// cmd/memctl.
package cli

import (
	"encoding/json"
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
// process exit code. Errors are printed as one line on Stderr: `memctl: `
// and the message, or with --json one JSON object (SPEC.md §6.5).
func Run(args []string, env Env) (code int) {
	env = env.withDefaults()
	asJSON := jsonRequested(args)
	// Bad input must never crash memctl: a panic anywhere below becomes one
	// error line and exit 5.
	defer func() {
		if p := recover(); p != nil {
			code = reportError(env.Stderr, asJSON, fmt.Errorf("internal error: %s", fmt.Sprint(p)), ExitUnexpected)
		}
	}()
	app := newApp(env)
	argv, err := interspersed(app, helpArgs(app, args))
	if err == nil {
		err = app.Run(argv)
	}
	if err == nil {
		return ExitOK
	}
	return reportError(env.Stderr, asJSON, err, exitCode(err))
}

// errorJSON is a failed command's one line on stderr with --json.
type errorJSON struct {
	Error string `json:"error"`
	Code  int    `json:"code"`
}

// reportError prints err as the one stderr line of a failed command and
// returns code.
func reportError(w io.Writer, asJSON bool, err error, code int) int {
	msg := oneLine(err.Error())
	if !asJSON {
		fmt.Fprintf(w, "memctl: %s\n", msg)
		return code
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(errorJSON{Error: msg, Code: code}) != nil {
		fmt.Fprintf(w, "memctl: %s\n", msg)
		return code
	}
	io.WriteString(w, b.String())
	return code
}

// jsonRequested reports whether the command line asks for JSON output: a
// --json flag anywhere before "--" (it is a global flag, so it may come
// after the command's arguments too).
func jsonRequested(args []string) bool {
	on := false
	for _, a := range args[min(1, len(args)):] {
		switch a {
		case "--":
			return on
		case "--json", "-json", "--json=true", "-json=true", "--json=1", "-json=1":
			on = true
		case "--json=false", "-json=false", "--json=0", "-json=0":
			on = false
		}
	}
	return on
}

// helpArgs rewrites `help CMD [SUB]` into `CMD [SUB] --help`, so both print
// the same page: at any level of the command tree (`memctl help snapshot
// info`, `memctl snapshot help info`), "help" where a command name is
// expected asks for the help of what follows it. Global flags before the
// command are skipped.
func helpArgs(app *cli.App, args []string) []string {
	i := 1
	for i < len(args) && looksLikeFlag(args[i]) {
		n := flagTokens(app.Flags, args[i:])
		if n == 0 {
			return args // an unknown flag: urfave reports it
		}
		i += n
	}
	cmds := app.Commands
	for ; i < len(args); i++ {
		if args[i] == "help" {
			out := append(append([]string{}, args[:i]...), args[i+1:]...)
			return append(out, "--help")
		}
		c := findCommand(cmds, args[i])
		if c == nil || len(c.Subcommands) == 0 {
			return args
		}
		cmds = c.Subcommands
	}
	return args
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
		Flags:  append(append(globalFlags(env), replicaFlags()...), versionFlag()),
		Action: unknownCommand,
	}
	app.Commands = append(app.Commands, storeCommands(env)...)
	app.Commands = append(app.Commands, snapshotCommands(env)...)
	app.Commands = append(app.Commands, engineCommands(env)...)
	app.Commands = append(app.Commands, ingestCommands(env)...)
	app.Commands = append(app.Commands, mcpCommand(env), setupCommand(env))
	app.Commands = append(app.Commands, evalCommand(env))
	app.Commands = append(app.Commands, contextCommand(env))
	app.Commands = append(app.Commands, searchCommand(env))
	app.Commands = append(app.Commands, versionCommand(env), completionCommand(env))
	// Usage errors are one line at every level (never the help page).
	var inherit func(cmds []*cli.Command)
	inherit = func(cmds []*cli.Command) {
		for _, c := range cmds {
			if c.OnUsageError == nil {
				c.OnUsageError = app.OnUsageError
			}
			// No implicit "help" subcommand: `get-node help` reads the key
			// "help"; `help` where a command is expected is helpArgs'.
			c.HideHelpCommand = true
			// A command group given an unknown subcommand says so (exit 2,
			// with the nearest name) instead of urfave's "No help topic".
			if len(c.Subcommands) > 0 && c.Action == nil {
				c.Action = unknownCommand
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
	if c.Bool("version") {
		return printVersion(c)
	}
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
