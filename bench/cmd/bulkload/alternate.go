package main

// Alternated rounds of two memctl binaries' loads (-base BIN -rounds N):
// on a shared machine only figures taken in the same minutes compare, so
// each round runs, for the base binary and then -memctl's, `import` of the
// workload snapshot and `init` + `batch --bulk` of its JSON Lines into
// fresh stores. The summary gives, per binary and load, the median and
// range of the CPU time (user + sys: what the load of others inflates
// least), the wall time and the peak RSS, with the load average seen.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// alternate runs rounds rounds of base's and bin's loads on the inputs
// in dir (written by cliLoads), checking the first round's stores against
// want (the ordinary path's logical hash).
func alternate(dir, base, bin string, rounds, edges int, nosync bool, want string) {
	type key struct{ bin, load string }
	got := map[key][]measured{}
	var loads []string
	snap, jsonl := filepath.Join(dir, "workload.snap"), filepath.Join(dir, "workload.jsonl")
	for r := range rounds {
		loads = append(loads, loadAverage())
		for _, b := range []string{base, bin} {
			imp, bb := filepath.Join(dir, "alt-import"), filepath.Join(dir, "alt-batch")
			check(os.RemoveAll(imp))
			check(os.RemoveAll(bb))
			got[key{b, "import"}] = append(got[key{b, "import"}], runCLI("import", edges, b, "", nosync, "--db", imp, "import", snap))
			runCLI("init", edges, b, "", nosync, "--db", bb, "init")
			got[key{b, "batch"}] = append(got[key{b, "batch"}], runCLI("batch", edges, b, jsonl, nosync, "--db", bb, "batch", "--bulk", "--scope", "repo", "--run", "bench"))
			if r == 0 {
				for _, path := range []string{imp, bb} {
					if h := logicalHash(path); h != want {
						check(fmt.Errorf("%s: %s: logical hash %s differs from the ordinary path's %s", b, path, h, want))
					}
				}
			}
			check(os.RemoveAll(imp))
			check(os.RemoveAll(bb))
		}
	}
	fmt.Printf("\n%d alternated rounds (load average %s); every store of the first round has the ordinary path's logical hash\n", rounds, strings.Join(loads, " "))
	for _, load := range []string{"import", "batch"} {
		for _, b := range []string{base, bin} {
			ms := got[key{b, load}]
			cpus, walls, rss := make([]time.Duration, len(ms)), make([]time.Duration, len(ms)), make([]float64, len(ms))
			for i, m := range ms {
				cpus[i], walls[i], rss[i] = m.cpu, m.wall, m.rssMB
			}
			slices.Sort(cpus)
			slices.Sort(walls)
			slices.Sort(rss)
			fmt.Printf("%-6s %-24s CPU %.2f s (%.2f–%.2f)  wall %.2f s (%.2f–%.2f; %.0fK edges/s at the median)  peak RSS %.0f–%.0f MB\n",
				load, filepath.Base(b), median(cpus).Seconds(), cpus[0].Seconds(), cpus[len(cpus)-1].Seconds(),
				median(walls).Seconds(), walls[0].Seconds(), walls[len(walls)-1].Seconds(), float64(edges)/median(walls).Seconds()/1000,
				rss[0], rss[len(rss)-1])
		}
	}
}

// median of a sorted, non-empty list (the mean of the middle two for an
// even length).
func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

// loadAverage is the 1-minute load average, "?" where /proc has none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
