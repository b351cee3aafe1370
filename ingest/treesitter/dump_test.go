package treesitter

import (
	"fmt"
	"os"
	"strings"
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

func dumpNode(s *src, n *sitter.Node, depth int, field string) {
	if !n.IsNamed() {
		return
	}
	text := ""
	if n.ChildCount() == 0 {
		text = " " + strings.ReplaceAll(s.text(n), "\n", "\\n")
	}
	if field != "" {
		field += ": "
	}
	fmt.Printf("%s%s%s [%d-%d]%s\n", strings.Repeat("  ", depth), field, s.kind(n), startLine(n), endLine(n), text)
	for i := uint(0); i < n.ChildCount(); i++ {
		dumpNode(s, n.Child(i), depth+1, n.FieldNameForChild(uint32(i)))
	}
}

func TestDumpTree(t *testing.T) {
	f := os.Getenv("MEMCTL_DUMP_TREE")
	if f == "" {
		t.Skip("set MEMCTL_DUMP_TREE=FILE to print its syntax tree")
	}
	b, _ := os.ReadFile(f)
	gs, err := loadGrammars()
	if err != nil {
		t.Fatal(err)
	}
	g := map[string]*gram{".py": gs[gramPython], ".rs": gs[gramRust], ".js": gs[gramJavaScript], ".ts": gs[gramTypeScript], ".tsx": gs[gramTSX]}[f[strings.LastIndexByte(f, '.'):]]
	w := newWorker()
	defer w.close()
	tr, err := w.parse(g, b)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dumpNode(&src{g: g, b: b}, tr.RootNode(), 0, "")
}
