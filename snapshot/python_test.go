package snapshot_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// goListing prints what testdata/snapshot/read_snapshot.py prints, through
// the Go reader.
func goListing(t *testing.T, g *csr.Graph) string {
	var sb strings.Builder
	h := g.File().Header()
	fmt.Fprintf(&sb, "format %d.%d flags %d nodes %d edges %d\n", h.Version.Major(), h.Version.Minor(), h.Flags, g.NumNodes(), g.NumEdges())
	for i := uint32(0); i < uint32(g.NumNodes()); i++ {
		n, _ := g.Node(i)
		enc, data, _ := g.File().PayloadEntry(i)
		payload := "-"
		switch {
		case len(data) > 0 && enc == snapshot.PayloadZstd:
			payload = fmt.Sprintf("(zstd %d bytes)", len(data))
		case len(data) > 0:
			payload = string(data)
		}
		missing := 0
		if n.Missing {
			missing = 1
		}
		fmt.Fprintf(&sb, "node %d %s type=%s missing=%d payload=%s\n", i, n.Key, n.Type, missing, payload)
		tg, rels, ws, _ := g.Out(i)
		for k := range tg {
			r, _ := g.Relation(rels[k])
			key, _ := g.Key(tg[k])
			fmt.Fprintf(&sb, "  out %s %s %s\n", r.Name, key, strconv.FormatFloat(float64(ws[k]), 'g', 6, 32))
		}
		srcs, rels, ws, _ := g.In(i)
		for k := range srcs {
			r, _ := g.Relation(rels[k])
			key, _ := g.Key(srcs[k])
			fmt.Fprintf(&sb, "  in %s %s %s\n", r.Name, key, strconv.FormatFloat(float64(ws[k]), 'g', 6, 32))
		}
	}
	return sb.String()
}

// TestPythonReaderAgrees runs the stdlib-only Python reader written from
// SPEC.md §7 over the golden file and a random graph, and compares its
// listing with the Go reader's (skipped without python3).
func TestPythonReaderAgrees(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	random := filepath.Join(t.TempDir(), "random.snap")
	st := randomState(rand.New(rand.NewPCG(31, 32)), 80, 300)
	if _, err := snapshot.WriteFile(random, st, snapshot.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(goldenDir, "tiny.snap"), random} {
		out, err := exec.Command(py, filepath.Join(goldenDir, "read_snapshot.py"), path).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, out)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		g, err := csr.FromBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := goListing(t, g); string(out) != want {
			t.Errorf("%s: the Python reader disagrees.\npython:\n%s\ngo:\n%s", path, out, want)
		}
	}
}
