package ingest

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/ingest")

// testdataDir is the repository's testdata/ingest.
const testdataDir = "../testdata/ingest"

// renderGraph prints a graph one node or edge per line, in order. The
// ingest:go node's toolchain and tree hash are masked: they depend on the
// machine.
func renderGraph(g *Graph) string {
	// Written field by field, not with fmt: the standard library's graph
	// renders to 94 MB, and fmt took most of the time.
	var b strings.Builder
	b.Grow(64 * (g.NumNodes() + g.NumEdges()))
	line := func(fields ...string) {
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f)
		}
		b.WriteByte('\n')
	}
	for _, n := range g.Nodes() {
		payload := string(n.Payload)
		if n.Key == IngestGoKey {
			var p IngestPayload
			if err := json.Unmarshal(n.Payload, &p); err == nil {
				p.GoVersion, p.TreeHash = "*", "*"
				payload = string(mustJSON(p))
			}
		}
		line("node", n.Key, n.Type, payload)
	}
	for _, e := range g.Edges() {
		line("edge", e.Src, e.Rel, e.Dst, strconv.FormatFloat(float64(e.Weight), 'g', -1, 32)) // fmt's %g
	}
	return b.String()
}

// checkGolden compares got with testdata/ingest/name, or rewrites it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir, name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got; -rewrite to accept):\n%s", name, diff)
	}
}

func TestExtractGoGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		opts   GoOptions
		mode   string
	}{
		{"basic.typed.golden", GoOptions{}, ModeTyped},
		{"basic.syntax.golden", GoOptions{SyntaxOnly: true}, ModeSyntax},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			res, err := ExtractGo(filepath.Join(testdataDir, "basic"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != tc.mode || len(res.LoadErrors) != 0 {
				t.Errorf("mode %q, load errors %q; want mode %q and none", res.Mode, res.LoadErrors, tc.mode)
			}
			checkGolden(t, tc.golden, renderGraph(res.Graph))
		})
	}
}

// A module the go command cannot load (a requirement missing from the
// module cache, and --offline) falls back to syntax-only extraction, and
// the result names the package, why, and the command that fixes it.
func TestExtractGoFallsBackToSyntax(t *testing.T) {
	dir := filepath.Join(testdataDir, "broken")
	res, err := ExtractGo(dir, GoOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != ModeSyntax || res.TypedPackages != 0 || res.SyntaxPackages != 1 {
		t.Errorf("mode %q, %d typed, %d syntax packages; want syntax, 0, 1", res.Mode, res.TypedPackages, res.SyntaxPackages)
	}
	if len(res.Fallbacks) != 1 {
		t.Fatalf("fallbacks %+v; want one, for example.com/broken/app", res.Fallbacks)
	}
	fb := res.Fallbacks[0]
	if fb.Package != "example.com/broken/app" || !strings.HasPrefix(fb.Reason, "example.invalid/missing: ") ||
		fb.Fix != "go -C "+dir+" mod download" {
		t.Errorf("fallback %+v; want example.com/broken/app, because of example.invalid/missing, fixed by go -C %s mod download", fb, dir)
	}
	checkGolden(t, "broken.golden", renderGraph(res.Graph))
}
