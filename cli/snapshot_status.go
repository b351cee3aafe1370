package cli

import (
	"time"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// snapshotStatus is the store's status of node i, read from the snapshot
// (enginesnap.Status).
func snapshotStatus(g *csr.Graph, i csr.NodeIndex, validAt time.Time) (lmdbstore.Status, error) {
	return enginesnap.Status(g, i, validAt)
}

// snapshotValidity is a node's valid time as the snapshot records it.
func snapshotValidity(g *csr.Graph, i csr.NodeIndex) (lmdbstore.Validity, error) {
	return enginesnap.Validity(g, i)
}
