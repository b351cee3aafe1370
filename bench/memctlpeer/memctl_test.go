package memctlpeer

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/memctl/memctl/bench/harness"
)

func TestMain(m *testing.M) {
	harness.MaybeChild(New)
	os.Exit(m.Run())
}

// TestMemctlSmoke runs every workload on memctl (and its snapshot) beside
// SQLite on a small graph: every answer is checked against the generator.
func TestMemctlSmoke(t *testing.T) {
	res, err := harness.Run(harness.Options{
		Sizes: []int{2000}, Seed: 5, BatchOps: 1500, Writes: 20, ReadTime: 20 * time.Millisecond, FreshRuns: 2,
		Systems: []string{"memctl", "memctl-snap", "sqlite"}, Derived: map[string]string{"memctl-snap": "memctl"},
		New: New, Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Sizes[0]
	for _, w := range harness.Workloads {
		for _, sys := range res.Options.Systems {
			c := sr.Cells[w][sys]
			if c.Err != nil && !harness.IsNotSupported(c.Err) {
				t.Errorf("%s / %s: %v", w, sys, c.Err)
			}
		}
	}
	var buf bytes.Buffer
	harness.WriteTable(&buf, res)
	t.Log("\n" + buf.String())
}
