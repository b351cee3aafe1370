// Command memctl is a thin main: everything lives in package cli.
package main

import (
	"os"

	"github.com/memctl/memctl/cli"
	"golang.org/x/term"
)

func main() {
	os.Exit(cli.Run(os.Args, cli.Env{
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}))
}
