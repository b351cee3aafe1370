package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestTableAlignsByBlock: a text table is aligned within blocks of
// tableBlock rows and written as each block completes: a long cell in a
// later block widens only its own block's column, every row arrives
// once, and a block is in the output before the table is flushed.
func TestTableAlignsByBlock(t *testing.T) {
	var out bytes.Buffer
	o := newOutput(&out, false)
	tw := o.table()
	rows := tableBlock + 3
	for i := range rows {
		name := "a"
		if i == tableBlock { // first row of the second block
			name = "a-much-longer-cell"
		}
		if _, err := fmt.Fprintf(tw, "%s\t%d\n", name, i); err != nil {
			t.Fatal(err)
		}
		if i == tableBlock-1 {
			if err := o.flush(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(out.String(), "\n"); got != tableBlock {
				t.Fatalf("%d rows written after the first block, want %d", got, tableBlock)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := o.flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != rows {
		t.Fatalf("%d rows, want %d", len(lines), rows)
	}
	for i, l := range lines {
		want := fmt.Sprintf("a  %d", i) // the first block: "a" and two spaces
		switch {
		case i == tableBlock:
			want = fmt.Sprintf("a-much-longer-cell  %d", i)
		case i > tableBlock:
			want = fmt.Sprintf("a%s  %d", strings.Repeat(" ", len("a-much-longer-cell")-1), i)
		}
		if l != want {
			t.Fatalf("row %d: %q, want %q", i, l, want)
		}
	}
}
