// Command peers runs memctl against the stores a user would pick instead
// (a SQLite adjacency table, bbolt, raw LMDB) on one generated code graph
// and prints one table. `make bench-peers` runs it with the defaults.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/memctl/memctl/bench/harness"
	"github.com/memctl/memctl/bench/memctlpeer"
)

func main() {
	harness.MaybeChild(memctlpeer.New)
	var (
		sizes    = flag.String("sizes", "10000,100000", "comma-separated node counts")
		large    = flag.Bool("large", false, "also run 1,000,000 nodes (8M edges; about 15 more minutes)")
		seed     = flag.Uint64("seed", 1, "generator seed")
		batch    = flag.Int("batch", 10000, "operations per bulk-load transaction")
		writes   = flag.Int("writes", 200, "single-edge durable writes")
		readTime = flag.Duration("readtime", 1500*time.Millisecond, "time per read workload and system")
		fresh    = flag.Int("fresh", 11, "fresh processes per system")
		systems  = flag.String("systems", "memctl,memctl-snap,sqlite,bbolt,lmdb-raw", "systems, the first is the reference")
		dir      = flag.String("dir", "", "scratch directory (default: a temporary one, removed)")
		keep     = flag.Bool("keep", false, "keep the stores")
		profDir  = flag.String("cpuprofile", "", "directory for CPU profiles per size and workload")
	)
	flag.Parse()
	o := harness.Options{
		Seed: *seed, BatchOps: *batch, Writes: *writes, ReadTime: *readTime, FreshRuns: *fresh,
		Systems: strings.Split(*systems, ","), Derived: map[string]string{"memctl-snap": "memctl"},
		New: memctlpeer.New, Dir: *dir, Keep: *keep, ProfileDir: *profDir,
		Log: os.Stderr,
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 100 {
			fmt.Fprintf(os.Stderr, "peers: bad size %q\n", s)
			os.Exit(2)
		}
		o.Sizes = append(o.Sizes, n)
	}
	if *large {
		o.Sizes = append(o.Sizes, 1000000)
	}
	if *profDir != "" {
		if err := os.MkdirAll(*profDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "peers:", err)
			os.Exit(1)
		}
	}
	res, err := harness.Run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
	fmt.Printf("memctl peers benchmark — %s, %d CPUs (%s), %s, %s, run took %v\n\n",
		res.Started.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpuModel(), runtime.Version(),
		runtime.GOOS+"/"+runtime.GOARCH, res.Elapsed.Round(time.Second))
	harness.WriteTable(os.Stdout, res)
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
