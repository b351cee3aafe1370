package main

// The loads a user runs: `memctl import FILE` of a snapshot and `memctl
// batch --bulk` of JSON Lines, as processes, and the same calls in this
// process (storesnap.Import; ops.BulkBatch) for a CPU
// profile. Every store's logical hash is compared with the ordinary
// path's.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/memctl/memctl/bench/gen"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/secretscan"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// logicalHash is the logical snapshot hash of the store at dir.
func logicalHash(path string) string {
	st, err := lmdbstore.Open(path, lmdbstore.Options{ReadOnly: true})
	check(err)
	defer st.Close()
	b, err := storesnap.ExportBytes(st, lmdbstore.At{}, snapshot.WriterOptions{})
	check(err)
	f, err := snapshot.FromBytes(b)
	check(err)
	h, err := f.LogicalHash()
	check(err)
	return hex.EncodeToString(h[:])
}

// writeJSONL writes the workload as batch operations: every node, then
// every edge (with its relation's default weight spelled out when
// weights).
func writeJSONL(path string, g *gen.Graph, payloads [][]byte, weights bool) {
	f, err := os.Create(path)
	check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	type node struct {
		Op      string          `json:"op"`
		Key     string          `json:"key"`
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload,omitempty"`
	}
	type edge struct {
		Op     string   `json:"op"`
		Src    string   `json:"src"`
		Rel    string   `json:"rel"`
		Dst    string   `json:"dst"`
		Weight *float64 `json:"weight,omitempty"`
	}
	enc := json.NewEncoder(w)
	for i, n := range g.Nodes {
		check(enc.Encode(node{"put_node", n.Key, n.Type.String(), payloads[i]}))
	}
	for _, e := range g.Edges {
		rec := edge{Op: "put_edge", Src: g.Nodes[e.Src].Key, Rel: e.Rel.Name(), Dst: g.Nodes[e.Dst].Key}
		if weights {
			one := 1.0 // every generated relation's default (built-in relations)
			rec.Weight = &one
		}
		check(enc.Encode(rec))
	}
	check(w.Flush())
	check(f.Close())
}

// measured is one process's wall time, CPU time (user + sys) and peak RSS.
type measured struct {
	wall, cpu time.Duration
	rssMB     float64
}

// runCLI runs bin with args (stdin from file in when not "") under
// /usr/bin/time, and reports its wall time, CPU time and peak RSS.
func runCLI(name string, edges int, bin, in string, nosync bool, args ...string) measured {
	timeFile, err := os.CreateTemp("", "bulkload-time-")
	check(err)
	timeFile.Close()
	defer os.Remove(timeFile.Name())
	cmd := exec.Command("/usr/bin/time", append([]string{"-o", timeFile.Name(), "-f", "%e %U %S %M", bin}, args...)...)
	cmd.Env = os.Environ()
	if nosync {
		cmd.Env = append(cmd.Env, "MEMCTL_NOSYNC=1")
	}
	if in != "" {
		f, err := os.Open(in)
		check(err)
		defer f.Close()
		cmd.Stdin = f
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		check(fmt.Errorf("%s: %v: %s", name, err, out.String()))
	}
	t, err := os.ReadFile(timeFile.Name())
	check(err)
	var wall, user, sys float64
	var rssKB int
	if _, err := fmt.Sscan(string(t), &wall, &user, &sys, &rssKB); err != nil {
		check(fmt.Errorf("%s: /usr/bin/time said %q: %v", name, t, err))
	}
	m := measured{time.Duration(wall * 1e9), time.Duration((user + sys) * 1e9), float64(rssKB) / 1024}
	report(name, edges, m.wall, m.cpu, fmt.Sprintf("peak RSS %.0f MB", m.rssMB))
	return m
}

// cliLoads writes the inputs and times the CLI's loads and their
// in-process equivalents; it returns the ordinary store's logical hash.
func cliLoads(dir, bin string, g *gen.Graph, payloads [][]byte, ordinary string, nosync, weights bool, profile, phase string) string {
	snap := filepath.Join(dir, "workload.snap")
	st, err := lmdbstore.Open(ordinary, lmdbstore.Options{ReadOnly: true})
	check(err)
	_, _, err = storesnap.Export(st, snap, lmdbstore.At{}, snapshot.WriterOptions{})
	check(err)
	check(st.Close())
	jsonl := filepath.Join(dir, "workload.jsonl")
	writeJSONL(jsonl, g, payloads, weights)
	want := logicalHash(ordinary)
	fmt.Printf("ordinary store: logical hash %s\n", want)
	edges := len(g.Edges)
	same := func(path string) {
		got := logicalHash(path)
		verdict := "same as the ordinary path"
		if got != want {
			verdict = "DIFFERS from the ordinary path " + want
		}
		fmt.Printf("  logical hash %s: %s\n", got, verdict)
	}

	imp := filepath.Join(dir, "cli-import")
	runCLI("import", edges, bin, "", nosync, "--db", imp, "import", snap)
	openSpace(imp, edges)
	same(imp)
	bb := filepath.Join(dir, "cli-batch")
	runCLI("init", edges, bin, "", nosync, "--db", bb, "init")
	runCLI("batch", edges, bin, jsonl, nosync, "--db", bb, "batch", "--bulk", "--scope", "repo", "--run", "bench")
	openSpace(bb, edges)
	same(bb)

	// In process, for the profile.
	prof := func(p string) func() {
		if profile == "" || phase != p {
			return func() {}
		}
		f, err := os.Create(profile)
		check(err)
		check(pprof.StartCPUProfile(f))
		return func() { pprof.StopCPUProfile(); f.Close() }
	}
	// As the CLI opens a store for writing (cli.options): secrets scanned.
	opts := lmdbstore.Options{NoSync: nosync, Redactor: secretscan.Lazy{}}
	sf, err := snapshot.Open(snap)
	check(err)
	st, err = lmdbstore.Init(filepath.Join(dir, "inproc-import"), opts)
	check(err)
	stop := prof("import")
	c0, t0 := cpu(), time.Now()
	_, err = storesnap.Import(sf, st, storesnap.ImportOptions{Verify: sf.Verify})
	wall, cpuUsed := time.Since(t0), cpu()-c0
	stop()
	check(err)
	check(st.Close())
	check(sf.Close())
	report("import (in process)", edges, wall, cpuUsed, "storesnap.Import")

	st, err = lmdbstore.Init(filepath.Join(dir, "inproc-batch"), opts)
	check(err)
	in, err := os.Open(jsonl)
	check(err)
	stop = prof("batch")
	c0, t0 = cpu(), time.Now()
	_, _, err = ops.BulkBatch(st, lmdbstore.WriteMeta{Scope: "repo", RunID: "bench"}, in)
	wall, cpuUsed = time.Since(t0), cpu()-c0
	stop()
	check(err)
	in.Close()
	check(st.Close())
	report("batch --bulk (in process)", edges, wall, cpuUsed, "ops.BulkBatch (lines parsed as they are loaded)")
	return want
}

func openSpace(path string, edges int) {
	st, err := lmdbstore.Open(path, lmdbstore.Options{ReadOnly: true})
	check(err)
	space(st, edges)
	check(st.Close())
}
