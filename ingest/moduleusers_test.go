package ingest

import (
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// modulesFixture is a tree of four modules, checked in this order: the
// root (which no module requires), app and tool (which both import lib
// through a replace) and lib, checked between them.
var modulesFixture = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.22\n",
	"m.go":   "package m\n\nfunc M() { N() }\n\nfunc N() {}\n",
	"app/go.mod": "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\n" +
		"replace example.com/lib => ../lib\n",
	"app/app.go":      "package app\n\nimport \"example.com/lib\"\n\nfunc Run() { lib.Do() }\n",
	"lib/go.mod":      "module example.com/lib\n\ngo 1.22\n",
	"lib/lib.go":      "package lib\n\nfunc Do() { helper() }\n\nfunc helper() {}\n",
	"lib/lib_test.go": "package lib\n\nimport \"testing\"\n\nfunc TestDo(t *testing.T) { Do() }\n",
	"tool/go.mod": "module example.com/tool\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\n" +
		"replace example.com/lib => ../lib\n",
	"tool/tool.go": "package tool\n\nimport \"example.com/lib\"\n\nfunc Main() { lib.Do() }\n",
}

func walkGo(t *testing.T, dir string) *tree {
	t.Helper()
	tr, err := walkTree(dir, WalkOptions{}, func(name string) bool { return strings.HasSuffix(name, ".go") }, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestNeededUntil: a module's packages are needed until the last module
// whose go.mod requires or replaces it is checked, or its own check when
// none after it does; by every module in a workspace (unless GOWORK=off),
// and the standard library always.
func TestNeededUntil(t *testing.T) {
	dir := writeTree(t, modulesFixture)
	tr := walkGo(t, dir)
	dirs := func() []string {
		var out []string
		for _, m := range tr.Modules {
			out = append(out, m.Dir)
		}
		return out
	}
	if diff := cmp.Diff([]string{".", "app", "lib", "tool"}, dirs()); diff != "" {
		t.Fatalf("modules in check order (-want +got):\n%s", diff)
	}
	plain := map[string]int{".": 0, "app": 1, "lib": 3, "tool": 3}
	if diff := cmp.Diff(plain, neededUntil(tr, nil)); diff != "" {
		t.Errorf("needed until (-want +got):\n%s", diff)
	}
	std := *tr
	std.Modules = slices.Clone(tr.Modules)
	std.Modules[0].Path = "std"
	if got := neededUntil(&std, nil)["."]; got != 4 {
		t.Errorf("std needed until %d, want 4 (all)", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte("go 1.22\n\nuse (\n\t.\n\t./app\n\t./lib\n\t./tool\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := map[string]int{".": 4, "app": 4, "lib": 4, "tool": 4}
	if diff := cmp.Diff(all, neededUntil(tr, nil)); diff != "" {
		t.Errorf("with a go.work, needed until (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(plain, neededUntil(tr, []string{"GOWORK=/x/go.work", "GOWORK=off"})); diff != "" {
		t.Errorf("with a go.work and GOWORK=off, needed until (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all, neededUntil(tr, []string{"GOWORK=" + filepath.Join(dir, "go.work")})); diff != "" {
		t.Errorf("with GOWORK set, needed until (-want +got):\n%s", diff)
	}
	bad := *tr
	bad.ModFiles = []*srcFile{{Rel: "go.mod", Content: []byte("module example.com/m\nrequire (\n")}}
	if got := neededUntil(&bad, nil)["app"]; got != 4 {
		t.Errorf("a go.mod that does not parse: app needed until %d, want 4 (all)", got)
	}
}

// TestReleasedModulesSameGraph: releasing each module's packages once no
// later module may import them (the default), keeping every package to
// the end, and releasing every module as soon as it is checked (wrong for
// lib, which tool imports after it: tool's check checks lib's package
// again) give the same graph. The default release leaves no package and
// no file of a released module in the checker's state.
func TestReleasedModulesSameGraph(t *testing.T) {
	dir := writeTree(t, modulesFixture)
	extract := func(need map[string]int, afterApp func(x *extractor)) *Graph {
		tr := walkGo(t, dir)
		x := newExtractor(tr, GoOptions{Offline: true})
		x.neededUntil = need
		for _, m := range tr.Modules {
			if err := x.loadTyped(m); err != nil {
				t.Fatalf("%s: %v", m.Path, err)
			}
			if m.Dir == "app" && afterApp != nil {
				afterApp(x)
			}
		}
		x.checked, x.parseCache, x.ifacesOf = nil, nil, nil
		x.extractSyntax(nil)
		x.finish()
		return x.g
	}
	inTreeFiles := func(x *extractor) []string {
		var out []string
		x.typedFset.Iterate(func(f *token.File) bool {
			if strings.HasPrefix(f.Name(), x.t.Root) {
				rel, _ := filepath.Rel(x.t.Root, f.Name())
				out = append(out, filepath.ToSlash(rel))
			}
			return true
		})
		slices.Sort(out)
		return out
	}
	keep := extract(map[string]int{".": 4, "app": 4, "lib": 4, "tool": 4}, func(x *extractor) {
		if diff := cmp.Diff([]string{"app/app.go", "lib/lib.go", "m.go"}, inTreeFiles(x)); diff != "" {
			t.Errorf("kept: files of the tree after app (-want +got):\n%s", diff)
		}
	})
	released := extract(nil, func(x *extractor) {
		for _, p := range []string{"example.com/m", "example.com/app"} {
			if x.checked[p] != nil || x.seenUnits[p] {
				t.Errorf("released: %s still held after app", p)
			}
		}
		if x.checked["example.com/lib"] == nil {
			t.Error("released: example.com/lib, which tool imports, not held after app")
		}
		if diff := cmp.Diff([]string{"lib/lib.go"}, inTreeFiles(x)); diff != "" {
			t.Errorf("released: files of the tree after app (-want +got):\n%s", diff)
		}
	})
	early := extract(map[string]int{".": 0, "app": 1, "lib": 1, "tool": 3}, nil)
	want := nodesAndEdges(keep)
	if !slices.Contains(want, "edge sym:example.com/tool.Main calls sym:example.com/lib.Do") {
		t.Fatalf("tool's call into lib not resolved: %v", want)
	}
	for name, g := range map[string]*Graph{"released": released, "released early": early} {
		if diff := cmp.Diff(want, nodesAndEdges(g)); diff != "" {
			t.Errorf("%s: graph differs from the one kept to the end (-kept +%s):\n%s", name, name, diff)
		}
	}
}

// nodesAndEdges lists g's nodes (key, type, payload) and edges, sorted.
func nodesAndEdges(g *Graph) []string {
	var out []string
	for _, n := range g.Nodes() {
		out = append(out, "node "+n.Key+" "+n.Type+" "+string(n.Payload))
	}
	for _, e := range g.Edges() {
		out = append(out, "edge "+e.Src+" "+e.Rel+" "+e.Dst)
	}
	slices.Sort(out)
	return out
}
