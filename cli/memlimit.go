package cli

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
// its floor and grow × the live heap. Under the ingest's governor the
// collector also paces by GOGC (default 100: twice the live heap), so
// grow 1.5 collects a tree whose live heap outgrows the floor about twice
// as often as by default, never continuously; the answering commands'
// governor turns GOGC's pacing off and paces with grow 2 alone, which is
// the default pacing with a floor.
type memGovernor struct {
	floor   int64
	grow    float64
	prev    int64
	gcOff   bool // GOGC's pacing turned off while the governor runs
	prevPct int  // GOGC before, when gcOff
	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
}

// gcSentinel is the object whose finalizer marks the end of a collection.
type gcSentinel struct{ _ *byte } // holds a pointer: not a tiny allocation

// startMemGovernor applies the ingest's governor (grow 1.5, GOGC as it
// is) until the returned stop is called (which restores the previous
// limit). The limit is the process's: one governed command at a time
// (memctl runs one command per process). A user's GOMEMLIMIT or GOGC
// wins: then nothing is changed.
func startMemGovernor(getenv func(string) string, floor int64) (stop func()) {
	return startGovernor(getenv, &memGovernor{floor: floor, grow: 1.5})
}

// startHeapFloor applies the answering commands' governor: no collection
// below floor, the default pacing above it. Same rules as
// startMemGovernor.
func startHeapFloor(getenv func(string) string, floor int64) (stop func()) {
	return startGovernor(getenv, &memGovernor{floor: floor, grow: 2, gcOff: true})
}

func startGovernor(getenv func(string) string, g *memGovernor) (stop func()) {
	if getenv != nil && (getenv("GOMEMLIMIT") != "" || getenv("GOGC") != "") {
		return func() {}
	}
	g.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	if g.gcOff {
		g.prevPct = debug.SetGCPercent(-1)
	}
	g.prev = debug.SetMemoryLimit(g.floor)
	g.arm()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.stopped = true
		debug.SetMemoryLimit(g.prev)
		if g.gcOff {
			debug.SetGCPercent(g.prevPct)
		}
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
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		live := int64(g.sample[0].Value.Uint64())
		debug.SetMemoryLimit(max(g.floor, int64(float64(live)*g.grow)))
	}
	g.arm()
}
