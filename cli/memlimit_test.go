package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The governor sets its floor, raises the limit to 1.5× a live heap
// larger than the floor (and scannable: TestMemGovernorScanSlack) after a
// collection, and restores the previous
// limit when stopped; a user's GOMEMLIMIT or GOGC leaves the limit alone.
func TestMemGovernorFollowsLiveHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	const floor = 8 << 20
	stop := startMemGovernor(func(string) string { return "" }, floor)
	if got := debug.SetMemoryLimit(-1); got != floor {
		t.Errorf("limit after start %d, want the floor %d", got, floor)
	}
	hold := make([][]scannable, 64)
	for i := range hold {
		hold[i] = make([]scannable, 1<<20/64) // 64 MB live, 8× the floor, scannable
		hold[i][0].next = &hold[i][1]
	}
	var got int64
	for range 100 {
		runtime.GC()
		if got = debug.SetMemoryLimit(-1); got >= 64<<20+32<<20 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got < 64<<20+32<<20 || got > 4*64<<20 {
		t.Errorf("limit with 64 MB live %d, want about 1.5× the live heap", got)
	}
	runtime.KeepAlive(hold)
	stop()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("limit after stop %d, want the previous %d", got, prev)
	}
	for _, env := range []string{"GOMEMLIMIT", "GOGC"} {
		stop := startMemGovernor(func(k string) string {
			if k == env {
				return "1"
			}
			return ""
		}, floor)
		if got := debug.SetMemoryLimit(-1); got != prev {
			t.Errorf("with %s set the limit became %d, want it unchanged (%d)", env, got, prev)
		}
		stop()
	}
}

// scannable is 64 bytes of heap that hold a pointer.
type scannable struct {
	next *scannable
	_    [56]byte
}

// heapGoal is the collector's heap goal (/gc/heap/goal:bytes): what the
// governor's limit leaves the heap once the runtime has taken its own
// memory off it.
func heapGoal() float64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64())
}

// pace changes the factor the limit follows the live heap by: after a
// collection the heap's goal is the live heap plus half its scannable
// part (the 64 MB held here are), and 1.1× the live heap once paced so
// (less the runtime's 3 % headroom; the heap read from runtime/metrics,
// as the governor reads it: other tests of the package, and -race, add to
// the 64 MB). The goal, not the limit: the limit also holds the runtime's
// memory that is not heap (runtimeOverhead), which the runtime takes off
// it.
func TestMemGovernorPace(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	const floor = 8 << 20
	g := startIngestGovernor(func(string) string { return "" }, floor)
	defer g.stop()
	hold := make([][]scannable, 64)
	for i := range hold {
		hold[i] = make([]scannable, 1<<20/64)
		hold[i][0].next = &hold[i][1]
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}}
	// ratioAfterGC is the heap goal over what it should be: the live heap
	// and, while extracting, half its scannable part (the 64 MB held here
	// and what other tests of the package left).
	ratioAfterGC := func(paced bool) float64 {
		var r float64
		for range 100 {
			runtime.GC()
			time.Sleep(5 * time.Millisecond) // the governor moves the limit from a cleanup
			metrics.Read(sample)
			live, scan := float64(sample[0].Value.Uint64()), float64(sample[1].Value.Uint64())
			want := live + min(live, scan)/2
			if paced {
				want = 1.1 * live
			}
			if r = heapGoal() / want; r > 0.95 && r < 1.01 { // less the runtime's 3 % headroom
				break
			}
		}
		return r
	}
	if r := ratioAfterGC(false); r < 0.95 || r > 1.01 {
		t.Errorf("heap goal %.2f of the live heap and half its scannable part, want 0.97", r)
	}
	g.pace(1.1, g.floor)
	if r := ratioAfterGC(true); r < 0.95 || r > 1.01 {
		t.Errorf("heap goal %.2f of 1.1× the live heap once paced, want 0.97", r)
	}
	runtime.KeepAlive(hold)
	g.stop()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("limit after stop %d, want the previous %d", got, prev)
	}
	var none *memGovernor // a user's GOMEMLIMIT won: pace and stop do nothing
	none.pace(1.1, 0)
	none.stop()
}

// While extracting, the ingest governor's slack is half the scannable
// heap, counted as at least a quarter of the live heap: 96 MB of
// pointer-free bytes (a bulk load's edges) buy none of their own, 32 MB
// holding pointers buy 16 MB; with 8 MB holding pointers, a quarter of the
// live heap counts. Once paced for the write, the heap's goal follows the
// whole live heap again.
func TestMemGovernorScanSlack(t *testing.T) {
	for _, ptrMB := range []int{32, 8} {
		t.Run(fmt.Sprintf("%d MB of pointers", ptrMB), func(t *testing.T) { testScanSlack(t, ptrMB) })
	}
}

func testScanSlack(t *testing.T, ptrMB int) {
	prev := debug.SetMemoryLimit(-1)
	const floor = 8 << 20
	g := startIngestGovernor(func(string) string { return "" }, floor)
	defer g.stop()
	flat := make([][]byte, 96)
	for i := range flat {
		flat[i] = make([]byte, 1<<20)
	}
	ptrs := make([][]scannable, ptrMB)
	for i := range ptrs {
		ptrs[i] = make([]scannable, 1<<20/64)
		ptrs[i][0].next = &ptrs[i][1]
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}}
	var live, scan, limit float64
	for range 100 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // the governor moves the limit from a cleanup
		metrics.Read(sample)
		live, scan = float64(sample[0].Value.Uint64()), float64(sample[1].Value.Uint64())
		limit = heapGoal()
		if r := limit / (live + max(scan, live/4)/2); r > 0.95 && r < 1.01 {
			break
		}
	}
	if scan < float64(ptrMB<<20) || scan > live-90<<20 {
		t.Fatalf("scannable heap %.0f MB of %.0f MB live: the pointer-free 96 MB counted, or the %d MB of pointers not", scan/(1<<20), live/(1<<20), ptrMB)
	}
	// The runtime keeps 3 % of the goal as headroom.
	if r := limit / (live + max(scan, live/4)/2); r < 0.95 || r > 1.01 {
		t.Errorf("heap goal %.0f MB for %.0f MB live, %.0f MB scannable: want the live heap and half the larger of the scannable and a quarter of the live heap, less 3 %%", limit/(1<<20), live/(1<<20), scan/(1<<20))
	}
	if limit > 1.3*live {
		t.Errorf("heap goal %.0f MB for %.0f MB live: the pointer-free part bought slack", limit/(1<<20), live/(1<<20))
	}
	g.pace(1.1, g.floor)
	var r float64
	for range 100 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		metrics.Read(sample)
		if r = heapGoal() / float64(sample[0].Value.Uint64()); r > 1.02 && r < 1.14 {
			break
		}
	}
	if r < 1.02 || r > 1.14 {
		t.Errorf("heap goal / live heap, paced at 1.1: %.2f, want about 1.1", r)
	}
	runtime.KeepAlive(flat)
	runtime.KeepAlive(ptrs)
	g.stop()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("limit after stop %d, want the previous %d", got, prev)
	}
}

// Memory mapped outside the Go runtime (here an anonymous mapping the
// test touches, as C's malloc would) comes off the ingest governor's
// floor: the limit falls by about its size while the live heap stays
// small.
func TestMemGovernorFloorCountsOffHeap(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status: the floor is the Go heap's alone")
	}
	prev := debug.SetMemoryLimit(-1)
	const floor, outside = 512 << 20, 128 << 20
	var g *memGovernor
	// limitAfterGC is the limit once the governor has followed a
	// collection after the call: its finalizer runs on another goroutine
	// once the collection is done, and reads the process's memory then.
	limitAfterGC := func() int64 {
		n := g.followed()
		runtime.GC()
		for i := 0; g.followed() < n+1 && i < 400; i++ {
			time.Sleep(5 * time.Millisecond)
			runtime.GC()
		}
		if g.followed() < n+1 {
			t.Fatal("the governor followed no collection in 2 s")
		}
		return debug.SetMemoryLimit(-1)
	}
	debug.FreeOSMemory()
	g = startIngestGovernor(func(string) string { return "" }, floor)
	stop := g.stop
	before := limitAfterGC()
	m, err := syscall.Mmap(-1, 0, outside, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(m); i += 4096 {
		m[i] = 1 // resident
	}
	after := limitAfterGC()
	stop()
	if err := syscall.Munmap(m); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("limit after stop %d, want the previous %d", got, prev)
	}
	if drop := before - after; drop < outside*3/4 || drop > outside*5/4 {
		t.Errorf("limit %d MB with %d MB mapped outside the runtime, %d MB before: want it about that much lower",
			after>>20, outside>>20, before>>20)
	}
}

func TestRSSAnon(t *testing.T) {
	status := "Name:\tmemctl\nVmRSS:\t  1056200 kB\nRssAnon:\t  1026012 kB\nRssFile:\t   30188 kB\n"
	if got, ok := rssAnon([]byte(status)); !ok || got != 1026012*1024 {
		t.Errorf("rssAnon = %d, %v; want %d", got, ok, 1026012*1024)
	}
	for _, bad := range []string{"VmRSS:\t 12 kB\n", "RssAnon:\t 12 MB\n", "RssAnon:\t x kB\n"} {
		if got, ok := rssAnon([]byte(bad)); ok {
			t.Errorf("rssAnon(%q) = %d, want not ok", bad, got)
		}
	}
}

// The answering commands' governor: GOGC's pacing off, no collection
// while the heap stays under the floor, the limit at 2× a live heap above
// it, and GOGC and the limit restored when stopped.
func TestHeapFloorPacesAboveFloorOnly(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	prevPct := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prevPct)
	debug.FreeOSMemory() // what earlier tests left counts toward the limit
	const floor = 1 << 30
	stop := startHeapFloor(func(string) string { return "" }, floor)
	if pct := debug.SetGCPercent(-1); pct != -1 {
		t.Errorf("GOGC under the floor governor %d, want off (-1)", pct)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	keep := make([][]byte, 0, 512)
	for range 512 { // 32 MB of garbage and live data, far under the floor
		keep = append(keep, make([]byte, 64<<10))
	}
	runtime.ReadMemStats(&after)
	if after.NumGC != before.NumGC {
		t.Errorf("%d collections under the floor, want none", after.NumGC-before.NumGC)
	}
	runtime.KeepAlive(keep)
	keep = nil
	stop()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("limit after stop %d, want the previous %d", got, prev)
	}
	if pct := debug.SetGCPercent(100); pct != 100 {
		t.Errorf("GOGC after stop %d, want the previous 100", pct)
	}

	// Above the floor: the limit follows 2× the live heap.
	stop = startHeapFloor(func(string) string { return "" }, 8<<20)
	hold := make([][]byte, 64)
	for i := range hold {
		hold[i] = make([]byte, 1<<20)
	}
	var got int64
	for range 100 {
		runtime.GC()
		if got = debug.SetMemoryLimit(-1); got >= 2*64<<20 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got < 2*64<<20 || got > 4*64<<20 {
		t.Errorf("limit with 64 MB live %d, want about 2× the live heap", got)
	}
	runtime.KeepAlive(hold)
	stop()
	for _, env := range []string{"GOMEMLIMIT", "GOGC"} {
		stop := startHeapFloor(func(k string) string {
			if k == env {
				return "1"
			}
			return ""
		}, floor)
		if pct := debug.SetGCPercent(100); pct != 100 {
			t.Errorf("with %s set GOGC became %d, want it unchanged", env, pct)
		}
		stop()
	}
}

// `ingest go` under its memory governor builds the store it builds
// without one (GOGC set turns the governor off): same logical snapshot.
func TestIngestGoSameStoreUnderMemoryLimit(t *testing.T) {
	dir := copyIngestTree(t, "basic")
	hash := func(environ map[string]string) string {
		db := newStore(t)
		if r := runEnv(t, "", environ, "--db", db, "ingest", "go", dir); r.Code != 0 {
			t.Fatalf("ingest: exit %d, stderr %q", r.Code, r.Stderr)
		}
		snap := filepath.Join(t.TempDir(), "s.snap")
		ok(t, "--db", db, "export", "--out", snap)
		return strings.Fields(ok(t, "snapshot", "hash", snap))[0]
	}
	governed, plain := hash(nil), hash(map[string]string{"GOGC": "100"})
	if governed == "" || governed != plain {
		t.Errorf("logical hash under the governor %q, without %q", governed, plain)
	}
}

// Paced for the write with a lower floor, the limit drops to it (or to the
// live heap's 1.1×) at once, not at the next collection: what the
// extraction left is not kept mapped under its floor through the commit.
func TestMemGovernorPaceLowersFloor(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	// A floor far above the heap: less the memory outside the Go heap (a
	// race-built binary's shadow memory counts there) it still wins.
	const floor = 8 << 30
	g := startIngestGovernor(func(string) string { return "" }, floor)
	defer g.stop()
	hold := make([]byte, 16<<20)
	runtime.GC()
	time.Sleep(5 * time.Millisecond) // the governor moves the limit from a cleanup
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	live := int64(sample[0].Value.Uint64())
	before := debug.SetMemoryLimit(-1)
	if before < 2*live {
		t.Fatalf("limit %d MB before pacing for a %d MB live heap, want the 8 GB floor's (less memory outside the Go heap)", before>>20, live>>20)
	}
	g.pace(1.1, 8<<20)
	metrics.Read(sample)
	live = int64(sample[0].Value.Uint64())
	if got := int64(heapGoal()); got > max(8<<20, live*12/10) || got < live {
		t.Errorf("heap goal %d MB after pacing at 1.1 with an 8 MB floor (limit %d MB before), live heap %d MB", got>>20, before>>20, live>>20)
	}
	runtime.KeepAlive(hold)
	g.stop()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("limit after stop %d, want the previous %d", got, prev)
	}
}
