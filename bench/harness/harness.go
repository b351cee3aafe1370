// Package harness runs the peer workloads against every system, checks
// their answers against the generator's truth, and prints one table.
//
// Invariants: every system sees the same graph, the same batches, the same
// durable writes and the same sequence of random nodes (each reads as long
// a prefix of it as its time allows); systems take turns within every
// workload, so changes in the machine's load hit them alike; a system whose
// answer differs from the truth gets "WRONG" in its cells instead of a
// figure.
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
	"syscall"
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
	// ProfileDir, when set, receives a CPU profile per size and workload
	// (of every system: they run interleaved).
	ProfileDir string
	Log        io.Writer // progress (stderr)
}

// Workload names, in table order. Reads have a p50 and a p99 row.
const (
	WBulk      = "bulk load"
	WImport    = "bulk import"
	WImportB   = "bulk import bytes/edge"
	WPut       = "durable put-edge"
	WOut       = "get-out p50"
	WOut99     = "get-out p99"
	WIn        = "get-in p50"
	WIn99      = "get-in p99"
	WHub       = "hub get-in p50"
	WHub99     = "hub get-in p99"
	WHop       = "3-hop p50"
	WHop99     = "3-hop p99"
	WPit       = "get-out @ old rev p50"
	WDiff      = "diff-since"
	WFresh     = "fresh open→get-out→close"
	WFreshRead = "fresh first get-out"
	WProcess   = "fresh process total"
	WBytes     = "disk bytes/edge"
	WVacuumB   = "vacuumed bytes/edge"
)

// Workloads lists the rows of the table.
var Workloads = []string{WBulk, WImport, WImportB, WPut, WOut, WOut99, WIn, WIn99, WHub, WHub99, WHop, WHop99, WPit, WDiff, WFresh, WFreshRead, WProcess, WBytes, WVacuumB}

// higherIsBetter tells how the ratio is taken.
var higherIsBetter = map[string]bool{WBulk: true, WImport: true, WPut: true}

var units = map[string]string{WBulk: "edges/s", WImport: "edges/s", WImportB: "B", WPut: "ops/s", WOut: "µs", WOut99: "µs", WIn: "µs", WIn99: "µs",
	WHub: "µs", WHub99: "µs", WHop: "µs", WHop99: "µs", WPit: "µs", WDiff: "cpu-ms", WFresh: "ms", WFreshRead: "µs", WProcess: "ms", WBytes: "B", WVacuumB: "B"}

// p99Of maps a read workload's p50 row to its p99 row ("" if it has none).
var p99Of = map[string]string{WOut: WOut99, WIn: WIn99, WHub: WHub99, WHop: WHop99}

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
	// HubInDeg are the in-degrees of the hub phase's nodes (quantiles).
	HubInDeg []uint32
	// Space is each system's disk use per keyspace (systems that report it).
	Space map[string][]peers.Keyspace
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
	nm    *names
	sr    *SizeResult
	nodes []uint32 // random node sequence, same for every system
	hubs  []uint32 // the nodes of highest in-degree
	dir   string
}

// entry is one system during a size's run.
type entry struct {
	sys   peers.System
	name  string
	dir   string
	from  string // source system of a derived one
	err   error  // first failure: later workloads are skipped
	check map[string]error
	next  int // position in the random node sequence
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
	hubs := topHubs(t.inDeg, numHubs)
	sr := &SizeResult{Nodes: len(g.Nodes), Edges: len(g.Edges) + len(p.writes), Cells: map[string]map[string]Cell{},
		OutDeg: t.outDeg, InDeg: t.inDeg, DiffOps: t.diffOps, Batches: len(p.batches), Space: map[string][]peers.Keyspace{}}
	for _, v := range hubs {
		sr.HubInDeg = append(sr.HubInDeg, t.inDeg[v])
	}
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
	run := &sizeRun{o: o, g: g, p: p, t: t, nm: newNames(g), sr: sr, nodes: nodes, hubs: hubs, dir: filepath.Join(o.Dir, fmt.Sprint(n))}
	var all []*entry
	defer func() {
		for _, e := range all {
			e.sys.Close()
		}
	}()
	for _, name := range o.Systems {
		sys, err := o.New(name)
		if err != nil {
			return nil, err
		}
		all = append(all, &entry{sys: sys, name: name, from: o.Derived[name]})
	}
	run.writes(all)
	run.imports(all)
	run.derive(all)
	run.reads(all)
	for _, e := range all {
		e.sys.Close()
	}
	run.fresh(all)
	runtime.GC()
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

// fail records e's first failure in every workload not measured yet.
func (r *sizeRun) fail(e *entry, err error) {
	if e.err == nil {
		e.err = err
	}
	for _, w := range Workloads {
		if _, done := r.sr.Cells[w][e.name]; !done && w != WFresh && w != WFreshRead && w != WProcess {
			r.set(w, e.name, Cell{Err: err})
		}
	}
}

func (r *sizeRun) sysDir(name string) (string, error) {
	d := filepath.Join(r.dir, name)
	if err := os.RemoveAll(d); err != nil {
		return "", err
	}
	return d, os.MkdirAll(d, 0o755)
}

// profile runs fn under a CPU profile when a profile directory is set.
// Systems run interleaved, so one profile holds every system's work.
func (r *sizeRun) profile(w string, fn func()) {
	if r.o.ProfileDir == "" {
		fn()
		return
	}
	f, err := os.Create(filepath.Join(r.o.ProfileDir, fmt.Sprintf("%d-%s.pprof", len(r.g.Nodes), slug(w))))
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

// live lists the entries that have not failed, optionally only the base
// (non-derived) ones.
func live(all []*entry, baseOnly bool) []*entry {
	var out []*entry
	for _, e := range all {
		if e.err == nil && (!baseOnly || e.from == "") {
			out = append(out, e)
		}
	}
	return out
}

// writes creates every base system, bulk-loads them and applies the
// durable single writes. Systems take turns batch by batch, so a change in
// the machine's load during the run hits them all alike.
func (r *sizeRun) writes(all []*entry) {
	for _, e := range live(all, true) {
		dir, err := r.sysDir(e.name)
		if err == nil {
			e.dir = dir
			err = e.sys.Create(dir, r.g)
		}
		if err != nil {
			r.fail(e, err)
		}
	}
	spent := map[*entry]time.Duration{}
	r.profile(WBulk, func() {
		for _, b := range r.p.batches {
			for _, e := range live(all, true) {
				t0 := time.Now()
				err := e.sys.Load(b)
				spent[e] += time.Since(t0)
				if err != nil {
					r.fail(e, err)
				}
			}
		}
	})
	for _, e := range live(all, true) {
		r.set(WBulk, e.name, Cell{Value: float64(len(r.g.Edges)) / spent[e].Seconds(),
			Note: fmt.Sprintf("%.1fs incl. %d nodes", spent[e].Seconds(), len(r.g.Nodes))})
	}
	clear(spent)
	r.profile(WPut, func() {
		for _, w := range r.p.writes {
			for _, e := range live(all, true) {
				t0 := time.Now()
				err := e.sys.PutEdge(w)
				spent[e] += time.Since(t0)
				if err != nil {
					r.fail(e, err)
				}
			}
		}
	})
	for _, e := range live(all, true) {
		r.set(WPut, e.name, Cell{Value: float64(len(r.p.writes)) / spent[e].Seconds()})
		if err := e.sys.Settle(); err != nil {
			r.fail(e, err)
			continue
		}
		if b, err := peers.DiskBytes(e.dir); err != nil {
			r.set(WBytes, e.name, Cell{Err: err})
		} else {
			r.set(WBytes, e.name, Cell{Value: float64(b) / float64(r.sr.Edges), Note: fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))})
		}
		if sp, ok := e.sys.(peers.SpaceReporter); ok {
			if ks, err := sp.Space(); err == nil {
				r.sr.Space[e.name] = ks
			} else {
				fmt.Fprintf(r.o.Log, "  %-12s space by keyspace: %v\n", e.name, err)
			}
		}
		r.vacuum(e)
	}
}

// vacuum measures the size of a dense copy of e's store (everything it
// holds, history included), written into a new directory and removed.
func (r *sizeRun) vacuum(e *entry) {
	v, ok := e.sys.(peers.Vacuumer)
	if !ok {
		r.set(WVacuumB, e.name, Cell{Err: peers.ErrNotSupported})
		return
	}
	dir, err := r.sysDir(e.name + "-vacuum")
	if err == nil {
		t0 := time.Now()
		if err = v.VacuumInto(dir); err == nil {
			var b int64
			if b, err = peers.DiskBytes(dir); err == nil {
				r.set(WVacuumB, e.name, Cell{Value: float64(b) / float64(r.sr.Edges),
					Note: fmt.Sprintf("%.1f MiB, copied in %.2fs", float64(b)/(1<<20), time.Since(t0).Seconds())})
			}
		}
		if !r.o.Keep {
			os.RemoveAll(dir)
		}
	}
	if err != nil {
		r.set(WVacuumB, e.name, Cell{Err: err})
	}
}

// imports times each system's BulkLoad of the whole graph (every node,
// then every edge, one transaction) into a new store beside its main one,
// measures that store's size and removes it. Systems take turns; the
// payloads are generated before the clock starts.
func (r *sizeRun) imports(all []*entry) {
	var b peers.Batch
	for _, batch := range r.p.batches {
		b.Nodes = append(b.Nodes, batch.Nodes...)
		b.Edges = append(b.Edges, batch.Edges...)
	}
	r.g.WarmPayloads()
	for _, e := range live(all, true) {
		bl, ok := e.sys.(peers.BulkLoader)
		if !ok {
			r.set(WImport, e.name, Cell{Err: peers.ErrNotSupported})
			continue
		}
		dir, err := r.sysDir(e.name + "-import")
		if err != nil {
			r.set(WImport, e.name, Cell{Err: err})
			continue
		}
		var el time.Duration
		r.profile(WImport+" "+e.name, func() {
			t0 := time.Now()
			err = bl.BulkLoad(dir, r.g, b)
			el = time.Since(t0)
		})
		if err != nil {
			r.set(WImport, e.name, Cell{Err: err})
		} else {
			r.set(WImport, e.name, Cell{Value: float64(len(b.Edges)) / el.Seconds(),
				Note: fmt.Sprintf("%.2fs incl. %d nodes, one transaction", el.Seconds(), len(b.Nodes))})
			if n, err := peers.DiskBytes(dir); err == nil {
				r.set(WImportB, e.name, Cell{Value: float64(n) / float64(len(b.Edges)), Note: fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))})
			}
		}
		if !r.o.Keep {
			os.RemoveAll(dir)
		}
	}
}

// derive builds every derived system from its (loaded) source.
func (r *sizeRun) derive(all []*entry) {
	byName := map[string]*entry{}
	for _, e := range all {
		byName[e.name] = e
	}
	for _, e := range all {
		if e.from == "" {
			continue
		}
		src := byName[e.from]
		d, ok := e.sys.(peers.Derived)
		switch {
		case src == nil || src.err != nil:
			r.fail(e, fmt.Errorf("source %s unavailable", e.from))
			continue
		case !ok:
			r.fail(e, fmt.Errorf("%s cannot be derived", e.name))
			continue
		}
		dir, err := r.sysDir(e.name)
		if err == nil {
			e.dir = dir
			t0 := time.Now()
			err = d.DeriveFrom(src.sys, dir)
			r.sr.ExportDuration = time.Since(t0)
		}
		if err != nil {
			r.fail(e, err)
			continue
		}
		for _, w := range []string{WBulk, WImport, WImportB, WPut, WVacuumB} {
			r.set(w, e.name, Cell{Err: peers.ErrNotSupported, Note: "read-only export"})
		}
		if b, err := peers.DiskBytes(dir); err == nil {
			r.set(WBytes, e.name, Cell{Value: float64(b) / float64(r.sr.Edges),
				Note: fmt.Sprintf("%.1f MiB, exported in %.2fs", float64(b)/(1<<20), r.sr.ExportDuration.Seconds())})
		}
	}
}

// readRounds is how many turns each system gets per read workload, so a
// burst of load from elsewhere on the machine hits every system alike.
const readRounds = 24

// reads checks a sample of every system's answers, then times each read
// workload with the systems taking turns. Every operation's wall-clock
// latency is recorded; a workload's cells are the p50 and p99 over all its
// operations (the process's CPU time per operation is in the log).
func (r *sizeRun) reads(all []*entry) {
	for _, e := range live(all, false) {
		e.check = r.verify(e.sys)
	}
	type readW struct {
		w   string
		seq []uint32
		op  func(sys peers.System, node uint32) error
	}
	cnt := 0
	count := func(string, string) { cnt++ }
	countKey := func(string) { cnt++ }
	ws := []readW{
		{WOut, r.nodes, func(sys peers.System, v uint32) error { return sys.GetOut(v, count) }},
		{WIn, r.nodes, func(sys peers.System, v uint32) error { return sys.GetIn(v, count) }},
		{WHub, r.hubs, func(sys peers.System, v uint32) error { return sys.GetIn(v, count) }},
		{WHop, r.nodes, func(sys peers.System, v uint32) error { _, err := sys.ThreeHop(v, countKey); return err }},
		{WPit, r.nodes, func(sys peers.System, v uint32) error { return sys.GetOutAt(v, r.t.pitRev, count) }},
	}
	for _, rw := range ws {
		var es []*entry
		for _, e := range live(all, false) {
			if err := e.check[rw.w]; err != nil {
				r.set(rw.w, e.name, Cell{Err: err})
				if w99 := p99Of[rw.w]; w99 != "" {
					r.set(w99, e.name, Cell{Err: err})
				}
			} else {
				es = append(es, e)
			}
		}
		lat := map[*entry][]time.Duration{}
		cpu := map[*entry]time.Duration{}
		failed := map[*entry]error{}
		for _, e := range es {
			e.next = 0
		}
		r.profile(rw.w, func() {
			for round := 0; round < readRounds; round++ {
				for _, e := range es {
					if failed[e] != nil {
						continue
					}
					c0 := cpuTime()
					var err error
					lat[e], err = r.timeOps(e, rw.seq, lat[e], round == 0, r.o.ReadTime/readRounds,
						func(v uint32) error { return rw.op(e.sys, v) })
					cpu[e] += cpuTime() - c0
					failed[e] = err
				}
			}
		})
		for _, e := range es {
			if failed[e] != nil {
				r.set(rw.w, e.name, Cell{Err: failed[e]})
				continue
			}
			d := lat[e]
			slices.Sort(d)
			note := fmt.Sprintf("%d ops in %d turns, %.3g cpu-µs/op", len(d), readRounds, cpu[e].Seconds()*1e6/float64(len(d)))
			r.set(rw.w, e.name, Cell{Value: micros(pct(d, 0.50)), Note: note})
			if w99 := p99Of[rw.w]; w99 != "" {
				r.set(w99, e.name, Cell{Value: micros(pct(d, 0.99)), Note: note})
			}
		}
	}
	var es []*entry
	for _, e := range live(all, false) {
		if err := e.check[WDiff]; err != nil {
			r.set(WDiff, e.name, Cell{Err: err})
		} else {
			es = append(es, e)
		}
	}
	best := map[*entry]time.Duration{}
	failed := map[*entry]error{}
	r.profile(WDiff, func() {
		for i := 0; i < 5; i++ {
			for _, e := range es {
				if failed[e] != nil {
					continue
				}
				c0 := cpuTime()
				_, err := e.sys.DiffSince(r.t.diffRev)
				d := cpuTime() - c0
				failed[e] = err
				if b, ok := best[e]; !ok || d < b {
					best[e] = d
				}
			}
		}
	})
	for _, e := range es {
		if failed[e] != nil {
			r.set(WDiff, e.name, Cell{Err: failed[e]})
		} else {
			r.set(WDiff, e.name, Cell{Value: best[e].Seconds() * 1e3, Note: fmt.Sprintf("%d ops, CPU time, best of 5", r.t.diffOps)})
		}
	}
}

// numHubs is how many of the highest in-degree nodes the hub phase reads
// (issue 28: the top 100, so that the phase is not a handful of the very
// largest lists).
const numHubs = 100

// topHubs returns the n nodes of highest in-degree, highest first.
func topHubs(inDeg []uint32, n int) []uint32 {
	idx := make([]uint32, len(inDeg))
	for i := range idx {
		idx[i] = uint32(i)
	}
	slices.SortStableFunc(idx, func(a, b uint32) int { return int(inDeg[b]) - int(inDeg[a]) })
	return idx[:min(n, len(idx))]
}

// pct is the q-quantile of sorted durations.
func pct(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// timeOps runs op over e's share of the node sequence seq for about budget
// of wall-clock time, appending each operation's latency to lat. With warm,
// the first 64 ops run untimed.
func (r *sizeRun) timeOps(e *entry, seq []uint32, lat []time.Duration, warm bool, budget time.Duration, op func(uint32) error) ([]time.Duration, error) {
	if warm {
		for k := 0; k < 64; k++ {
			if err := op(seq[e.next%len(seq)]); err != nil {
				return lat, err
			}
			e.next++
		}
	}
	t0 := time.Now()
	for {
		for k := 0; k < 16; k++ {
			v := seq[e.next%len(seq)]
			s0 := time.Now()
			err := op(v)
			lat = append(lat, time.Since(s0))
			if err != nil {
				return lat, err
			}
			e.next++
		}
		if time.Since(t0) >= budget {
			return lat, nil
		}
	}
}

// cpuTime is the CPU time (user + system) this process has used. Reads are
// measured in it because, unlike wall-clock time, it does not grow when
// other processes compete for the machine's cores. The harness runs one
// workload at a time on one goroutine, so the process's CPU time is the
// workload's (garbage collection included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// verify compares a sample of answers with the truth, per workload.
func (r *sizeRun) verify(sys peers.System) map[string]error {
	res := map[string]error{}
	sample := r.nodes[1000:1100]
	// Include the biggest hubs: they stress long lists.
	sample = append(slices.Clone(sample), argmax(r.t.outDeg), argmax(r.t.inDeg))
	for _, v := range sample {
		if res[WOut] == nil {
			got, err := r.nm.collect(func(fn peers.EdgeFunc) error { return sys.GetOut(v, fn) })
			res[WOut] = firstErr(err, diffPairs(WOut, v, got, expected(r.t.out[v], r.t.lastRev)))
		}
		if res[WIn] == nil {
			got, err := r.nm.collect(func(fn peers.EdgeFunc) error { return sys.GetIn(v, fn) })
			res[WIn] = firstErr(err, diffPairs(WIn, v, got, expected(r.t.in[v], r.t.lastRev)))
		}
		if res[WPit] == nil {
			got, err := r.nm.collect(func(fn peers.EdgeFunc) error { return sys.GetOutAt(v, r.t.pitRev, fn) })
			res[WPit] = firstErr(err, diffPairs(WPit, v, got, expected(r.t.out[v], r.t.pitRev)))
		}
		if res[WHop] == nil && v != argmax(r.t.inDeg) {
			res[WHop] = r.verifyHop(sys, v)
		}
	}
	for _, v := range r.hubs {
		if res[WHub] == nil {
			got, err := r.nm.collect(func(fn peers.EdgeFunc) error { return sys.GetIn(v, fn) })
			res[WHub] = firstErr(err, diffPairs(WHub, v, got, expected(r.t.in[v], r.t.lastRev)))
		}
	}
	got, err := sys.DiffSince(r.t.diffRev)
	if err == nil && got != r.t.diffOps {
		err = &WrongAnswerError{WDiff, 0, fmt.Sprintf("got %d ops, want %d", got, r.t.diffOps)}
	}
	res[WDiff] = err
	return res
}

// verifyHop checks that a three-hop read returns exactly the keys of the
// reference set, each once, and counts them.
func (r *sizeRun) verifyHop(sys peers.System, v uint32) error {
	want := r.t.threeHopSet(v)
	seen := map[uint32]bool{}
	var bad string
	n, err := sys.ThreeHop(v, func(key string) {
		i, ok := r.nm.key[key]
		switch {
		case !ok:
			bad = fmt.Sprintf("unknown key %q", key)
		case seen[i]:
			bad = fmt.Sprintf("key %q twice", key)
		case !want[i]:
			bad = fmt.Sprintf("key %q is not within three hops", key)
		}
		seen[i] = true
	})
	if err != nil {
		return err
	}
	if bad == "" && (len(seen) != len(want) || n != len(want)) {
		bad = fmt.Sprintf("got %d keys (count %d), want %d", len(seen), n, len(want))
	}
	if bad != "" {
		return &WrongAnswerError{WHop, v, bad}
	}
	return nil
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
