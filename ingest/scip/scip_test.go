package scip

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	scippb "github.com/sourcegraph/scip/bindings/go/scip"
)

func edgeList(g *ingest.Graph) []string {
	var out []string
	g.EachEdge(func(e ingest.Edge) { out = append(out, e.Src+" "+e.Rel+" "+e.Dst) })
	slices.Sort(out)
	return out
}

func nodeList(g *ingest.Graph) []string {
	var out []string
	g.EachNode(func(n ingest.Node) { out = append(out, n.Key) })
	slices.Sort(out)
	return out
}

func mustParse(t *testing.T, ix *scippb.Index) *Index {
	t.Helper()
	out, err := Parse("fixture", marshal(t, ix))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGraphGo(t *testing.T) {
	g := Graph(mustParse(t, goFixture()))
	const m = "sym:example.com/m."
	wantNodes := []string{"file:a.go", "file:b.go", "ingest:scip:scip-go", "pkg:fmt",
		m + "A", m + "B", m + "I", m + "I.M", m + "T", m + "T.M"}
	if d := cmp.Diff(wantNodes, nodeList(g)); d != "" {
		t.Errorf("nodes (-want +got):\n%s", d)
	}
	wantEdges := []string{
		"file:a.go contains " + m + "A", "file:a.go contains " + m + "T", "file:a.go contains " + m + "T.M",
		"file:a.go defines " + m + "A", "file:a.go defines " + m + "T", "file:a.go defines " + m + "T.M",
		"file:a.go imports pkg:fmt",
		"file:b.go contains " + m + "B", "file:b.go contains " + m + "I", "file:b.go contains " + m + "I.M",
		"file:b.go defines " + m + "B", "file:b.go defines " + m + "I", "file:b.go defines " + m + "I.M",
		m + "A calls " + m + "B",
		m + "B calls " + m + "T.M",
		m + "B references " + m + "T",
		m + "T implements " + m + "I",
		m + "T.M calls " + m + "A",
	}
	slices.Sort(wantEdges)
	if d := cmp.Diff(wantEdges, edgeList(g)); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
	n, _ := g.Node(m + "T.M")
	if want := `{"exported":true,"indexer":"scip-go","kind":"method","line_end":11,"line_start":11,"name":"M","package":"example.com/m","path":"a.go","recv":"T"}`; string(n.Payload) != want {
		t.Errorf("T.M payload %s, want %s", n.Payload, want)
	}
	n, _ = g.Node(m + "I")
	if want := `{"exported":true,"indexer":"scip-go","kind":"interface","line_end":8,"line_start":8,"name":"I","package":"example.com/m","path":"b.go"}`; string(n.Payload) != want {
		t.Errorf("I payload %s, want %s", n.Payload, want)
	}
}

func TestGraphPythonEnclosing(t *testing.T) {
	ix := mustParse(t, pyFixture())
	var callers []string
	for _, r := range ix.Refs {
		callers = append(callers, r.Caller)
	}
	if d := cmp.Diff([]string{pyPkg + "f().g().", pyPkg + "f().", ""}, callers); d != "" {
		t.Errorf("callers (-want +got):\n%s", d)
	}
	g := Graph(ix)
	want := []string{
		"file:p.py calls sym:py:p.h",
		"file:p.py contains sym:py:p.f", "file:p.py contains sym:py:p.f.g", "file:p.py contains sym:py:p.h",
		"file:p.py defines sym:py:p.f", "file:p.py defines sym:py:p.f.g", "file:p.py defines sym:py:p.h",
		"sym:py:p.f calls sym:py:p.h",
		"sym:py:p.f.g calls sym:py:p.h",
	}
	if d := cmp.Diff(want, edgeList(g)); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
	n, _ := g.Node("sym:py:p.f")
	if want := `{"indexer":"scip-python","kind":"func","line_end":5,"line_start":2,"name":"f","package":"p","path":"p.py"}`; string(n.Payload) != want {
		t.Errorf("f payload %s, want %s", n.Payload, want)
	}
}

func TestKeyOf(t *testing.T) {
	for _, tc := range []struct{ sym, lang, key string }{
		{"scip-go gomod github.com/spf13/pflag v1 `github.com/spf13/pflag`/FlagSet#Parse().", "go", "sym:github.com/spf13/pflag.FlagSet.Parse"},
		{"scip-go gomod github.com/spf13/pflag v1 `github.com/spf13/pflag`/", "go", "pkg:github.com/spf13/pflag"},
		{"scip-python python flask 1 `flask.app`/Flask#run().", "python", "sym:py:flask.app.Flask.run"},
		{"scip-typescript npm ky 1 source/core/`Ky.ts`/Ky#fetch().", "typescript", "sym:ts:source/core/Ky.ts#Ky.fetch"},
		{"scip-typescript npm ky 1 source/`index.js`/main().", "javascript", "sym:js:source/index.js#main"},
		{"scip-java maven g 1 com/x/Y#z().", "java", "sym:scip-java:com/x#Y.z"},
		{"scip-go gomod m v1 `m`/F().(x)", "go", ""},
	} {
		s, err := ParseSymbol(tc.sym)
		if err != nil {
			t.Fatal(err)
		}
		key, _, _ := keyOf(s, tc.lang)
		if key != tc.key {
			t.Errorf("keyOf(%s) = %q, want %q", tc.sym, key, tc.key)
		}
	}
}

func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := marshal(t, goFixture())
	var fe *FormatError
	for name, b := range map[string][]byte{
		"text":      []byte("this is not a SCIP index\n"),
		"zero":      {},
		"truncated": good[:len(good)/2],
		"badrange": marshal(t, &scippb.Index{Metadata: goFixture().Metadata, Documents: []*scippb.Document{{
			RelativePath: "a.go", Occurrences: []*scippb.Occurrence{{Range: []int32{1, 2}, Symbol: goPkg + "A()."}}}}}),
		"abspath": marshal(t, &scippb.Index{Metadata: goFixture().Metadata, Documents: []*scippb.Document{{RelativePath: "/etc/x.go"}}}),
	} {
		if _, err := Load(write(name, b)); !errors.As(err, &fe) {
			t.Errorf("%s: err %v, want a FormatError", name, err)
		}
	}
	if _, err := Load(write("empty", marshal(t, emptyFixture()))); !errors.Is(err, ErrEmptyIndex) {
		t.Errorf("empty index: err %v, want ErrEmptyIndex", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.scip")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: err %v", err)
	}
}

func openStore(t *testing.T) *lmdbstore.Store {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Re-importing writes nothing; a changed document rewrites only what
// changed in it; another indexer's share is left alone.
func TestImportIncremental(t *testing.T) {
	s := openStore(t)
	ixGo := writeIndex(t, goFixture())
	sum, _, err := Import(s, ixGo, lmdbstore.WriteMeta{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rev != 1 || sum.Nodes != 10 || sum.Edges != 18 || sum.NodesPut != 10 || sum.EdgesPut != 18 || sum.Symbols != 6 {
		t.Errorf("first import: %+v", sum)
	}
	if sum, _, err = Import(s, ixGo, lmdbstore.WriteMeta{}, nil); err != nil || sum.Rev != 0 || sum.NodesPut+sum.EdgesPut+sum.NodesDeleted+sum.EdgesDeleted != 0 {
		t.Errorf("re-import: %+v %v", sum, err)
	}
	if _, _, err := Import(s, writeIndex(t, pyFixture()), lmdbstore.WriteMeta{}, nil); err != nil {
		t.Fatal(err)
	}
	// b.go no longer calls T.M (nor mentions T).
	changed := goFixture()
	b := changed.Documents[1]
	b.Occurrences = slices.Delete(b.Occurrences, 2, 4)
	sum, _, err = Import(s, writeIndex(t, changed), lmdbstore.WriteMeta{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// file:b.go (its hash) is the only node written; two edges go.
	if sum.NodesPut != 1 || sum.NodesDeleted != 0 || sum.EdgesPut != 0 || sum.EdgesDeleted != 2 {
		t.Errorf("changed b.go: %+v", sum)
	}
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		for _, key := range []string{"sym:py:p.h", "file:p.py", "sym:example.com/m.T.M"} {
			if _, err := r.GetNode(key, lmdbstore.At{}); err != nil {
				t.Errorf("%s: %v", key, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A bad index changes nothing.
	if _, _, err := Import(s, writeIndex(t, emptyFixture()), lmdbstore.WriteMeta{}, nil); !errors.Is(err, ErrEmptyIndex) {
		t.Errorf("empty: %v", err)
	}
}
