// Command memctl is a thin main: everything lives in package cli.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/memctl/memctl/cli"
	"golang.org/x/term"
)

func main() {
	os.Exit(run())
}

// run is main with its deferred profile writes done before the exit.
// MEMCTL_CPUPROFILE=FILE and MEMCTL_MEMPROFILE=FILE write Go pprof
// profiles of the whole invocation (SPEC.md §6.1); a profile that cannot
// be written is reported on stderr and does not change the exit code.
func run() int {
	if path := os.Getenv("MEMCTL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "memctl: MEMCTL_CPUPROFILE: %v\n", err)
		} else {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	if path := os.Getenv("MEMCTL_MEMPROFILE"); path != "" {
		defer writeHeapProfile(path)
	}
	return cli.Run(os.Args, cli.Env{
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	})
}

// writeHeapProfile writes the heap profile (allocations since the start,
// in-use at the last collection) to path.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		runtime.GC()
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "memctl: MEMCTL_MEMPROFILE: %v\n", err)
	}
}
