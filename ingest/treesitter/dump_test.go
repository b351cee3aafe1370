package treesitter

import (
	"fmt"
	"os"
	"strings"
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// TestDumpTree prints the syntax tree of $DUMP_FILE with grammar
// $DUMP_GRAMMAR: a development aid, skipped unless DUMP_FILE is set.
func TestDumpTree(t *testing.T) {
	file := os.Getenv("DUMP_FILE")
	if file == "" {
		t.Skip("DUMP_FILE not set")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := loadGrammars()
	if err != nil {
		t.Fatal(err)
	}
	g := gs[os.Getenv("DUMP_GRAMMAR")]
	w := newWorker()
	defer w.close()
	tree, err := w.parse(g, b)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	s := &src{g: g, b: b}
	var dump func(n *sitter.Node, field string, depth int)
	dump = func(n *sitter.Node, field string, depth int) {
		line := strings.Repeat("  ", depth)
		if field != "" {
			line += field + ": "
		}
		line += s.kind(n)
		if n.NamedChildCount() == 0 {
			line += " " + fmt.Sprintf("%q", s.text(n))
		}
		fmt.Println(line)
		for i := uint(0); i < n.NamedChildCount(); i++ {
			c := n.NamedChild(i)
			dump(c, n.FieldNameForNamedChild(uint32(i)), depth+1)
		}
	}
	dump(tree.RootNode(), "", 0)
}
