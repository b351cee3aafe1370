package ingest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsTestFuncName(t *testing.T) {
	for name, want := range map[string]bool{
		"Test": true, "TestX": true, "Test_x": true, "Testing": false, "Benchmark": true, "BenchmarkFoo": true,
		"Fuzz": true, "FuzzParse": true, "Example": true, "ExampleServer_Serve": true, "Examples": false, "testX": false,
	} {
		if got := isTestFuncName(name); got != want {
			t.Errorf("isTestFuncName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestNeverBuilt(t *testing.T) {
	for src, want := range map[string]bool{
		"//go:build ignore\n\npackage main\n":                  true,
		"// Comment.\n\n//go:build ignore && linux\npackage x": true,
		"//go:build linux\n\npackage x\n":                      false,
		"//go:build !linux\n\npackage x\n":                     false,
		"package x\n\n//go:build ignore\n":                     false,
		"//go:build (\n\npackage x\n":                          false,
	} {
		if got := neverBuilt([]byte(src)); got != want {
			t.Errorf("neverBuilt(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestGuessPackageName(t *testing.T) {
	for path, want := range map[string]string{
		"fmt": "fmt", "github.com/urfave/cli/v2": "cli", "gopkg.in/yaml.v3": "yaml",
		"github.com/mattn/go-isatty": "isatty", "github.com/x/y-go": "y", "example.com/a.b": "a_b",
	} {
		if got := guessPackageName(path); got != want {
			t.Errorf("guessPackageName(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestModulePathAndImportPaths(t *testing.T) {
	if got := modulePath([]byte("// c\nmodule \"example.com/m\" // x\n\ngo 1.22\n")); got != "example.com/m" {
		t.Errorf("modulePath = %q", got)
	}
	tr := &tree{Modules: []module{{Dir: ".", Path: "std"}, {Dir: "cmd", Path: "cmd"}, {Dir: "x/y", Path: "example.com/y"}}}
	for rel, want := range map[string]string{
		".": "std", "net/http": "net/http", "cmd": "cmd", "cmd/go/internal": "cmd/go/internal",
		"cmdline": "cmdline", "x/y": "example.com/y", "x/y/z": "example.com/y/z", "x/yz": "x/yz",
	} {
		if got := tr.importPathOf(rel); got != want {
			t.Errorf("importPathOf(%q) = %q, want %q", rel, got, want)
		}
	}
}

// Broken files never stop an ingest: they become file nodes that say why.
func TestExtractGoBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"go.mod":        "module example.com/p\n\ngo 1.22\n",
		"good.go":       "package p\n\nfunc Good() {}\n",
		"bad.go":        "package p\n\nfunc Bad( {\n",
		"nopkg.go":      "hello\n",
		"sub/empty.go":  "",
		"sub/binary.go": "\x00\x01\x02",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, syntaxOnly := range []bool{false, true} {
		res, err := ExtractGo(dir, GoOptions{SyntaxOnly: syntaxOnly})
		if err != nil {
			t.Fatal(err)
		}
		errs := map[string]bool{}
		for _, n := range res.Graph.Nodes() {
			if n.Type != TypeFile {
				continue
			}
			var p FilePayload
			if err := json.Unmarshal(n.Payload, &p); err != nil {
				t.Fatal(err)
			}
			errs[p.Path] = p.ParseError != ""
			// Payload paths are relative (SPEC §9): the error names the file
			// by its relative path, never the checkout's absolute path.
			if abs, _ := filepath.Abs(dir); p.ParseError != "" && (strings.Contains(p.ParseError, abs) || strings.Contains(p.ParseError, dir)) {
				t.Errorf("syntax-only %v: %s parse_error names an absolute path: %q", syntaxOnly, p.Path, p.ParseError)
			}
		}
		want := map[string]bool{"good.go": false, "bad.go": true, "nopkg.go": true, "sub/empty.go": true, "sub/binary.go": true}
		if diff := cmp.Diff(want, errs); diff != "" {
			t.Errorf("syntax-only %v: files with parse errors (-want +got):\n%s", syntaxOnly, diff)
		}
		if !res.Graph.HasNode("sym:example.com/p.Good") {
			t.Errorf("syntax-only %v: sym:example.com/p.Good missing", syntaxOnly)
		}
	}
}

// The same tree gives the same graph, byte for byte.
func TestExtractGoDeterministic(t *testing.T) {
	dir := filepath.Join(testdataDir, "basic")
	a, err := ExtractGo(dir, GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ExtractGo(dir, GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(renderGraph(a.Graph), renderGraph(b.Graph)); diff != "" {
		t.Errorf("two extractions differ:\n%s", diff)
	}
}
