// Command bulkload times memctl's bulk load (lmdbstore.Bulk, what memctl
// import and batch --bulk use) on the peers workload, against the ordinary
// path (one Update per -batch operations) on the same graph in the same
// run, and prints wall-clock and CPU figures with the store's space per
// keyspace. With -memctl BIN it also writes the workload as a snapshot
// (exported from the ordinary store) and as JSON Lines, times `BIN import`
// and `BIN batch --bulk` of them as processes (wall, CPU, peak RSS), and
// checks each store's logical hash against the ordinary path's.
//
//	go run ./cmd/bulkload -nodes 100000 [-nosync] [-ordinary=false] [-memctl BIN] [-weights]
//
// With -base BIN0 -rounds N it then alternates BIN0's and BIN's CLI loads N
// times and prints their medians (alternate.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/lmdbstore"
)

func main() {
	var (
		nodes    = flag.Int("nodes", 100000, "graph size in nodes (about 8 edges each)")
		seed     = flag.Uint64("seed", 1, "generator seed")
		nosync   = flag.Bool("nosync", false, "open the stores with NoSync (no fsync at commit)")
		ordinary = flag.Bool("ordinary", true, "also load through ordinary transactions of -batch operations")
		batch    = flag.Int("batch", 10000, "operations per ordinary transaction")
		profile  = flag.String("cpuprofile", "", "CPU profile of the bulk load")
		dir      = flag.String("dir", "", "scratch directory (default: a temporary one, removed)")
		bin      = flag.String("memctl", "", "a memctl binary: also time `memctl import` and `memctl batch --bulk` (needs -ordinary)")
		weights  = flag.Bool("weights", false, "the JSON Lines spell out every edge's weight (the relation's default)")
		withPay  = flag.Bool("payloads", true, "nodes carry the generator's JSON payloads (false: none)")
		reuse    = flag.Bool("reuse", false, "with -dir and -memctl: take the ordinary store an earlier run left in -dir, time only the CLI loads")
		phase    = flag.String("profile", "bulk", "what -cpuprofile profiles: bulk, import or batch (the last two in process)")
		base     = flag.String("base", "", "with -memctl and -rounds: a second memctl binary whose CLI loads alternate with -memctl's")
		rounds   = flag.Int("rounds", 0, "with -base: alternated rounds of both binaries' CLI loads, then their medians")
	)
	flag.Parse()
	g, err := gen.Generate(gen.Config{Nodes: *nodes, EdgesPerNode: 8, Seed: *seed})
	check(err)
	if *dir == "" {
		d, err := os.MkdirTemp("", "bulkload-")
		check(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	// Payloads are generated up front: the load is timed, not the generator.
	payloads := make([][]byte, len(g.Nodes))
	for i := range g.Nodes {
		if *withPay {
			payloads[i] = g.Payload(uint32(i), nil)
		}
	}
	opts := lmdbstore.Options{NoSync: *nosync}
	meta := lmdbstore.WriteMeta{Scope: "repo", RunID: "bench"}
	if *reuse {
		for _, old := range []string{"cli-import", "cli-batch", "inproc-import", "inproc-batch"} {
			check(os.RemoveAll(filepath.Join(*dir, old)))
		}
		want := cliLoads(*dir, *bin, g, payloads, filepath.Join(*dir, "ordinary"), *nosync, *weights, *profile, *phase)
		if *base != "" && *rounds > 0 {
			alternate(*dir, *base, *bin, *rounds, len(g.Edges), *nosync, want)
		}
		return
	}

	st, err := lmdbstore.Init(filepath.Join(*dir, "bulk"), opts)
	check(err)
	if *profile != "" && *phase == "bulk" {
		f, err := os.Create(*profile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	c0, t0 := cpu(), time.Now()
	b := st.NewBulk(meta)
	for i, n := range g.Nodes {
		check(b.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type.String(), Payload: payloads[i]}))
	}
	for _, e := range g.Edges {
		check(b.PutEdge(lmdbstore.EdgePut{Src: g.Nodes[e.Src].Key, Rel: e.Rel.Name(), Dst: g.Nodes[e.Dst].Key}))
	}
	c, err := b.Commit()
	wall, cpuUsed := time.Since(t0), cpu()-c0
	if *profile != "" && *phase == "bulk" {
		pprof.StopCPUProfile()
	}
	check(err)
	report("bulk", len(g.Edges), wall, cpuUsed, fmt.Sprintf("rev %d, %d ops, appended %v", c.Rev, c.Ops, b.Appended))
	space(st, len(g.Edges))
	check(st.Close())

	if !*ordinary {
		return
	}
	st, err = lmdbstore.Init(filepath.Join(*dir, "ordinary"), opts)
	check(err)
	c0, t0 = cpu(), time.Now()
	revs := 0
	for off := 0; off < len(g.Nodes); off += *batch {
		_, err := st.Update(meta, func(tx *lmdbstore.WriteTxn) error {
			for i := off; i < min(off+*batch, len(g.Nodes)); i++ {
				n := g.Nodes[i]
				if err := tx.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type.String(), Payload: payloads[i]}); err != nil {
					return err
				}
			}
			return nil
		})
		check(err)
		revs++
	}
	for off := 0; off < len(g.Edges); off += *batch {
		_, err := st.Update(meta, func(tx *lmdbstore.WriteTxn) error {
			for _, e := range g.Edges[off:min(off+*batch, len(g.Edges))] {
				if err := tx.PutEdge(lmdbstore.EdgePut{Src: g.Nodes[e.Src].Key, Rel: e.Rel.Name(), Dst: g.Nodes[e.Dst].Key}); err != nil {
					return err
				}
			}
			return nil
		})
		check(err)
		revs++
	}
	report("ordinary", len(g.Edges), time.Since(t0), cpu()-c0, fmt.Sprintf("%d transactions of %d operations", revs, *batch))
	space(st, len(g.Edges))
	check(st.Close())
	if *bin != "" {
		want := cliLoads(*dir, *bin, g, payloads, filepath.Join(*dir, "ordinary"), *nosync, *weights, *profile, *phase)
		if *base != "" && *rounds > 0 {
			alternate(*dir, *base, *bin, *rounds, len(g.Edges), *nosync, want)
		}
	}
}

func report(name string, edges int, wall, cpuUsed time.Duration, note string) {
	fmt.Printf("%-8s %d edges in %.3f s wall (%.0f edges/s), %.3f CPU-s (%.0f edges per CPU-s); %s\n",
		name, edges, wall.Seconds(), float64(edges)/wall.Seconds(), cpuUsed.Seconds(), float64(edges)/cpuUsed.Seconds(), note)
}

func space(st *lmdbstore.Store, edges int) {
	ks, err := st.Space()
	check(err)
	var total uint64
	for _, k := range ks {
		total += k.Bytes
		if k.Bytes > 0 {
			fmt.Printf("  %-8s %10d bytes %8d entries %6.1f B/edge\n", k.Name, k.Bytes, k.Entries, float64(k.Bytes)/float64(edges))
		}
	}
	fmt.Printf("  %-8s %10d bytes %17s %6.1f B/edge\n", "total", total, "", float64(total)/float64(edges))
}

// cpu is this process's CPU time (user + system).
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bulkload:", err)
		os.Exit(1)
	}
}
