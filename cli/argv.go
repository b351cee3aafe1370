package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// urfave/cli v2 stops parsing flags at the first positional argument, so
// `memctl put-edge a calls b --weight 2` would see "--weight" as a fourth
// argument. interspersed rewrites the command line into the order urfave
// understands, using the app's own flag definitions:
//
//	prog [global flags] command [subcommand...] [command flags] -- [positionals]
//
// Rules: a token after "--" is positional; "-" alone and tokens that look
// like negative numbers ("-1", "-0.5") are positional; a flag that takes a
// value consumes the next token unless written --name=value; a flag the leaf
// command defines is the command's, else a flag the app defines is global;
// an unknown flag is left to the leaf command so urfave reports it. Commands
// with SkipFlagParsing keep their tokens untouched. A flag that takes a value
// and is followed by nothing, by "--" or by another flag is missing its
// value: a usage error (exit 2), never a value taken from the next token.
func interspersed(app *cli.App, args []string) ([]string, error) {
	if len(args) <= 1 {
		return args, nil
	}
	if err := checkFlagValues(app, args[1:]); err != nil {
		return nil, err
	}
	out := []string{args[0]}
	rest := args[1:]

	// Global flags before the command name.
	var global []string
	i := 0
	for i < len(rest) {
		tok := rest[i]
		if tok == "--" || !looksLikeFlag(tok) {
			break
		}
		n := flagTokens(app.Flags, rest[i:])
		if n == 0 {
			n = 1 // unknown: let urfave report it
		}
		global = append(global, rest[i:i+n]...)
		i += n
	}
	if i >= len(rest) || rest[i] == "--" {
		return append(append(out, global...), rest[i:]...), nil
	}

	// The command path: command, then subcommands while they match.
	cmd := findCommand(app.Commands, rest[i])
	if cmd == nil {
		return append(append(out, global...), rest[i:]...), nil
	}
	path := []string{rest[i]}
	i++
	tail := rest[i:]
	for {
		sub, at := firstSubcommand(cmd, app.Flags, tail)
		if sub == nil {
			break
		}
		// Tokens before the subcommand name: the parent's flags stay in
		// place (the parent parses them), global flags move to the front.
		for j := 0; j < at; {
			n := flagTokens(cmd.Flags, tail[j:at])
			if n > 0 {
				path = append(path, tail[j:j+n]...)
			} else if n = flagTokens(app.Flags, tail[j:at]); n > 0 {
				global = append(global, tail[j:j+n]...)
			} else {
				n = 1
				path = append(path, tail[j])
			}
			j += n
		}
		path = append(path, tail[at])
		cmd = sub
		tail = tail[at+1:]
	}
	if cmd.SkipFlagParsing {
		out = append(out, global...)
		out = append(out, path...)
		return append(out, tail...), nil
	}

	var local, positional []string
	sawDashes := false
	for j := 0; j < len(tail); {
		tok := tail[j]
		if tok == "--" {
			sawDashes = true
			positional = append(positional, tail[j+1:]...)
			break
		}
		if !looksLikeFlag(tok) {
			positional = append(positional, tok)
			j++
			continue
		}
		if isHelpFlag(tok) {
			local = append(local, tok)
			j++
			continue
		}
		if n := flagTokens(cmd.Flags, tail[j:]); n > 0 {
			local = append(local, tail[j:j+n]...)
			j += n
			continue
		}
		if n := flagTokens(app.Flags, tail[j:]); n > 0 {
			global = append(global, tail[j:j+n]...)
			j += n
			continue
		}
		local = append(local, tok) // unknown flag: urfave reports it
		j++
	}
	out = append(out, global...)
	out = append(out, path...)
	out = append(out, local...)
	if len(positional) > 0 || sawDashes {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out, nil
}

// looksLikeFlag reports whether tok is a flag rather than a positional
// argument: "-x", "--x", "--x=v", but not "-", "--" or a negative number.
func looksLikeFlag(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' {
		return false
	}
	name := strings.TrimLeft(tok, "-")
	if name == "" {
		return false
	}
	c := name[0]
	return !(c >= '0' && c <= '9') && c != '.'
}

func isHelpFlag(tok string) bool {
	switch flagName(tok) {
	case "h", "help":
		return true
	}
	return false
}

// flagName is the name in "-n", "--name" or "--name=value".
func flagName(tok string) string {
	name := strings.TrimLeft(tok, "-")
	if k := strings.IndexByte(name, '='); k >= 0 {
		name = name[:k]
	}
	return name
}

// flagTokens returns how many tokens of toks (toks[0] is a flag) belong to
// a flag defined in flags: 1 or 2; 0 if flags does not define it.
func flagTokens(flags []cli.Flag, toks []string) int {
	name := flagName(toks[0])
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if strings.Contains(toks[0], "=") || !takesValue(f) || len(toks) < 2 {
				return 1
			}
			return 2
		}
	}
	return 0
}

func takesValue(f cli.Flag) bool {
	if tv, ok := f.(interface{ TakesValue() bool }); ok {
		return tv.TakesValue()
	}
	return true
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// firstSubcommand finds the first positional token of toks (skipping flags
// of cmd and global flags, with their values) and returns the subcommand of
// cmd it names (nil if it names none) and its index.
func firstSubcommand(cmd *cli.Command, globals []cli.Flag, toks []string) (*cli.Command, int) {
	if len(cmd.Subcommands) == 0 {
		return nil, 0
	}
	for j := 0; j < len(toks); j++ {
		tok := toks[j]
		if tok == "--" {
			return nil, 0
		}
		if looksLikeFlag(tok) {
			n := flagTokens(cmd.Flags, toks[j:])
			if n == 0 {
				n = flagTokens(globals, toks[j:])
			}
			if n == 2 {
				j++
			}
			continue
		}
		sub := findCommand(cmd.Subcommands, tok)
		return sub, j
	}
	return nil, 0
}

// checkFlagValues reports the first flag, known to the app or any of its
// commands, that takes a value but is given none (end of the line, "--" or
// a flag follows). Tokens after "--" are positional.
func checkFlagValues(app *cli.App, toks []string) error {
	for j, tok := range toks {
		if tok == "--" {
			return nil
		}
		if !looksLikeFlag(tok) || strings.Contains(tok, "=") {
			continue
		}
		f := findFlag(app, flagName(tok))
		if f == nil || !takesValue(f) {
			continue
		}
		if j+1 >= len(toks) || toks[j+1] == "--" || looksLikeFlag(toks[j+1]) {
			return usageErr("flag %s needs a value", tok)
		}
	}
	return nil
}

// findFlag finds the flag named name among the app's flags and those of
// every command, depth first (flag names mean the same everywhere).
func findFlag(app *cli.App, name string) cli.Flag {
	var walk func(flags []cli.Flag, cmds []*cli.Command) cli.Flag
	walk = func(flags []cli.Flag, cmds []*cli.Command) cli.Flag {
		for _, f := range flags {
			for _, n := range f.Names() {
				if n == name {
					return f
				}
			}
		}
		for _, c := range cmds {
			if f := walk(c.Flags, c.Subcommands); f != nil {
				return f
			}
		}
		return nil
	}
	return walk(app.Flags, app.Commands)
}
