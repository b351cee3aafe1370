package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/storesnap"
)

// copyTree copies testdata/ingest/<name> into a fresh directory.
func copyTree(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(testdataDir, name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func newStore(t *testing.T) *lmdbstore.Store {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ingestGo(t *testing.T, s *lmdbstore.Store, dir string, meta lmdbstore.WriteMeta) WriteStats {
	t.Helper()
	res, err := ExtractGo(dir, GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := WriteGo(s, res.Graph, meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// diffSince renders the operations after rev, one per line.
func diffSince(t *testing.T, s *lmdbstore.Store, rev lmdbstore.Revision) []string {
	t.Helper()
	var out []string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		return r.DiffSince(lmdbstore.AtRevision(rev), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			var line string
			switch op.Kind {
			case lmdbstore.OpPutNode, lmdbstore.OpDelNode:
				line = fmt.Sprintf("%s %s", op.Kind, op.NodeKey)
			case lmdbstore.OpPutEdge, lmdbstore.OpDelEdge:
				line = fmt.Sprintf("%s %s %s %s", op.Kind, op.Src, op.Rel, op.Dst)
			default:
				line = op.Kind.String()
			}
			out = append(out, fmt.Sprintf("r%d %s run=%s task=%s", op.Rev, line, op.RunID, op.TaskID))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storeGraph renders the store's live nodes and edges like renderGraph.
func storeGraph(t *testing.T, s *lmdbstore.Store) *Graph {
	t.Helper()
	g := NewGraph()
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		err := r.ScanNodes(lmdbstore.At{}, func(n lmdbstore.Node) error {
			g.AddNode(Node{Key: n.Key, Type: n.Type, Payload: append([]byte(nil), n.Payload...)})
			return nil
		})
		if err != nil {
			return err
		}
		return r.ScanEdges(lmdbstore.At{}, func(e lmdbstore.Edge) error {
			src, _ := r.KeyOf(e.Src)
			dst, _ := r.KeyOf(e.Dst)
			rel, err := r.RelationByID(e.Rel)
			if err != nil {
				return err
			}
			g.AddEdge(Edge{Src: src, Rel: rel.Name, Dst: dst, Weight: e.Weight})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestWriteGoIncremental(t *testing.T) {
	dir := copyTree(t, "basic")
	s := newStore(t)

	first := ingestGo(t, s, dir, lmdbstore.WriteMeta{RunID: "r1", TaskID: "t1"})
	if first.Commit.Rev != 1 || first.NodesDeleted != 0 || first.EdgesDeleted != 0 {
		t.Fatalf("first ingest: %+v", first)
	}
	res, err := ExtractGo(dir, GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(renderGraph(res.Graph), renderGraph(storeGraph(t, s))); diff != "" {
		t.Fatalf("store differs from the extracted graph (-want +got):\n%s", diff)
	}

	// Unchanged tree: nothing written, with or without the tree-hash check.
	if again := ingestGo(t, s, dir, lmdbstore.WriteMeta{RunID: "r2"}); again.Commit.Rev != 0 {
		t.Errorf("unchanged tree wrote revision %d: %+v", again.Commit.Rev, again)
	}
	hash, err := StoredTreeHash(s)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ExtractGo(dir, GoOptions{SkipIfTreeHash: hash}); err != nil || !res.Unchanged || res.Graph != nil {
		t.Errorf("ExtractGo with the stored tree hash: unchanged %v, err %v", res != nil && res.Unchanged, err)
	}

	// Drop the second init, add a function at the end of the file.
	path := filepath.Join(dir, "shapes", "shape.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "func init() {}\n", "// Perimeter is 4 sides.\nfunc Perimeter(s Square) float64 { return 4 * s.Side }\n", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	second := ingestGo(t, s, dir, lmdbstore.WriteMeta{RunID: "r3", TaskID: "t3"})
	if second.Commit.Rev != 2 {
		t.Fatalf("second ingest: %+v", second)
	}
	want := []string{
		"r2 del_edge file:shapes/shape.go contains sym:example.com/basic/shapes.init@shape.go#2 run=r3 task=t3",
		"r2 del_edge file:shapes/shape.go defines sym:example.com/basic/shapes.init@shape.go#2 run=r3 task=t3",
		"r2 del_node sym:example.com/basic/shapes.init@shape.go#2 run=r3 task=t3",
		"r2 put_node file:shapes/shape.go run=r3 task=t3",
		"r2 put_node ingest:go run=r3 task=t3",
		"r2 put_node sym:example.com/basic/shapes.Perimeter run=r3 task=t3",
		"r2 put_edge file:shapes/shape.go contains sym:example.com/basic/shapes.Perimeter run=r3 task=t3",
		"r2 put_edge file:shapes/shape.go defines sym:example.com/basic/shapes.Perimeter run=r3 task=t3",
		"r2 put_edge sym:example.com/basic/shapes.Perimeter references sym:example.com/basic/shapes.Square run=r3 task=t3",
	}
	if diff := cmp.Diff(want, diffSince(t, s, 1)); diff != "" {
		t.Errorf("diff-since 1 (-want +got):\n%s", diff)
	}
	res, err = ExtractGo(dir, GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(renderGraph(res.Graph), renderGraph(storeGraph(t, s))); diff != "" {
		t.Fatalf("store differs from the re-extracted graph (-want +got):\n%s", diff)
	}
}

// TestEnsureRelationsRegisters: on a fresh store the relations ingest adds
// get the next ids (SPEC §1: from 11) with their §1 role and the
// bidirectional flag, and ensureRelations returns them as registered.
func TestEnsureRelationsRegisters(t *testing.T) {
	s := newStore(t)
	names := append(append([]string{}, GoRelations...), RelCoChanged)
	var got map[string]lmdbstore.Relation
	_, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		var err error
		got, err = ensureRelations(tx, names)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	type rel struct {
		ID   lmdbstore.RelID
		Role string
		Bidi bool
	}
	want := map[string]rel{
		"defines": {1, "structure", false}, "references": {2, "usage", false}, "calls": {3, "usage", false},
		"imports": {4, "usage", false}, "tests": {5, "usage", false}, "implements": {6, "usage", false},
		"contains": {11, "structure", true}, "co_changed": {12, "history", true},
	}
	have := map[string]rel{}
	for name, r := range got {
		have[name] = rel{r.ID, r.Role.String(), r.Bidirectional}
	}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("ensureRelations (-want +got):\n%s", d)
	}
}

// TestWriteGoBulkMatchesOrdinary: the first ingest into an empty store
// goes through the bulk path and gives the store the ordinary write path
// gives: the same operations in one revision, the same logical snapshot.
func TestWriteGoBulkMatchesOrdinary(t *testing.T) {
	res, err := ExtractGo(copyTree(t, "basic"), GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bulkMatchesOrdinary(t, res.Graph)
}

// TestWriteGoBulkMatchesOrdinaryMultiPackage: the same over a tree of
// several packages and modules (this repository's adjacency, csr and
// roles packages, extracted), and over a hand-built graph whose edges
// name keys no node has (registered by the edges alone), keys that sort
// differently once redacted, weights 0 (the relation's default) and
// explicit, so that the bulk's compact edge order is checked against
// Graph.Edges' order.
func TestWriteGoBulkMatchesOrdinaryMultiPackage(t *testing.T) {
	res, err := ExtractGo(multiPackageTree(t), GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Packages < 3 || res.Graph.NumEdges() < 100 {
		t.Fatalf("extracted %d packages, %d edges: want a multi-package graph", res.Packages, res.Graph.NumEdges())
	}
	bulkMatchesOrdinary(t, res.Graph)

	g := NewGraph()
	for _, k := range []string{"sym:b", "sym:a", "file:z.go", "file:a.go", "pkg:m"} {
		g.AddNode(Node{Key: k, Type: TypeSymbol, Payload: []byte(`{"name":"` + k + `"}`)})
	}
	g.AddEdge(Edge{Src: "sym:b", Rel: RelCalls, Dst: "sym:zz-dangling"})
	g.AddEdge(Edge{Src: "sym:b", Rel: RelCalls, Dst: "sym:a"})
	g.AddEdge(Edge{Src: "sym:aa-dangling", Rel: RelCalls, Dst: "sym:b", Weight: 0.25})
	g.AddEdge(Edge{Src: "pkg:m", Rel: RelContains, Dst: "file:z.go"})
	g.AddEdge(Edge{Src: "pkg:m", Rel: RelContains, Dst: "file:a.go", Weight: 2})
	g.AddEdge(Edge{Src: "pkg:m", Rel: RelCalls, Dst: "sym:a"})
	g.AddEdge(Edge{Src: "file:a.go", Rel: RelContains, Dst: "sym:a"})
	// A key holding a secret: the bulk holds it redacted, the order is
	// the raw key's.
	secret := "sym:AKIAIOSFODNN7EXAMPLE"
	g.AddEdge(Edge{Src: "pkg:m", Rel: RelCalls, Dst: secret})
	g.AddEdge(Edge{Src: secret, Rel: RelCalls, Dst: "sym:a"})
	bulkMatchesOrdinary(t, g)
}

// bulkMatchesOrdinary writes g into an empty store through WriteGo (the
// bulk path) and through WriteCodeTx (the ordinary path) and compares
// the two stores: operations in order, logical snapshot hash, Check.
func bulkMatchesOrdinary(t *testing.T, g *Graph) {
	t.Helper()
	meta := lmdbstore.WriteMeta{RunID: "r1", TaskID: "t1"}
	bulk, ordinary := newStore(t), newStore(t)
	st1, err := WriteGo(bulk, g, meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	var st2 WriteStats
	if _, err := ordinary.Update(meta, func(tx *lmdbstore.WriteTxn) error {
		st2, err = WriteCodeTx(tx, g, []string{LangGo}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if st1.Commit.Rev != 1 || st1.NodesPut != st2.NodesPut || st1.EdgesPut != st2.EdgesPut || len(st1.Created) != len(st2.Created) {
		t.Errorf("bulk write %+v, ordinary %+v", st1, st2)
	}
	if diff := cmp.Diff(diffSince(t, ordinary, 0), diffSince(t, bulk, 0)); diff != "" {
		t.Errorf("operations differ (-ordinary +bulk):\n%s", diff)
	}
	if logicalHash(t, bulk) != logicalHash(t, ordinary) {
		t.Errorf("logical snapshot hashes differ")
	}
	if rep, err := bulk.Check(); err != nil || len(rep.Problems) > 0 {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// logicalHash is the logical snapshot hash of s's latest state.
func logicalHash(t *testing.T, s *lmdbstore.Store) [32]byte {
	t.Helper()
	h, err := storesnap.LogicalHash(s, lmdbstore.At{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// multiPackageTree is a module of this repository's adjacency, csr and
// roles packages (with their tests, and calls into the standard library).
func multiPackageTree(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, pkg := range []string{"adjacency", "csr", "roles"} {
		if err := os.CopyFS(filepath.Join(dst, pkg), os.DirFS(filepath.Join("..", pkg))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dst, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
