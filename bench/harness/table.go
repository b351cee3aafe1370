package harness

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/memctl/memctl/bench/peers"
)

// WriteTable prints the run as one Markdown table (workload × system), the
// footnotes its cells refer to, and the degree distributions.
func WriteTable(w io.Writer, res *Result) {
	WriteBestPeer(w, res)
	writeSummary(w, res)
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
			"hub phase (the %d nodes of highest in-degree) in-degree %s; 3-hop reach %s nodes; old rev = %.0f%% of edges loaded; diff-since returns %d ops.\n",
			human(float64(sr.Nodes)), human(float64(sr.Edges)), float64(sr.Edges)/float64(sr.Nodes), sr.Batches,
			quantiles(sr.OutDeg), quantiles(sr.InDeg), len(sr.HubInDeg), quantiles(sr.HubInDeg), quantilesInt(sr.HopSizes), 100*sr.PitFrac, sr.DiffOps)
	}
	writeSpace(w, res)
}

// bestPeerRows are the figures of the best-peer table, by kind of process.
var bestPeerRows = []struct {
	kind string
	ws   []string
}{
	{"long-lived process (one read transaction per call)", []string{WOut, WOut99, WIn, WIn99, WHub, WHub99, WHop, WHop99, WPit}},
	{"one-shot process (open, one get-out by key, close)", []string{WFresh, WFreshRead, WProcess}},
}

// Targets (issue 28) against bbolt: the figure must be at least Min times
// better than bbolt's in the same run.
var bboltTargets = []struct {
	w   string
	min float64
	say string
}{
	{WOut, 2, "get-out with keys ≥ 2× bbolt at p50"},
	{WHub, 1, "hub in-lists ≤ bbolt at p50"},
}

// WriteBestPeer prints, per size, the reference system (the first)
// against the best peer of the same run on every read figure, long-lived
// and one-shot processes apart, then the targets against bbolt. Peers are
// the systems other than the reference and those derived from it.
func WriteBestPeer(w io.Writer, res *Result) {
	o := res.Options
	base := o.Systems[0]
	for _, sr := range res.Sizes {
		fmt.Fprintf(w, "%s nodes, %s edges — %s against the best peer in the same run (× = the peer's figure / %s's; > 1: %s faster):\n\n",
			human(float64(sr.Nodes)), human(float64(sr.Edges)), base, base, base)
		fmt.Fprintf(w, "| | %s | best peer, same run | × |\n|---|---:|---|---:|\n", base)
		for _, g := range bestPeerRows {
			fmt.Fprintf(w, "| **%s** | | | |\n", g.kind)
			for _, wl := range g.ws {
				ref, ok := sr.Cells[wl][base]
				if !ok || ref.Err != nil || ref.Value <= 0 {
					continue
				}
				peer, pc := bestPeer(sr, o, wl)
				if peer == "" {
					continue
				}
				fmt.Fprintf(w, "| %s %s | %s | %s %s | ×%.2f |\n", wl, units[wl], formatValue(ref.Value, units[wl]),
					peer, formatValue(pc.Value, units[wl]), pc.Value/ref.Value)
			}
		}
		fmt.Fprintln(w)
		for _, t := range bboltTargets {
			a, okA := sr.Cells[t.w][base]
			b, okB := sr.Cells[t.w]["bbolt"]
			if !okA || !okB || a.Err != nil || b.Err != nil || a.Value <= 0 {
				continue
			}
			r := b.Value / a.Value
			verdict := "met"
			if r < t.min {
				verdict = "NOT met"
			}
			fmt.Fprintf(w, "Target %s: %s %s vs bbolt %s: ×%.2f, %s.\n", t.say, base,
				formatValue(a.Value, units[t.w]), formatValue(b.Value, units[t.w]), r, verdict)
		}
		fmt.Fprintln(w)
	}
}

// bestPeer is the peer with the lowest figure for a latency workload.
func bestPeer(sr *SizeResult, o Options, wl string) (string, Cell) {
	var name string
	var best Cell
	for _, sys := range o.Systems[1:] {
		if o.Derived[sys] != "" {
			continue
		}
		c, ok := sr.Cells[wl][sys]
		if !ok || c.Err != nil || c.Value <= 0 {
			continue
		}
		if name == "" || c.Value < best.Value {
			name, best = sys, c
		}
	}
	return name, best
}

// writeSummary prints, per size, one row per system with the figures of
// the table (latencies in µs, p50 / p99), and how memctl's store
// compares with bbolt on them.
func writeSummary(w io.Writer, res *Result) {
	for _, sr := range res.Sizes {
		fmt.Fprintf(w, "%s nodes, %s edges — each read returns canonical keys and relation names:\n\n", human(float64(sr.Nodes)), human(float64(sr.Edges)))
		fmt.Fprintln(w, "| system | bulk edges/s (batches / one bulk import) | get-out p50 / p99 µs | get-in p50 µs | hub get-in p50 / p99 µs | 3-hop p50 µs | fresh process: open→get-out→close ms / first get-out µs | bytes/edge (batches / vacuumed / bulk import) |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		for _, sys := range res.Options.Systems {
			cell := func(wl string) string {
				c, ok := sr.Cells[wl][sys]
				switch {
				case !ok:
					return "—"
				case c.Err != nil:
					if IsNotSupported(c.Err) {
						return "—"
					}
					var wrong *WrongAnswerError
					if errors.As(c.Err, &wrong) {
						return "WRONG"
					}
					return "error"
				}
				if wl == WBulk || wl == WImport || wl == WBytes || wl == WImportB || wl == WVacuumB {
					return commas(c.Value)
				}
				return formatValue(c.Value, units[wl])
			}
			fmt.Fprintf(w, "| %s | %s / %s | %s / %s | %s | %s / %s | %s | %s / %s | %s / %s / %s |\n", sys, cell(WBulk), cell(WImport), cell(WOut), cell(WOut99),
				cell(WIn), cell(WHub), cell(WHub99), cell(WHop), cell(WFresh), cell(WFreshRead), cell(WBytes), cell(WVacuumB), cell(WImportB))
		}
		fmt.Fprintln(w)
		if ratios := targetRatios(sr, "memctl", "bbolt"); ratios != "" {
			fmt.Fprintf(w, "memctl store against bbolt (× = bbolt's figure / memctl's; > 1: memctl faster): %s\n\n", ratios)
		}
	}
}

// targetRatios compares sys with ref on the read latencies.
func targetRatios(sr *SizeResult, sys, ref string) string {
	var parts []string
	for _, wl := range []string{WOut, WOut99, WIn, WHub, WHub99, WHop, WFresh, WFreshRead} {
		a, okA := sr.Cells[wl][sys]
		b, okB := sr.Cells[wl][ref]
		if !okA || !okB || a.Err != nil || b.Err != nil || a.Value <= 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s ×%.2f", wl, b.Value/a.Value))
	}
	return strings.Join(parts, ", ")
}

func commas(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeSpace prints each reporting system's disk use per keyspace.
func writeSpace(w io.Writer, res *Result) {
	for _, sr := range res.Sizes {
		for _, sys := range res.Options.Systems {
			ks := sr.Space[sys]
			if len(ks) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n%s, %s nodes — disk use by keyspace:\n\n", sys, human(float64(sr.Nodes)))
			fmt.Fprintln(w, "| keyspace | entries | pages | bytes | bytes/edge |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
			var tot Keyspace
			for _, k := range ks {
				fmt.Fprintf(w, "| %s | %d | %d | %d | %.1f |\n", k.Name, k.Entries, k.Pages, k.Bytes, float64(k.Bytes)/float64(sr.Edges))
				tot.Entries += k.Entries
				tot.Pages += k.Pages
				tot.Bytes += k.Bytes
			}
			fmt.Fprintf(w, "| total | %d | %d | %d | %.1f |\n", tot.Entries, tot.Pages, tot.Bytes, float64(tot.Bytes)/float64(sr.Edges))
		}
	}
}

// Keyspace is peers.Keyspace (re-exported for the table).
type Keyspace = peers.Keyspace

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
	case "µs":
		if v < 100 {
			return fmt.Sprintf("%.3g", v)
		}
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
(edges/s, node writes included in the time). bulk import = the same graph loaded again into a new store in one
durable transaction, each system's fastest way (memctl: lmdbstore.Bulk, what import and batch --bulk use; bbolt:
every bucket's keys put in ascending order with fill percent 1; SQLite, raw LMDB: their Load with everything in one
transaction), payloads generated before the clock starts; its store's size is
the bytes/edge after it. durable put-edge = one edge per durable transaction. Every read returns
what a user gets: each edge's relation name and its peer's canonical key, resolved by the system from its own storage
(memctl: its ids keyspace or cache; bbolt, raw LMDB: the edge key itself, which ends with the peer's key; SQLite: a
join with the nodes table; the snapshot: its string table). get-out, get-in = one read transaction per call, uniform random nodes. hub get-in =
get-in of the 100 nodes of highest in-degree, taken in turn. 3-hop = the key of
every distinct node within three out-hops (SQLite: recursive CTE joined with nodes; memctl: BFS over ids, then keys;
bbolt, raw LMDB: BFS over keys). get-out @ old rev = get-out as of the middle of the load; peers filter on the revision stored in each
row, which is only equivalent for an insert-only history (a plain adjacency table keeps no deleted or superseded
rows). diff-since = every node and edge write after the revision at 90% of the load; peers have no change log, so
they scan everything. fresh open→get-out→close = inside a new process, open the store, answer one get-out with keys
(by canonical key, checking the node exists; SQLite by integer id) and close it; fresh first get-out = that get-out alone (cold
in-process caches, the first touch of the mapped pages); fresh process total = the same seen from the parent (spawn
to exit). disk bytes/edge = allocated file blocks after the run / edges; vacuumed bytes/edge = the same for a dense
copy of the store after the writes, history included, made the system's own way (memctl vacuum, SQLite's VACUUM
INTO, bbolt's Compact, LMDB's compacting copy).
Units: read rows are wall-clock latencies of single operations, p50 and p99 over every operation of 24 turns the
systems take one after another (so load from elsewhere hits them alike); the process's CPU time per operation is in
the run's log. diff-since is CPU time, best of 5. Writes and fresh processes are wall-clock.

`
