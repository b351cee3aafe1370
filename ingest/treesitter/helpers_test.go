package treesitter

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// render prints a graph in the form of the hand-written expectations in
// testdata/treesitter/*.want: one node or edge per line, in order; the
// ingest:<lang> nodes (their hash depends on the machine's paths) are
// left out.
//
//	<key> <type>[ <module>][ <kind> <first line>-<last line>][ external][ test]
//	<src> <rel> <dst>
func render(g *ingest.Graph) string {
	var b strings.Builder
	for _, n := range g.Nodes() {
		if n.Type == ingest.TypeIngest {
			continue
		}
		line := n.Key + " " + n.Type
		switch n.Type {
		case ingest.TypeFile:
			var p ingest.FilePayload
			json.Unmarshal(n.Payload, &p)
			if p.Package != "" {
				line += " " + p.Package
			}
			if p.Test {
				line += " test"
			}
		case ingest.TypePackage:
			var p ingest.PackagePayload
			json.Unmarshal(n.Payload, &p)
			if p.External {
				line += " external"
			}
		case ingest.TypeSymbol:
			var p ingest.SymbolPayload
			json.Unmarshal(n.Payload, &p)
			line += fmt.Sprintf(" %s %d-%d", p.Kind, p.LineStart, p.LineEnd)
			if p.Test {
				line += " test"
			}
		}
		b.WriteString(line + "\n")
	}
	for _, e := range g.Edges() {
		fmt.Fprintf(&b, "%s %s %s\n", e.Src, e.Rel, e.Dst)
	}
	return b.String()
}
