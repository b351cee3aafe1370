package cli

// `memctl completion bash|zsh|fish` prints a completion script built from
// the command tree itself, so it completes every verb, subcommand and flag
// this binary has and never goes stale. The scripts are static: they do not
// run memctl while completing (no store is opened on a TAB press). After a
// command path is complete, a word starting with "-" completes its flags
// and the global flags; any other word falls back to file names.

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

func completionCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "completion",
		Usage: "print a shell completion script: bash, zsh or fish",
		Description: "bash:  source <(memctl completion bash)   (or save it in /etc/bash_completion.d/memctl)\n" +
			"zsh:   memctl completion zsh > \"${fpath[1]}/_memctl\"   (then restart zsh)\n" +
			"fish:  memctl completion fish > ~/.config/fish/completions/memctl.fish",
		Args: []string{"SHELL"},
		Run:  runCompletion,
	})
}

func runCompletion(k *call) error {
	tree := completionTree(k.ctx.App)
	var err error
	switch shell := k.args[0]; shell {
	case "bash":
		err = writeBashCompletion(k.out.buf, tree)
	case "zsh":
		err = writeZshCompletion(k.out.buf, tree)
	case "fish":
		err = writeFishCompletion(k.out.buf, tree)
	default:
		return usageErr("completion: unknown shell %q (bash, zsh or fish)", shell)
	}
	return err
}

// completionNode is one command path ("" for memctl itself, "snapshot info"
// for a subcommand): the subcommands it takes and the flags it accepts.
type completionNode struct {
	path  string
	usage string
	subs  []string
	flags []completionFlag // the command's own, then the global ones
}

type completionFlag struct {
	name  string // without dashes
	value bool   // takes a value
	usage string
}

// completionTree lists every visible command path of app, depth first.
func completionTree(app *cli.App) []completionNode {
	global := completionFlags(app.VisibleFlags())
	var nodes []completionNode
	var walk func(path, usage string, cmds []*cli.Command, flags []cli.Flag)
	walk = func(path, usage string, cmds []*cli.Command, flags []cli.Flag) {
		n := completionNode{path: path, usage: usage}
		if path != "" {
			n.flags = completionFlags(flags)
		}
		n.flags = append(n.flags, global...)
		var visible []*cli.Command
		for _, c := range cmds {
			if !c.Hidden {
				visible = append(visible, c)
				n.subs = append(n.subs, c.Name)
			}
		}
		nodes = append(nodes, n)
		for _, c := range visible {
			walk(strings.TrimSpace(path+" "+c.Name), c.Usage, c.Subcommands, c.VisibleFlags())
		}
	}
	walk("", app.Usage, app.VisibleCommands(), nil)
	return nodes
}

func completionFlags(fs []cli.Flag) []completionFlag {
	var out []completionFlag
	for _, f := range fs {
		usage := ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			usage = strings.ReplaceAll(d.GetUsage(), "`", "")
		}
		for _, name := range f.Names() {
			if len(name) > 1 {
				out = append(out, completionFlag{name: name, value: takesValue(f), usage: usage})
			}
		}
	}
	return out
}

// valueFlags are the names of every flag that takes a value: the scripts
// skip the word after one when they look for the command path.
func valueFlags(tree []completionNode) []string {
	var names []string
	for _, n := range tree {
		for _, f := range n.flags {
			if f.value && !slices.Contains(names, "--"+f.name) {
				names = append(names, "--"+f.name)
			}
		}
	}
	slices.Sort(names)
	return names
}

func flagWords(n completionNode) string {
	var ws []string
	for _, f := range n.flags {
		ws = append(ws, "--"+f.name)
	}
	return strings.Join(ws, " ")
}

// shWord quotes s for a POSIX shell (bash, zsh) single-quoted word.
func shWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pathScan is the shell code (bash and zsh share it) that sets path to the
// command path the words before the cursor name: flags and the values of
// value flags are skipped, a word that is a subcommand of the path so far
// extends it, and the first other word ends it.
func pathScan(w io.Writer, tree []completionNode, words, from, to string) {
	fmt.Fprintf(w, "  local path= word i skip=\n")
	fmt.Fprintf(w, "  for ((i = %s; i < %s; i++)); do\n", from, to)
	fmt.Fprintf(w, "    word=%s\n", words)
	fmt.Fprintf(w, "    if [[ -n $skip ]]; then skip=; continue; fi\n")
	fmt.Fprintf(w, "    case $word in\n")
	fmt.Fprintf(w, "      --) break ;;\n")
	fmt.Fprintf(w, "      %s) skip=1; continue ;;\n", strings.Join(valueFlags(tree), "|"))
	fmt.Fprintf(w, "      -*) continue ;;\n")
	fmt.Fprintf(w, "    esac\n")
	fmt.Fprintf(w, "    case \"$path/$word\" in\n")
	for _, n := range tree {
		for _, s := range n.subs {
			fmt.Fprintf(w, "      %s) path=%s ;;\n", shWord(n.path+"/"+s), shWord(strings.TrimSpace(n.path+" "+s)))
		}
	}
	fmt.Fprintf(w, "      *) break ;;\n")
	fmt.Fprintf(w, "    esac\n")
	fmt.Fprintf(w, "  done\n")
}

func writeBashCompletion(w io.Writer, tree []completionNode) error {
	fmt.Fprintf(w, "# bash completion for memctl (memctl completion bash)\n")
	fmt.Fprintf(w, "_memctl() {\n")
	fmt.Fprintf(w, "  local cur=${COMP_WORDS[COMP_CWORD]}\n")
	pathScan(w, tree, `${COMP_WORDS[i]}`, "1", "COMP_CWORD")
	fmt.Fprintf(w, "  local subs= flags=\n")
	fmt.Fprintf(w, "  case $path in\n")
	for _, n := range tree {
		fmt.Fprintf(w, "    %s) subs=%s; flags=%s ;;\n", shWord(n.path), shWord(strings.Join(n.subs, " ")), shWord(flagWords(n)))
	}
	fmt.Fprintf(w, "  esac\n")
	fmt.Fprintf(w, "  if [[ $cur == -* ]]; then\n")
	fmt.Fprintf(w, "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "  elif [[ -n $subs ]]; then\n")
	fmt.Fprintf(w, "    COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "  else\n")
	fmt.Fprintf(w, "    COMPREPLY=($(compgen -f -- \"$cur\"))\n")
	fmt.Fprintf(w, "  fi\n")
	fmt.Fprintf(w, "}\n")
	_, err := fmt.Fprintf(w, "complete -o filenames -F _memctl memctl\n")
	return err
}

func writeZshCompletion(w io.Writer, tree []completionNode) error {
	fmt.Fprintf(w, "#compdef memctl\n")
	fmt.Fprintf(w, "# zsh completion for memctl (memctl completion zsh)\n")
	fmt.Fprintf(w, "_memctl() {\n")
	fmt.Fprintf(w, "  local cur=${words[CURRENT]}\n")
	pathScan(w, tree, `${words[i]}`, "2", "CURRENT")
	fmt.Fprintf(w, "  local -a subs flags\n")
	fmt.Fprintf(w, "  case $path in\n")
	for _, n := range tree {
		var subs, flags []string
		for _, s := range n.subs {
			subs = append(subs, shWord(s+":"+zshDesc(subUsage(tree, n.path, s))))
		}
		for _, f := range n.flags {
			flags = append(flags, shWord("--"+f.name+":"+zshDesc(f.usage)))
		}
		fmt.Fprintf(w, "    %s) subs=(%s); flags=(%s) ;;\n", shWord(n.path), strings.Join(subs, " "), strings.Join(flags, " "))
	}
	fmt.Fprintf(w, "  esac\n")
	fmt.Fprintf(w, "  if [[ $cur == -* ]]; then\n")
	fmt.Fprintf(w, "    _describe -t flags 'flag' flags\n")
	fmt.Fprintf(w, "  elif (( ${#subs} )); then\n")
	fmt.Fprintf(w, "    _describe -t commands 'command' subs\n")
	fmt.Fprintf(w, "  else\n")
	fmt.Fprintf(w, "    _files\n")
	fmt.Fprintf(w, "  fi\n")
	fmt.Fprintf(w, "}\n")
	_, err := fmt.Fprintf(w, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n  _memctl \"$@\"\nelse\n  compdef _memctl memctl\nfi\n")
	return err
}

// subUsage is the usage line of subcommand sub of path.
func subUsage(tree []completionNode, path, sub string) string {
	want := strings.TrimSpace(path + " " + sub)
	for _, n := range tree {
		if n.path == want {
			return n.usage
		}
	}
	return ""
}

// zshDesc makes s safe after the ":" of a _describe item.
func zshDesc(s string) string {
	return strings.NewReplacer(":", `\:`, "\n", " ").Replace(s)
}

func writeFishCompletion(w io.Writer, tree []completionNode) error {
	fmt.Fprintf(w, "# fish completion for memctl (memctl completion fish)\n")
	// __memctl_path prints the command path of the words before the cursor.
	fmt.Fprintf(w, "function __memctl_path\n")
	fmt.Fprintf(w, "    set -l words (commandline -opc)\n")
	fmt.Fprintf(w, "    set -l path ''\n")
	fmt.Fprintf(w, "    set -l skip 0\n")
	fmt.Fprintf(w, "    for word in $words[2..-1]\n")
	fmt.Fprintf(w, "        if test $skip = 1\n            set skip 0\n            continue\n        end\n")
	fmt.Fprintf(w, "        switch $word\n")
	fmt.Fprintf(w, "            case --\n                break\n")
	fmt.Fprintf(w, "            case %s\n                set skip 1\n                continue\n", strings.Join(valueFlags(tree), " "))
	fmt.Fprintf(w, "            case '-*'\n                continue\n")
	fmt.Fprintf(w, "        end\n")
	fmt.Fprintf(w, "        switch \"$path/$word\"\n")
	for _, n := range tree {
		for _, s := range n.subs {
			fmt.Fprintf(w, "            case %s\n                set path %s\n", fishQuote(n.path+"/"+s), fishQuote(strings.TrimSpace(n.path+" "+s)))
		}
	}
	fmt.Fprintf(w, "            case '*'\n                break\n")
	fmt.Fprintf(w, "        end\n")
	fmt.Fprintf(w, "    end\n")
	fmt.Fprintf(w, "    echo $path\n")
	fmt.Fprintf(w, "end\n\n")
	fmt.Fprintf(w, "complete -c memctl -e\n")
	for _, n := range tree {
		cond := fmt.Sprintf("test (__memctl_path) = %s", fishQuote(n.path))
		if n.path == "" {
			cond = "test -z (__memctl_path)"
		}
		if len(n.subs) == 0 {
			fmt.Fprintf(w, "complete -c memctl -n %s -F\n", fishQuote(cond))
		} else {
			fmt.Fprintf(w, "complete -c memctl -n %s -f\n", fishQuote(cond))
		}
		for _, s := range n.subs {
			fmt.Fprintf(w, "complete -c memctl -n %s -a %s -d %s\n", fishQuote(cond), fishQuote(s), fishQuote(subUsage(tree, n.path, s)))
		}
		for _, f := range n.flags {
			line := fmt.Sprintf("complete -c memctl -n %s -l %s", fishQuote(cond), fishQuote(f.name))
			if f.value {
				line += " -r"
			}
			fmt.Fprintf(w, "%s -d %s\n", line, fishQuote(f.usage))
		}
	}
	return nil
}

// fishQuote quotes s as one fish single-quoted word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", " ").Replace(s) + "'"
}
