// Package harness runs the peer workloads against every system, checks
// their answers against the generator's truth, and prints one table.
//
// Invariants: every system sees the same graph, the same batches, the same
// durable writes and the same sequence of random nodes; a system whose
// answer differs from the truth gets "WRONG" in its cells instead of a
// figure; one system's store is open at a time.
package harness

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/bench/peers"
)

// Factory makes a zero System by name.
type Factory func(name string) (peers.System, error)

// Options configures a run.
type Options struct {
	Sizes     []int
	Seed      uint64
	BatchOps  int           // operations per bulk-load transaction
	Writes    int           // single-edge durable writes
	ReadTime  time.Duration // per read workload and system
	FreshRuns int           // fresh processes per system
	Systems   []string      // table order; the first is "this store"
	// Derived maps a derived system to the system it is built from.
	Derived map[string]string
	New     Factory
	Dir     string // scratch root (a temporary directory when empty)
	Keep    bool   // keep the stores after the run
	// ProfileDir, when set, receives a CPU profile per (size, system,
	// workload) for the systems in ProfileSystems.
	ProfileDir     string
	ProfileSystems []string
	Log            io.Writer // progress (stderr)
}

// Workload names, in table order.
const (
	WBulk    = "bulk load"
	WPut     = "durable put-edge"
	WOut     = "get-out"
	WIn      = "get-in"
	WHop     = "3-hop"
	WPit     = "get-out @ old rev"
	WDiff    = "diff-since"
	WFresh   = "fresh open→get-out"
	WProcess = "fresh process total"
	WBytes   = "disk bytes/edge"
)

// Workloads lists the rows of the table.
var Workloads = []string{WBulk, WPut, WOut, WIn, WHop, WPit, WDiff, WFresh, WProcess, WBytes}

// higherIsBetter tells how the ratio is taken.
var higherIsBetter = map[string]bool{WBulk: true, WPut: true, WOut: true, WIn: true, WHop: true, WPit: true}

var units = map[string]string{WBulk: "edges/s", WPut: "ops/s", WOut: "ops/s", WIn: "ops/s", WHop: "ops/s",
	WPit: "ops/s", WDiff: "ms", WFresh: "ms", WProcess: "ms", WBytes: "B"}

// Cell is one measurement.
type Cell struct {
	Value float64
	Err   error
	Note  string
}

// SizeResult holds one graph size's cells and workload facts.
type SizeResult struct {
	Nodes, Edges   int
	Cells          map[string]map[string]Cell // workload -> system -> cell
	OutDeg, InDeg  []uint32
	HopSizes       []int
	DiffOps        int
	PitFrac        float64
	Batches        int
	ExportDuration time.Duration
}

// Result is a whole run.
type Result struct {
	Options Options
	Sizes   []*SizeResult
	Started time.Time
	Elapsed time.Duration
}

// Run executes every workload at every size.
func Run(o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "bench-peers-")
		if err != nil {
			return nil, err
		}
		o.Dir = d
		if !o.Keep {
			defer os.RemoveAll(d)
		}
	}
	res := &Result{Options: o, Started: time.Now()}
	for _, n := range o.Sizes {
		sr, err := runSize(o, n)
		if err != nil {
			return nil, err
		}
		res.Sizes = append(res.Sizes, sr)
	}
	res.Elapsed = time.Since(res.Started)
	return res, nil
}

type sizeRun struct {
	o     Options
	g     *gen.Graph
	p     *plan
	t     *truth
	sr    *SizeResult
	nodes []uint32 // random node sequence, same for every system
	dir   string
}

func runSize(o Options, n int) (*SizeResult, error) {
	t0 := time.Now()
	g, err := gen.Generate(gen.Config{Nodes: n, EdgesPerNode: 8, Seed: o.Seed, ExtraEdges: o.Writes})
	if err != nil {
		return nil, err
	}
	p := newPlan(g, o.BatchOps, o.Writes)
	t := newTruth(p)
	fmt.Fprintf(o.Log, "size %d: %d nodes, %d edges, %d batches (generated in %v)\n",
		n, len(g.Nodes), len(g.Edges)+len(p.writes), len(p.batches), time.Since(t0).Round(time.Millisecond))
	r := rand.New(rand.NewPCG(o.Seed, uint64(n)))
	nodes := make([]uint32, 1<<16)
	for i := range nodes {
		nodes[i] = uint32(r.IntN(len(g.Nodes)))
	}
	sr := &SizeResult{Nodes: len(g.Nodes), Edges: len(g.Edges) + len(p.writes), Cells: map[string]map[string]Cell{},
		OutDeg: t.outDeg, InDeg: t.inDeg, DiffOps: t.diffOps, Batches: len(p.batches)}
	sr.PitFrac = float64(len(g.Edges[:0])) // set below
	pitEdges := 0
	for _, b := range p.batches[:p.pitRev] {
		pitEdges += len(b.Edges)
	}
	sr.PitFrac = float64(pitEdges) / float64(sr.Edges)
	for _, v := range nodes[:200] {
		sr.HopSizes = append(sr.HopSizes, t.threeHop(v))
	}
	for _, w := range Workloads {
		sr.Cells[w] = map[string]Cell{}
	}
	run := &sizeRun{o: o, g: g, p: p, t: t, sr: sr, nodes: nodes, dir: filepath.Join(o.Dir, fmt.Sprint(n))}
	open := map[string]peers.System{}
	defer func() {
		for _, s := range open {
			s.Close()
		}
	}()
	for _, name := range o.Systems {
		if _, derived := o.Derived[name]; derived {
			continue
		}
		sys, err := o.New(name)
		if err != nil {
			return nil, err
		}
		open[name] = sys
		run.system(sys)
		// Derived systems are built while their source is still open.
		for _, dname := range o.Systems {
			if o.Derived[dname] != name {
				continue
			}
			dsys, err := o.New(dname)
			if err != nil {
				return nil, err
			}
			run.derived(dsys.(peers.Derived), sys)
			dsys.Close()
		}
		// A fresh process must not share the store with an open handle
		// (bbolt's file lock): close first.
		sys.Close()
		delete(open, name)
		run.fresh(sys)
		for _, dname := range o.Systems {
			if o.Derived[dname] == name {
				dsys, _ := o.New(dname)
				run.fresh(dsys)
			}
		}
		runtime.GC()
	}
	return sr, nil
}

func (r *sizeRun) set(w, sys string, c Cell) {
	r.sr.Cells[w][sys] = c
	msg := fmt.Sprintf("%.4g %s", c.Value, units[w])
	if c.Err != nil {
		msg = "error: " + c.Err.Error()
	}
	if c.Note != "" {
		msg += " (" + c.Note + ")"
	}
	fmt.Fprintf(r.o.Log, "  %-12s %-22s %s\n", sys, w, msg)
}

func (r *sizeRun) sysDir(name string) (string, error) {
	d := filepath.Join(r.dir, name)
	if err := os.RemoveAll(d); err != nil {
		return "", err
	}
	return d, os.MkdirAll(d, 0o755)
}

// profile runs fn under a CPU profile when one is asked for sys.
func (r *sizeRun) profile(sys, w string, fn func()) {
	if r.o.ProfileDir == "" || !slices.Contains(r.o.ProfileSystems, sys) {
		fn()
		return
	}
	name := fmt.Sprintf("%d-%s-%s.pprof", len(r.g.Nodes), sys, slug(w))
	f, err := os.Create(filepath.Join(r.o.ProfileDir, name))
	if err != nil {
		fn()
		return
	}
	defer f.Close()
	if pprof.StartCPUProfile(f) != nil {
		fn()
		return
	}
	fn()
	pprof.StopCPUProfile()
}

func slug(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

func (r *sizeRun) system(sys peers.System) {
	name := sys.Name()
	fail := func(from int, err error) {
		for _, w := range Workloads[from:] {
			if w == WFresh || w == WProcess {
				continue
			}
			if _, done := r.sr.Cells[w][name]; !done {
				r.set(w, name, Cell{Err: err})
			}
		}
	}
	dir, err := r.sysDir(name)
	if err == nil {
		err = sys.Create(dir, r.g)
	}
	if err != nil {
		fail(0, err)
		return
	}
	// Bulk load.
	var loadErr error
	t0 := time.Now()
	r.profile(name, WBulk, func() {
		for _, b := range r.p.batches {
			if loadErr = sys.Load(b); loadErr != nil {
				return
			}
		}
	})
	if loadErr != nil {
		fail(0, loadErr)
		return
	}
	el := time.Since(t0)
	r.set(WBulk, name, Cell{Value: float64(len(r.g.Edges)) / el.Seconds(),
		Note: fmt.Sprintf("%.1fs incl. %d nodes", el.Seconds(), len(r.g.Nodes))})
	// Durable single writes.
	t0 = time.Now()
	r.profile(name, WPut, func() {
		for _, e := range r.p.writes {
			if loadErr = sys.PutEdge(e); loadErr != nil {
				return
			}
		}
	})
	if loadErr != nil {
		fail(1, loadErr)
		return
	}
	r.set(WPut, name, Cell{Value: float64(len(r.p.writes)) / time.Since(t0).Seconds()})
	if err := sys.Settle(); err != nil {
		fail(2, err)
		return
	}
	if b, err := peers.DiskBytes(dir); err != nil {
		r.set(WBytes, name, Cell{Err: err})
	} else {
		r.set(WBytes, name, Cell{Value: float64(b) / float64(r.sr.Edges), Note: fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))})
	}
	r.reads(sys)
}

// derived builds a derived system from src and runs the read workloads.
func (r *sizeRun) derived(sys peers.Derived, src peers.System) {
	name := sys.Name()
	dir, err := r.sysDir(name)
	if err == nil {
		t0 := time.Now()
		err = sys.DeriveFrom(src, dir)
		r.sr.ExportDuration = time.Since(t0)
	}
	if err != nil {
		for _, w := range Workloads {
			if w != WFresh && w != WProcess {
				r.set(w, name, Cell{Err: err})
			}
		}
		return
	}
	for _, w := range []string{WBulk, WPut} {
		r.set(w, name, Cell{Err: peers.ErrNotSupported, Note: "read-only export"})
	}
	if b, err := peers.DiskBytes(dir); err == nil {
		r.set(WBytes, name, Cell{Value: float64(b) / float64(r.sr.Edges),
			Note: fmt.Sprintf("%.1f MiB, exported in %.2fs", float64(b)/(1<<20), r.sr.ExportDuration.Seconds())})
	}
	r.reads(sys)
}

// reads checks a sample of answers, then times each read workload.
func (r *sizeRun) reads(sys peers.System) {
	name := sys.Name()
	check := r.verify(sys)
	cnt := 0
	count := func(uint32, uint64) { cnt++ }
	type readW struct {
		w  string
		op func(node uint32) error
	}
	ws := []readW{
		{WOut, func(v uint32) error { return sys.GetOut(v, count) }},
		{WIn, func(v uint32) error { return sys.GetIn(v, count) }},
		{WHop, func(v uint32) error { _, err := sys.ThreeHop(v); return err }},
		{WPit, func(v uint32) error { return sys.GetOutAt(v, r.t.pitRev, count) }},
	}
	for _, rw := range ws {
		if err := check[rw.w]; err != nil {
			r.set(rw.w, name, Cell{Err: err})
			continue
		}
		var c Cell
		r.profile(name, rw.w, func() { c = r.timeOps(rw.op) })
		r.set(rw.w, name, c)
	}
	if err := check[WDiff]; err != nil {
		r.set(WDiff, name, Cell{Err: err})
		return
	}
	var c Cell
	r.profile(name, WDiff, func() {
		var best time.Duration
		for i := 0; i < 5; i++ {
			t0 := time.Now()
			if _, err := sys.DiffSince(r.t.diffRev); err != nil {
				c = Cell{Err: err}
				return
			}
			if d := time.Since(t0); i == 0 || d < best {
				best = d
			}
		}
		c = Cell{Value: best.Seconds() * 1e3, Note: fmt.Sprintf("%d ops, best of 5", r.t.diffOps)}
	})
	r.set(WDiff, name, c)
}

// timeOps runs op over the random node sequence for about ReadTime and
// returns ops per second. The first 256 ops warm up untimed.
func (r *sizeRun) timeOps(op func(uint32) error) Cell {
	i := 0
	for ; i < 256; i++ {
		if err := op(r.nodes[i%len(r.nodes)]); err != nil {
			return Cell{Err: err}
		}
	}
	ops := 0
	t0 := time.Now()
	for {
		for k := 0; k < 64; k++ {
			if err := op(r.nodes[i%len(r.nodes)]); err != nil {
				return Cell{Err: err}
			}
			i++
			ops++
		}
		if el := time.Since(t0); el >= r.o.ReadTime {
			return Cell{Value: float64(ops) / el.Seconds()}
		}
	}
}

// verify compares a sample of answers with the truth, per workload.
func (r *sizeRun) verify(sys peers.System) map[string]error {
	res := map[string]error{}
	sample := r.nodes[1000:1100]
	// Include the biggest hubs: they stress long lists.
	sample = append(slices.Clone(sample), argmax(r.t.outDeg), argmax(r.t.inDeg))
	for _, v := range sample {
		if res[WOut] == nil {
			got, err := collect(sys, func(fn peers.EdgeFunc) error { return sys.GetOut(v, fn) })
			res[WOut] = firstErr(err, diffPairs(WOut, v, got, expected(r.t.out[v], r.t.lastRev)))
		}
		if res[WIn] == nil {
			got, err := collect(sys, func(fn peers.EdgeFunc) error { return sys.GetIn(v, fn) })
			res[WIn] = firstErr(err, diffPairs(WIn, v, got, expected(r.t.in[v], r.t.lastRev)))
		}
		if res[WPit] == nil {
			got, err := collect(sys, func(fn peers.EdgeFunc) error { return sys.GetOutAt(v, r.t.pitRev, fn) })
			res[WPit] = firstErr(err, diffPairs(WPit, v, got, expected(r.t.out[v], r.t.pitRev)))
		}
		if res[WHop] == nil && v != argmax(r.t.inDeg) {
			got, err := sys.ThreeHop(v)
			if want := r.t.threeHop(v); err == nil && got != want {
				err = &WrongAnswerError{WHop, v, fmt.Sprintf("got %d nodes, want %d", got, want)}
			}
			res[WHop] = err
		}
	}
	got, err := sys.DiffSince(r.t.diffRev)
	if err == nil && got != r.t.diffOps {
		err = &WrongAnswerError{WDiff, 0, fmt.Sprintf("got %d ops, want %d", got, r.t.diffOps)}
	}
	res[WDiff] = err
	return res
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func argmax(s []uint32) uint32 {
	best := 0
	for i, v := range s {
		if v > s[best] {
			best = i
		}
	}
	return uint32(best)
}

// IsNotSupported reports whether a cell's error means "no equivalent".
func IsNotSupported(err error) bool { return errors.Is(err, peers.ErrNotSupported) }
