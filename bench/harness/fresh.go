package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// childEnv carries a fresh-process query to a re-executed copy of this
// binary: the system's name; childDirEnv and childArgEnv carry the store
// directory and the FreshArg.
const (
	childEnv    = "BENCH_PEERS_CHILD"
	childDirEnv = "BENCH_PEERS_CHILD_DIR"
	childArgEnv = "BENCH_PEERS_CHILD_ARG"
)

// MaybeChild runs the fresh-process query and exits if this process was
// started as a child; otherwise it returns. Call it first in main (and in
// TestMain).
func MaybeChild(newSys Factory) {
	name, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	parts := []string{name, os.Getenv(childDirEnv), os.Getenv(childArgEnv)}
	t0 := time.Now()
	sys, err := newSys(parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var t1 time.Time
	n, done, err := sys.FreshQuery(parts[1], parts[2], func() { t1 = time.Now() })
	t2 := time.Now()
	if done != nil {
		if cerr := done(); err == nil {
			err = cerr
		}
	}
	t3 := time.Now()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d %d %d %d\n", n, t1.Sub(t0).Nanoseconds(), t2.Sub(t1).Nanoseconds(), t3.Sub(t2).Nanoseconds())
	os.Exit(0)
}

// fresh spawns FreshRuns processes per system (taking turns) that each
// open the system's store, answer one get-out, for a node with the median
// out-degree, and close it. Cells (medians): the child's open→answer→close
// time, its first get-out alone, and the parent's spawn→exit time. Stores must be closed in this process
// first (bbolt locks its file).
func (r *sizeRun) fresh(all []*entry) {
	exe, err := os.Executable()
	var es []*entry
	for _, e := range all {
		c, ok := r.sr.Cells[WOut][e.name]
		switch {
		case err != nil:
			r.set(WFresh, e.name, Cell{Err: err})
		case !ok || c.Err != nil || e.err != nil:
			r.set(WFresh, e.name, Cell{Err: firstErr(e.err, c.Err, errors.New("no store"))})
			r.set(WFreshRead, e.name, Cell{Err: firstErr(e.err, c.Err, errors.New("no store"))})
			r.set(WProcess, e.name, Cell{Err: firstErr(e.err, c.Err, errors.New("no store"))})
		default:
			es = append(es, e)
		}
	}
	node := medianNode(r.t.outDeg)
	want := int(r.t.outDeg[node])
	inChild := map[*entry][]time.Duration{}
	firstRead := map[*entry][]time.Duration{}
	wall := map[*entry][]time.Duration{}
	failed := map[*entry]error{}
	for i := 0; i < r.o.FreshRuns; i++ {
		for _, e := range es {
			if failed[e] != nil {
				continue
			}
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), childEnv+"="+e.name, childDirEnv+"="+e.dir, childArgEnv+"="+e.sys.FreshArg(r.g, node))
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			t0 := time.Now()
			err := cmd.Run()
			el := time.Since(t0)
			if err != nil {
				failed[e] = fmt.Errorf("child: %v: %s", err, strings.TrimSpace(stderr.String()))
				continue
			}
			var n int
			var open, read, cl int64
			if _, err := fmt.Sscan(out.String(), &n, &open, &read, &cl); err != nil || n != want {
				failed[e] = &WrongAnswerError{WFresh, node, fmt.Sprintf("child said %q, want %d edges", out.String(), want)}
				continue
			}
			inChild[e] = append(inChild[e], time.Duration(open+read+cl))
			firstRead[e] = append(firstRead[e], time.Duration(read))
			wall[e] = append(wall[e], el)
		}
	}
	note := fmt.Sprintf("median of %d, degree %d", r.o.FreshRuns, want)
	for _, e := range es {
		if failed[e] != nil {
			r.set(WFresh, e.name, Cell{Err: failed[e]})
			r.set(WFreshRead, e.name, Cell{Err: failed[e]})
			r.set(WProcess, e.name, Cell{Err: failed[e]})
			continue
		}
		r.set(WFresh, e.name, Cell{Value: ms(median(inChild[e])), Note: note})
		r.set(WFreshRead, e.name, Cell{Value: micros(median(firstRead[e])), Note: note})
		r.set(WProcess, e.name, Cell{Value: ms(median(wall[e])), Note: note})
	}
}

func medianNode(deg []uint32) uint32 {
	idx := make([]uint32, len(deg))
	for i := range idx {
		idx[i] = uint32(i)
	}
	slices.SortStableFunc(idx, func(a, b uint32) int { return int(deg[a]) - int(deg[b]) })
	return idx[len(idx)/2]
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }
