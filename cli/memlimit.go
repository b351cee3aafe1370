package cli

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
)

// ingestMemoryFloor is the soft memory limit `ingest go` runs under
// (SPEC.md §9, "Memory"): the live heap of the Go standard library's
// ingest stays under 0.6 GB, and without a limit the collector's default
// pacing (the heap may reach twice the live heap) took the process to
// 1.1–1.2 GB.
const ingestMemoryFloor = 768 << 20

// answerHeapFloor is the heap a command that refreshes and answers
// (openFresh: `context`, the engine commands) grows to before its first
// collection (SPEC.md §9, "Memory"). Refreshing a 1,000-file tree and
// rebuilding its engine snapshot keeps ≈ 10 MB live; the default pacing
// (a first goal of 4 MB, doubling) collected nine times on the way, ≈ 15
// ms of a 160 ms answer. Above the floor the heap is paced as by default
// (at most twice the live heap).
const answerHeapFloor = 64 << 20

// memGovernor is a soft memory limit (debug.SetMemoryLimit) that follows
// the live heap: after every collection the limit becomes the larger of
// its floor and grow × the live heap. With offHeap, the floor is for the
// process's anonymous memory, not the Go heap alone: the memory the Go
// runtime did not map (C allocations: LMDB mallocs every page a write
// transaction dirties until it commits, a quarter of a GB for a 1.8M-edge
// bulk load) comes off it, so that the heap gives back what the
// transaction takes instead of adding to it. Under the ingest's governor the
// collector also paces by GOGC (default 100: twice the live heap), so
// grow 1.5 collects a tree whose live heap outgrows the floor about twice
// as often as by default, never continuously; the answering commands'
// governor turns GOGC's pacing off and paces with grow 2 alone, which is
// the default pacing with a floor.
//
// Above the floor, the limit is what grow gives the heap plus the
// runtime's memory that is not heap objects (stacks, metadata, spans'
// unused tails: runtimeOverhead): the runtime takes that off a limit
// before it sets the heap's goal, so without it a large heap's goal sat
// within a few MB of its live heap and it collected continuously (std×20's
// extraction, 2026-11-28).
type memGovernor struct {
	floor   int64
	grow    float64
	prev    int64
	gcOff   bool // GOGC's pacing turned off while the governor runs
	prevPct int  // GOGC before, when gcOff
	offHeap bool // the floor counts the memory outside the Go runtime's
	// scanSlack: the limit is the live heap plus (grow-1) × its scannable
	// part (at least minScanShare of it), not grow × the live heap (see
	// startIngestGovernor).
	scanSlack bool
	mu        sync.Mutex
	stopped   bool
	sample    []metrics.Sample
	gcs       int // collections the governor followed (afterGC)
}

// followed is how many collections the governor has followed: a caller
// that collects can wait for its finalizer to have run (tests).
func (g *memGovernor) followed() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gcs
}

// gcSentinel is the object whose finalizer marks the end of a collection.
type gcSentinel struct{ _ *byte } // holds a pointer: not a tiny allocation

// startMemGovernor applies the ingest's governor (grow 1.5, GOGC as it
// is) until the returned stop is called (which restores the previous
// limit). The limit is the process's: one governed command at a time
// (memctl runs one command per process). A user's GOMEMLIMIT or GOGC
// wins: then nothing is changed.
func startMemGovernor(getenv func(string) string, floor int64) (stop func()) {
	return startIngestGovernor(getenv, floor).stop
}

// startIngestGovernor is startMemGovernor's governor, for a caller that
// paces it (pace); nil (whose methods do nothing) when a user's
// GOMEMLIMIT or GOGC wins.
//
// While the graph is extracted the slack above the live heap is half its
// scannable part (the objects holding pointers: syntax trees, maps, key
// strings' tables), not half of all of it: a collection's marking costs
// what it scans, so the bulk load's pointer-free edges and nodes, which
// grow with the tree, buy no slack of their own. At most the pointer-free
// part's share of the slack is given up: never more collections than a
// heap of the scannable part alone would take. But a quarter of the live
// heap always counts (minScanShare): a cycle does not cost its marking
// alone. With half the scannable part alone, std×40's syntax-only
// extraction (650 MB live) ran with its heap's goal 30–35 MB above the
// live heap: a collection a second, 28 % of the CPU by GODEBUG=gctrace=1,
// half by perf with the allocations' assists (2026-11-28).
func startIngestGovernor(getenv func(string) string, floor int64) *memGovernor {
	return startGovernor(getenv, &memGovernor{floor: floor, grow: 1.5, offHeap: true, scanSlack: true})
}

// writeGrow is the ingest governor's pacing once the graph is extracted
// and only written (pace): the heap then holds the bulk load's plain data
// (edges, ids, sort orders: few pointers, cheap to collect) while LMDB's
// dirty pages, outside the heap, grow to the size of the store (up to its
// limit before it spills pages to the file: 64 MiB as the Makefile builds
// it, 512 MiB by default; lmdbstore.DirtyPagesMax). Paced at 1.5,
// the heap's slack came on top of those pages: std×6's write peaked at
// 1.18 GB, 1.06 GB at 1.1; std×10's commit takes 16–19 s instead of
// 14–15 (BENCHMARKS.md, session 16). A tree whose live heap stays under
// the floor (std) is not affected.
const writeGrow = 1.1

// writeFloor is the ingest governor's floor once the graph is extracted
// and only written (pace): the heap then holds the bulk load (few
// pointers: a collection costs little) and what the extraction left, which
// the extraction's floor would keep mapped through the commit, on top of
// LMDB's pages: std×10's commit reached 0.92 GB under the 768 MiB floor,
// 0.88 GB under this one (BENCHMARKS.md, session 20).
const writeFloor = 256 << 20

// pace changes the factor the limit follows the live heap by, and its
// floor, and applies them at once (to the live heap the last collection
// found).
func (g *memGovernor) pace(grow float64, floor int64) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grow, g.scanSlack, g.floor = grow, false, floor
	if !g.stopped {
		g.apply()
	}
}

// startHeapFloor applies the answering commands' governor: no collection
// below floor, the default pacing above it. Same rules as
// startMemGovernor.
func startHeapFloor(getenv func(string) string, floor int64) (stop func()) {
	return startGovernor(getenv, &memGovernor{floor: floor, grow: 2, gcOff: true}).stop
}

// startGovernor applies g and returns it, or nil (whose methods do
// nothing) when a user's GOMEMLIMIT or GOGC wins: then nothing is changed.
func startGovernor(getenv func(string) string, g *memGovernor) *memGovernor {
	if getenv != nil && (getenv("GOMEMLIMIT") != "" || getenv("GOGC") != "") {
		return nil
	}
	g.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/scan/heap:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	if g.gcOff {
		g.prevPct = debug.SetGCPercent(-1)
	}
	g.prev = debug.SetMemoryLimit(g.floor)
	g.arm()
	return g
}

// stop restores the limit (and GOGC) the governor found; nil-safe.
func (g *memGovernor) stop() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.stopped = true
	debug.SetMemoryLimit(g.prev)
	if g.gcOff {
		debug.SetGCPercent(g.prevPct)
	}
}

// arm sets a finalizer that runs once the next collection has found its
// sentinel unreachable.
func (g *memGovernor) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { g.afterGC() })
}

// afterGC moves the limit to follow the live heap and re-arms.
func (g *memGovernor) afterGC() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.apply()
	g.gcs++
	g.arm()
}

// apply sets the limit for the live heap the last collection found; g.mu
// held.
func (g *memGovernor) apply() {
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		live := int64(g.sample[0].Value.Uint64())
		floor := g.floor
		if g.offHeap {
			floor -= offHeapBytes(g.sample[1].Value, g.sample[2].Value)
		}
		over := runtimeOverhead(g.sample[1].Value, g.sample[2].Value, g.sample[4].Value, g.sample[5].Value)
		debug.SetMemoryLimit(max(floor, g.limit(live, g.sample[3].Value)+over))
	}
}

// minScanShare is the least share of the live heap the ingest governor's
// slack counts as scannable (startIngestGovernor).
const minScanShare = 0.25

// limit is the soft limit for a live heap of live bytes, scan of them
// scannable (/gc/scan/heap:bytes, when it is known).
func (g *memGovernor) limit(live int64, scan metrics.Value) int64 {
	if g.scanSlack && scan.Kind() == metrics.KindUint64 {
		counted := max(min(live, int64(scan.Uint64())), int64(minScanShare*float64(live)))
		return live + int64((g.grow-1)*float64(counted))
	}
	return int64(float64(live) * g.grow)
}

// runtimeOverhead is the memory the Go runtime holds ready (mapped, not
// released) that is neither heap objects nor free heap: what the runtime
// takes off a memory limit before the heap's goal (memoryLimitHeapGoal's
// "non-heap memory"), from its metrics: total, released, free and
// objects of /memory/classes/... 0 when one is unknown.
func runtimeOverhead(total, released, free, objects metrics.Value) int64 {
	for _, v := range []metrics.Value{total, released, free, objects} {
		if v.Kind() != metrics.KindUint64 {
			return 0
		}
	}
	return max(0, int64(total.Uint64())-int64(released.Uint64())-int64(free.Uint64())-int64(objects.Uint64()))
}

// offHeapBytes is the anonymous memory resident in the process beyond
// what the Go runtime has mapped and not released (total and released,
// its metrics): C allocations. An estimate from below (the runtime's
// mapped memory is not all resident); 0 when /proc/self/status cannot be
// read (not Linux).
func offHeapBytes(total, released metrics.Value) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil || total.Kind() != metrics.KindUint64 || released.Kind() != metrics.KindUint64 {
		return 0
	}
	anon, ok := rssAnon(status)
	if !ok {
		return 0
	}
	return max(0, anon-int64(total.Uint64()-released.Uint64()))
}

// rssAnon is the RssAnon line of /proc/PID/status, in bytes:
//
//	RssAnon:	  123456 kB
func rssAnon(status []byte) (int64, bool) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("RssAnon:"))
		if !ok {
			continue
		}
		kb, ok := bytes.CutSuffix(bytes.TrimSpace(rest), []byte(" kB"))
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(kb)), 10, 64)
		return n << 10, err == nil && n >= 0
	}
	return 0, false
}
