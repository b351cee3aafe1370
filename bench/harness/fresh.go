package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/bench/peers"
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
	n, err := sys.FreshQuery(parts[1], parts[2])
	el := time.Since(t0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d %d\n", n, el.Nanoseconds())
	os.Exit(0)
}

// fresh spawns FreshRuns processes that each open sys's store and answer
// one get-out, for the node with the median out-degree; cells: the child's
// own open→answer time and the parent's spawn→exit time (medians).
func (r *sizeRun) fresh(sys peers.System) {
	name := sys.Name()
	if c, ok := r.sr.Cells[WOut][name]; !ok || c.Err != nil {
		err := fmt.Errorf("no store")
		if ok {
			err = c.Err
		}
		r.set(WFresh, name, Cell{Err: err})
		r.set(WProcess, name, Cell{Err: err})
		return
	}
	exe, err := os.Executable()
	if err != nil {
		r.set(WFresh, name, Cell{Err: err})
		return
	}
	node := medianNode(r.t.outDeg)
	arg := sys.FreshArg(r.g, node)
	want := int(r.t.outDeg[node])
	var inChild, wall []time.Duration
	for i := 0; i < r.o.FreshRuns; i++ {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), childEnv+"="+name, childDirEnv+"="+filepath.Join(r.dir, name), childArgEnv+"="+arg)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		t0 := time.Now()
		err := cmd.Run()
		el := time.Since(t0)
		if err != nil {
			e := fmt.Errorf("child: %v: %s", err, strings.TrimSpace(stderr.String()))
			r.set(WFresh, name, Cell{Err: e})
			r.set(WProcess, name, Cell{Err: e})
			return
		}
		var n int
		var ns int64
		if _, err := fmt.Sscan(out.String(), &n, &ns); err != nil || n != want {
			e := &WrongAnswerError{WFresh, node, fmt.Sprintf("child said %q, want %d edges", out.String(), want)}
			r.set(WFresh, name, Cell{Err: e})
			r.set(WProcess, name, Cell{Err: e})
			return
		}
		inChild = append(inChild, time.Duration(ns))
		wall = append(wall, el)
	}
	note := fmt.Sprintf("median of %d, degree %d", r.o.FreshRuns, want)
	r.set(WFresh, name, Cell{Value: ms(median(inChild)), Note: note})
	r.set(WProcess, name, Cell{Value: ms(median(wall)), Note: note})
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
