package ingest

import (
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testsEdgeSet is the graph's tests edges, as "src -> dst" lines, sorted.
func testsEdgeSet(g *Graph) []string {
	var out []string
	for _, e := range g.Edges() {
		if e.Rel == RelTests {
			out = append(out, e.Src+" -> "+e.Dst)
		}
	}
	slices.Sort(out)
	return out
}

// TestTestsEdgesWhateverMergeOrder: a test's call gets the same tests
// edges whether the package under test was merged before the test (merge
// adds them at once) or after it (finish adds them), and none when the
// target is declared in a test file or never at all.
func TestTestsEdgesWhateverMergeOrder(t *testing.T) {
	const ip = "example.com/m/p"
	sym := func(key, file string) symbolNode {
		return symbolNode{node: Node{Key: key, Type: TypeSymbol}, file: file}
	}
	pkg := func() *fragment {
		fr := newFragment()
		fr.nodes = []Node{{Key: FileKey("p/f.go"), Type: TypeFile}, {Key: FileKey("p/h_test.go"), Type: TypeFile}}
		fr.symbols = []symbolNode{sym(SymbolKey(ip, "F"), "p/f.go"), sym(SymbolKey(ip, "helper"), "p/h_test.go")}
		return fr
	}
	test := func() *fragment {
		fr := newFragment()
		fn := SymbolKey(ip+"_test", "TestF")
		fr.nodes = []Node{{Key: FileKey("p/x_test.go"), Type: TypeFile}}
		fr.symbols = []symbolNode{sym(fn, "p/x_test.go")}
		for _, target := range []string{SymbolKey(ip, "F"), SymbolKey(ip, "helper"), SymbolKey(ip, "Gone")} {
			fr.tests = append(fr.tests, testEdge{file: "p/x_test.go", fn: fn, target: target, pkg: ip})
		}
		return fr
	}
	want := []string{
		"file:p/x_test.go -> file:p/f.go",
		"sym:example.com/m/p_test.TestF -> sym:example.com/m/p.F",
	}
	for _, order := range []string{"package first", "test first"} {
		x := newExtractor(&tree{}, GoOptions{})
		frs := []*fragment{pkg(), test()}
		if order == "test first" {
			slices.Reverse(frs)
		}
		for _, fr := range frs {
			x.merge(fr)
		}
		if left := map[bool]int{true: 3, false: 1}[order == "test first"]; len(x.tests[ip]) != left || len(x.tests) != 1 {
			t.Errorf("%s: %d calls left for finish (%d packages), want %d of %s", order, len(x.tests[ip]), len(x.tests), left, ip)
		}
		x.finish()
		if diff := cmp.Diff(want, testsEdgeSet(x.g)); diff != "" {
			t.Errorf("%s: tests edges (-want +got):\n%s", order, diff)
		}
	}
}

// TestTestsEdgesFollowCalls: the tests edges of a tree are what its calls
// and defines edges say they must be. A test function (TestX, BenchmarkX,
// FuzzX, ExampleX of a _test.go file) calling a symbol of the package under
// test (its own, or the one its external test package tests) that only a
// non-test file defines tests that symbol, and the test's file tests that
// file; a test file also tests the file its name is made from (x_test.go,
// x.go). Nothing else is a tests edge.
func TestTestsEdgesFollowCalls(t *testing.T) {
	multi := multiPackageTree(t)
	for _, syntaxOnly := range []bool{false, true} {
		res, err := ExtractGo(multi, GoOptions{SyntaxOnly: syntaxOnly})
		if err != nil {
			t.Fatal(err)
		}
		g := res.Graph
		definedIn := map[string][]string{}
		files := map[string]bool{}
		for _, e := range g.Edges() {
			if e.Rel == RelDefines && strings.HasPrefix(e.Src, "file:") {
				definedIn[e.Dst] = append(definedIn[e.Dst], strings.TrimPrefix(e.Src, "file:"))
			}
		}
		g.EachNode(func(n Node) {
			if rel, ok := strings.CutPrefix(n.Key, "file:"); ok {
				files[rel] = true
			}
		})
		pkgOf := func(key, name string) string {
			return strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(key, "sym:"), "."+name), "_test")
		}
		want := map[string]bool{}
		for _, e := range g.Edges() {
			if e.Rel != RelCalls || len(definedIn[e.Src]) != 1 || len(definedIn[e.Dst]) != 1 {
				continue
			}
			src, dst := definedIn[e.Src][0], definedIn[e.Dst][0]
			name := e.Src[strings.LastIndex(e.Src, ".")+1:]
			if !strings.HasSuffix(src, "_test.go") || strings.HasSuffix(dst, "_test.go") || !isTestFuncName(name) ||
				strings.Count(strings.TrimPrefix(e.Src, "sym:"+pkgOf(e.Src, name)), ".") != 1 {
				continue // not a test function's call of non-test code
			}
			if !strings.HasPrefix(e.Dst, "sym:"+pkgOf(e.Src, name)+".") || path.Dir(src) != path.Dir(dst) {
				continue // not the package under test
			}
			want[e.Src+" -> "+e.Dst] = true
			want["file:"+src+" -> file:"+dst] = true
		}
		for rel := range files {
			if base, ok := strings.CutSuffix(rel, "_test.go"); ok && files[base+".go"] {
				want["file:"+rel+" -> file:"+base+".go"] = true
			}
		}
		var wantList []string
		for e := range want {
			wantList = append(wantList, e)
		}
		slices.Sort(wantList)
		got := testsEdgeSet(g)
		if len(got) < 10 {
			t.Fatalf("syntax only %v: %d tests edges in a tree of three tested packages", syntaxOnly, len(got))
		}
		if diff := cmp.Diff(wantList, got); diff != "" {
			t.Errorf("syntax only %v: tests edges (-from calls +extracted):\n%s", syntaxOnly, diff)
		}
	}
}
