package ingest

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkExtractFileTyped is the per-file extraction of one
// type-checked package (net/http of $(go env GOROOT), its non-test files)
// without the checking: what `ingest go` spends in extractFile, apart
// from go/types and the parser. The package is checked once, with its
// imports from the toolchain's source importer.
func BenchmarkExtractFileTyped(b *testing.B) {
	dir := filepath.Join(goroot(b), "src", "net", "http")
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		b.Skipf("no net/http sources: %v", err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var srcs []*srcFile
	for _, base := range bp.GoFiles {
		name := filepath.Join(dir, base)
		content, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, content, parser.SkipObjectResolution)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
		srcs = append(srcs, &srcFile{Rel: "net/http/" + filepath.Base(name), Content: content, Hash: contentHash(content)})
	}
	info := &types.Info{Uses: make(map[*ast.Ident]types.Object)}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Error: func(error) {}}
	if _, err := conf.Check("net/http", fset, files, info); err != nil {
		b.Skipf("net/http does not check here: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		fr := newFragment()
		res := &typedResolver{imports: map[string]string{}, info: info}
		for i, f := range files {
			fr.extractFile("net/http", &unitFile{src: srcs[i], ast: f, fset: fset, res: res, mode: ModeTyped}, srcs[i].Content)
		}
	}
}
