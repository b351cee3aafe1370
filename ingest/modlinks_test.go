package ingest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/lmdbstore"
)

// aloneFixture is a tree of modules, most standing alone: the root's, p1
// to p3 (each a type-checked package with files for another platform that
// declare its symbols again and test it, read from syntax), and s
// (syntax-only packages resolving names in each other's declarations, a
// file that does not parse, one without a package clause). app and lib
// are linked: app requires lib (a replace to ../lib), and app's files for
// Windows, read from syntax, call into lib's packages, one of them read
// from syntax too, and a type of app's read from syntax implements an
// interface of lib's.
func aloneFixture() map[string]string {
	files := map[string]string{
		"go.mod":     "module example.com/root\n\ngo 1.22\n",
		"root.go":    "package root\n\nfunc Root() {}\n",
		"lib/go.mod": "module example.com/lib\n\ngo 1.22\n",
		"lib/x/x.go": "package x\n\ntype Closer interface{ Close() error }\n\ntype Conn struct{}\n\nfunc Dial() *Conn { return &Conn{} }\n\nfunc (c *Conn) Close() error { return nil }\n",
		"lib/w/w.go": "//go:build windows\n\npackage w\n\ntype Pipe struct{}\n\nfunc (p *Pipe) Close() error { return nil }\n\nfunc Open() *Pipe { return &Pipe{} }\n",
		"app/go.mod": "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n",
		"app/app.go": "package app\n\nimport \"example.com/lib/x\"\n\nfunc Run() { x.Dial().Close() }\n",
		"app/app_windows.go": "package app\n\nimport (\n\t\"example.com/lib/w\"\n\t\"example.com/lib/x\"\n)\n\n" +
			"type WinConn struct{}\n\nfunc (WinConn) Close() error { return nil }\n\nfunc RunWindows() { x.Dial().Close(); w.Open().Close() }\n",
	}
	for _, m := range []string{"p1", "p2", "p3"} {
		for name, src := range platformsFixture {
			if name == "go.mod" {
				src = "module example.com/" + m + "\n\ngo 1.22\n"
			}
			files[m+"/"+name] = strings.ReplaceAll(src, "example.com/p/", "example.com/"+m+"/")
		}
	}
	for name, src := range streamFixture {
		files["s/"+name] = src
	}
	return files
}

// TestModuleLinks: the walk says which modules stand alone from the
// imports of their files (tests' among them); a file whose imports follow
// a declaration links every module, and two modules with one module path
// are linked.
func TestModuleLinks(t *testing.T) {
	linkedDirs := func(files map[string]string) []string {
		tr := walkGo(t, writeTree(t, files))
		if tr.Links == nil {
			t.Fatal("no links for a tree of several modules")
		}
		var out []string
		for i, m := range tr.Modules {
			if !tr.Links.alone(i) {
				out = append(out, m.Dir)
			}
		}
		return out
	}
	files := aloneFixture()
	if diff := cmp.Diff([]string{"app", "lib"}, linkedDirs(files)); diff != "" {
		t.Errorf("linked modules (-want +got):\n%s", diff)
	}
	// A test of p1 imports p2: both are linked.
	withTest := maps.Clone(files)
	withTest["p1/use/use_test.go"] = "package use\n\nimport (\n\t\"testing\"\n\n\t\"example.com/p2/plat\"\n)\n\nfunc TestP2(t *testing.T) { plat.Common() }\n"
	if diff := cmp.Diff([]string{"app", "lib", "p1", "p2"}, linkedDirs(withTest)); diff != "" {
		t.Errorf("linked modules with a test importing another module (-want +got):\n%s", diff)
	}
	// An import after a declaration (a syntax error the full parse reads
	// past) links every module, the root's included.
	late := maps.Clone(files)
	late["p3/late/late.go"] = "package late\n\nfunc F() {}\n\nimport \"example.com/s/chain/a\"\n"
	if got := linkedDirs(late); len(got) != 7 {
		t.Errorf("linked modules with a late import: %v, want all 7", got)
	}
	// A file naming "import" in its body alone links nothing more.
	word := maps.Clone(files)
	word["p3/word/word.go"] = "package word\n\n// import \"example.com/s/chain/a\"\nconst S = \"import\"\n"
	if diff := cmp.Diff([]string{"app", "lib"}, linkedDirs(word)); diff != "" {
		t.Errorf("linked modules with the word import in a body (-want +got):\n%s", diff)
	}
	// Two modules with one module path share their packages' import
	// paths: linked, though neither imports the other.
	twice := maps.Clone(files)
	twice["q/go.mod"] = "module example.com/root\n\ngo 1.22\n"
	twice["q/q.go"] = "package root\n\nfunc Q() {}\n"
	if diff := cmp.Diff([]string{".", "app", "lib", "q"}, linkedDirs(twice)); diff != "" {
		t.Errorf("linked modules with a module path twice (-want +got):\n%s", diff)
	}
	// One module: no links to read.
	if tr := walkGo(t, writeTree(t, platformsFixture)); tr.Links != nil {
		t.Error("links read for a tree of one module")
	}
}

// TestModulesAloneSameGraph: extracting each module standing alone before
// the next one (and letting its tables go) gives the graph one pass over
// every module's files read from syntax gives, type-checked or not, and
// streamed into a store the same logical snapshot; after an alone module,
// no table, syntax type or file index of it is held, where the one pass
// holds the tables of every module.
func TestModulesAloneSameGraph(t *testing.T) {
	dir := writeTree(t, aloneFixture())
	for _, syntaxOnly := range []bool{false, true} {
		var tablesAfter [2][]string // by mode: the tables held once every module is done
		graphs := make([]*GoResult, 2)
		for mode, one := range []bool{true, false} {
			opts := GoOptions{SyntaxOnly: syntaxOnly, Offline: true, oneSyntaxPass: one}
			opts.afterModule = func(x *extractor, i int) {
				if x.alone(i) && (x.syntaxTypes.len() > 0 || len(x.declFile) > 0) {
					t.Errorf("syntax-only %t: after %s, %d syntax types and %d files by name held", syntaxOnly,
						x.t.Modules[i].Dir, x.syntaxTypes.len(), len(x.declFile))
				}
				if i == len(x.t.Modules)-1 {
					tablesAfter[mode] = sortedKeys(x.tables)
				}
			}
			res, err := ExtractGo(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			graphs[mode] = res
		}
		one, alone := renderGraph(graphs[0].Graph), renderGraph(graphs[1].Graph)
		if diff := cmp.Diff(one, alone); diff != "" {
			t.Errorf("syntax-only %t: graphs differ (-one pass +alone):\n%s", syntaxOnly, diff)
		}
		if graphs[0].Unresolved != graphs[1].Unresolved || graphs[0].Mode != graphs[1].Mode {
			t.Errorf("syntax-only %t: results differ: %+v, %+v", syntaxOnly, graphs[0], graphs[1])
		}
		// The linked modules' files read from syntax resolve names through
		// each other's tables, and the alone ones' through their own.
		for _, want := range []string{
			"sym:example.com/app.RunWindows calls sym:example.com/lib/x.Dial",
			"sym:example.com/app.RunWindows calls sym:example.com/lib/w.Pipe.Close",
			"sym:example.com/app.WinConn implements sym:example.com/lib/x.Closer",
			"sym:example.com/p2/plat.TestWindows calls sym:example.com/p2/plat.WindowsOnly",
			"sym:example.com/s/raft_test.TestRun tests sym:example.com/s/raft.Raft.Run",
		} {
			if !strings.Contains(alone, want) {
				t.Errorf("syntax-only %t: no %q", syntaxOnly, want)
			}
		}
		for _, k := range tablesAfter[1] {
			if !strings.HasPrefix(k, "example.com/app") && !strings.HasPrefix(k, "example.com/lib") {
				t.Errorf("syntax-only %t: table %s held after its module", syntaxOnly, k)
			}
		}
		if !syntaxOnly && !slices.Contains(tablesAfter[0], "example.com/p1/plat") {
			t.Errorf("syntax-only %t: the one pass holds %v before it starts, not p1's tables", syntaxOnly, tablesAfter[0])
		}
	}

	// Streamed into a store: the snapshot the ordinary write of the one
	// pass's graph leaves.
	want, err := ExtractGo(dir, GoOptions{Offline: true, oneSyntaxPass: true})
	if err != nil {
		t.Fatal(err)
	}
	meta := lmdbstore.WriteMeta{RunID: "r1", TaskID: "t1"}
	ordinary := newStore(t)
	if _, err := ordinary.Update(meta, func(tx *lmdbstore.WriteTxn) error {
		_, err := WriteCodeTx(tx, want.Graph, []string{LangGo}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	streamed := newStore(t)
	w, err := NewGoStream(streamed, meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractGo(dir, GoOptions{Offline: true, Stream: w}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if logicalHash(t, streamed) != logicalHash(t, ordinary) {
		t.Error("the streamed store of the modules extracted alone is not the one pass's")
	}
	if rep, err := streamed.Check(); err != nil || len(rep.Problems) > 0 {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// TestLateImport: an import keyword after a file's header is found wherever
// the parser would read one, and not in comments, strings or longer names.
func TestLateImport(t *testing.T) {
	for _, c := range []struct {
		rest string
		want bool
	}{
		{"\nfunc F() {}\n\nimport \"a\"\n", true},
		{"\nvar x = 1; import \"a\"\n", true},
		{"\nvar (x = 1)import(\"a\")\n", true},
		{"\n/* c */import \"a\"", true},
		{"\nfunc F() {}\n// import \"a\"\n", false},
		{"\nconst s = \"import\"\nconst r = `\nimport \"a\"\n`\n", false},
		{"\nfunc reimport() {}\nvar importer, imports int\n", false},
		{"", false},
	} {
		if got := lateImport([]byte(c.rest)); got != c.want {
			t.Errorf("lateImport(%q) = %t, want %t", c.rest, got, c.want)
		}
	}
}
