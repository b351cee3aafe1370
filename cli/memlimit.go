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

// memGovernor is a soft memory limit (debug.SetMemoryLimit) that follows
// the live heap: after every collection the limit becomes the larger of
// its floor and 1.5× the live heap (the default pacing allows 2×), so a
// tree whose live heap outgrows the floor is collected more often (about
// twice as often as by default), never continuously.
type memGovernor struct {
	floor   int64
	prev    int64
	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
}

// gcSentinel is the object whose finalizer marks the end of a collection.
type gcSentinel struct{ _ *byte } // holds a pointer: not a tiny allocation

// startMemGovernor applies the governor until the returned stop is called
// (which restores the previous limit). The limit is the process's: one
// governed command at a time (memctl runs one command per process). A user's GOMEMLIMIT or GOGC wins:
// then nothing is changed.
func startMemGovernor(getenv func(string) string, floor int64) (stop func()) {
	if getenv != nil && (getenv("GOMEMLIMIT") != "" || getenv("GOGC") != "") {
		return func() {}
	}
	g := &memGovernor{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	g.prev = debug.SetMemoryLimit(floor)
	g.arm()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.stopped = true
		debug.SetMemoryLimit(g.prev)
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
		debug.SetMemoryLimit(max(g.floor, live+live/2))
	}
	g.arm()
}
