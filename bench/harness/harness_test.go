package harness

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/bench/peers"
)

func TestMain(m *testing.M) {
	MaybeChild(peers.New)
	os.Exit(m.Run())
}

// smokeOptions is a tiny run: every workload, every peer, answers checked.
func smokeOptions(t *testing.T) Options {
	return Options{
		Sizes: []int{2000}, Seed: 3, BatchOps: 1500, Writes: 20, ReadTime: 20 * time.Millisecond, FreshRuns: 2,
		Systems: []string{"sqlite", "bbolt", "lmdb-raw"}, New: peers.New, Dir: t.TempDir(),
	}
}

// TestPeersSmoke runs every workload on every peer and requires a figure
// (not an error, not a wrong answer) in every cell.
func TestPeersSmoke(t *testing.T) {
	res, err := Run(smokeOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	for _, w := range Workloads {
		for _, sys := range res.Options.Systems {
			c, ok := sr.Cells[w][sys]
			if !ok || c.Err != nil || c.Value <= 0 {
				t.Errorf("%s / %s: %+v (present %v)", w, sys, c, ok)
			}
		}
	}
	var buf bytes.Buffer
	WriteTable(&buf, res)
	if !strings.Contains(buf.String(), "| 2k | get-out p50 | µs |") {
		t.Errorf("table lacks the get-out row:\n%s", buf.String())
	}
	t.Log("\n" + buf.String())
}
