package main

import (
	"fmt"
	"syscall"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/lmdbstore"
)

func main() {
	g, _ := gen.Generate(gen.Config{Nodes: 100000, EdgesPerNode: 8, Seed: 1})
	dir := filepath.Join(os.TempDir(), "perfruns", "bulkt", "s")
	os.RemoveAll(dir)
	st, err := lmdbstore.Init(dir, lmdbstore.Options{NoSync: os.Getenv("NOSYNC") != ""})
	if err != nil {
		panic(err)
	}
	f, _ := os.Create("/tmp/perfruns/bulk.prof")
	pprof.StartCPUProfile(f)
	c0 := cpu()
	t0 := time.Now()
	b := st.NewBulk(lmdbstore.WriteMeta{Scope: "repo", RunID: "bench"})
	b.Grow(len(g.Nodes), len(g.Edges))
	for i, n := range g.Nodes {
		if err := b.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type.String(), Payload: g.Payload(uint32(i), nil)}); err != nil {
			panic(err)
		}
	}
	for _, e := range g.Edges {
		if err := b.PutEdge(lmdbstore.EdgePut{Src: g.Nodes[e.Src].Key, Rel: e.Rel.Name(), Dst: g.Nodes[e.Dst].Key}); err != nil {
			panic(err)
		}
	}
	t1 := time.Now()
	c, err := b.Commit()
	t2 := time.Now()
	c2 := cpu()
	pprof.StopCPUProfile()
	if err != nil {
		panic(err)
	}
	fmt.Printf("rev %d ops %d appended %v: add %v commit %v total %v → %.0f edges/s\n", c.Rev, c.Ops, b.Appended, t1.Sub(t0), t2.Sub(t1), t2.Sub(t0), float64(len(g.Edges))/t2.Sub(t0).Seconds())
	st.Close()
	fmt.Printf("cpu %v → %.0f edges per cpu-s\n", c2-c0, float64(len(g.Edges))/(c2-c0).Seconds())
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
