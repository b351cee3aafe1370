package harness

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteTable prints the run as one Markdown table (workload × system), the
// footnotes its cells refer to, and the degree distributions.
func WriteTable(w io.Writer, res *Result) {
	o := res.Options
	base := o.Systems[0]
	fmt.Fprintf(w, "Each cell: value (×R), where R is how many times better %s is than that system "+
		"(R > 1: %s is faster or smaller). n/a: the system has no equivalent.\n\n", base, base)
	fmt.Fprintf(w, "| nodes | workload | unit | %s |\n", strings.Join(o.Systems, " | "))
	fmt.Fprintf(w, "|---|---|---|%s\n", strings.Repeat("---:|", len(o.Systems)))
	var notes []string
	note := func(s string) int {
		if i := slices.Index(notes, s); i >= 0 {
			return i + 1
		}
		notes = append(notes, s)
		return len(notes)
	}
	for _, sr := range res.Sizes {
		for _, wl := range Workloads {
			row := sr.Cells[wl]
			cells := make([]string, 0, len(o.Systems))
			ref, refOK := row[base]
			for _, sys := range o.Systems {
				c, ok := row[sys]
				switch {
				case !ok:
					cells = append(cells, "")
				case c.Err != nil:
					var wrong *WrongAnswerError
					switch {
					case errors.As(c.Err, &wrong):
						cells = append(cells, fmt.Sprintf("WRONG[%d]", note(sys+": "+c.Err.Error())))
					case IsNotSupported(c.Err):
						cells = append(cells, "n/a")
					default:
						cells = append(cells, fmt.Sprintf("error[%d]", note(sys+": "+c.Err.Error())))
					}
				default:
					s := formatValue(c.Value, units[wl])
					if sys != base && refOK && ref.Err == nil && c.Value > 0 && ref.Value > 0 {
						ratio := ref.Value / c.Value
						if !higherIsBetter[wl] {
							ratio = c.Value / ref.Value
						}
						s += fmt.Sprintf(" (×%.2g)", ratio)
					}
					cells = append(cells, s)
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", human(float64(sr.Nodes)), wl, units[wl], strings.Join(cells, " | "))
		}
	}
	fmt.Fprintln(w)
	for i, n := range notes {
		fmt.Fprintf(w, "[%d] %s\n", i+1, n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, workloadNotes)
	for _, sr := range res.Sizes {
		fmt.Fprintf(w, "%s nodes, %s edges (%.2f/node), %d load transactions: out-degree %s; in-degree %s; "+
			"3-hop reach %s nodes; old rev = %.0f%% of edges loaded; diff-since returns %d ops.\n",
			human(float64(sr.Nodes)), human(float64(sr.Edges)), float64(sr.Edges)/float64(sr.Nodes), sr.Batches,
			quantiles(sr.OutDeg), quantiles(sr.InDeg), quantilesInt(sr.HopSizes), 100*sr.PitFrac, sr.DiffOps)
	}
}

func quantiles(v []uint32) string {
	s := slices.Clone(v)
	slices.Sort(s)
	q := func(p float64) uint32 { return s[int(p*float64(len(s)-1))] }
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	return fmt.Sprintf("mean %.1f, p50 %d, p90 %d, p99 %d, max %d", sum/float64(len(s)), q(.5), q(.9), q(.99), s[len(s)-1])
}

func quantilesInt(v []int) string {
	u := make([]uint32, len(v))
	for i, x := range v {
		u[i] = uint32(x)
	}
	return quantiles(u)
}

func formatValue(v float64, unit string) string {
	switch unit {
	case "ms", "cpu-ms":
		if v < 10 {
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.0f", v)
	case "B":
		return fmt.Sprintf("%.0f", v)
	}
	return human(v)
}

// human prints 3 significant digits with a k/M suffix.
func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3g", v/1e6) + "M"
	case v >= 1e3:
		return fmt.Sprintf("%.3g", v/1e3) + "k"
	}
	return fmt.Sprintf("%.3g", v)
}

// workloadNotes says what each row measures, once, under the table.
const workloadNotes = `Rows: bulk load = every node, then every edge, in transactions of -batch operations, each durable
(edges/s, node writes included in the time). durable put-edge = one edge per durable transaction. get-out, get-in =
one read transaction per call, uniform random nodes, every neighbour handed to a callback. 3-hop = distinct nodes
within three out-hops (SQLite: recursive CTE; Go-side systems: BFS). get-out @ old rev = get-out as of the middle
of the load; peers filter on the revision stored in each row, which is only equivalent for an insert-only history
(a plain adjacency table keeps no deleted or superseded rows). diff-since = every node and edge write after the
revision at 90% of the load; peers have no change log, so they scan everything. fresh open→get-out = inside a new
process, open the store and answer one get-out (by canonical key for memctl, by integer id for peers); fresh process
total = the same seen from the parent (spawn to exit). disk bytes/edge = allocated file blocks after the run / edges.
Units: reads are in operations per second of this process's CPU time (getrusage, user + system), the median over 24
turns the systems take one after another, because CPU time does not inflate when other processes compete for the
cores (wall-clock medians are in the run's log); diff-since is CPU time, best of 5. Writes and fresh processes are
wall-clock: they wait on fsync and process start, which CPU time would hide.

`
