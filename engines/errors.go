package engines

import (
	"fmt"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// corruptf reports graph arrays that contradict themselves (a neighbour
// index beyond the node count, an unknown relation id) in a way the reader
// did not catch, as the reader's own corruption error: errors.Is(err,
// snapshot.ErrCorrupt) holds. Errors the reader returns pass through
// unchanged.
func corruptf(format string, args ...any) error {
	return &snapshot.FormatError{Section: "csr", Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// relationTable reads the snapshot's relation table.
func relationTable(g *csr.Graph) ([]csr.Relation, error) { return g.Relations() }
