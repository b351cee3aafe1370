package contextpack

import (
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// Status is what a pack needs to know about a memory item (a policy node
// or kv entry) at the view: superseded items and expired ones are history,
// hidden unless Request.All.
type Status struct {
	SupersededBy string   // the newest item that supersedes it; "" when current
	Expired      bool     // its valid time does not contain Request.ValidAt
	Pending      bool     // Expired because its valid time begins after Request.ValidAt (not yet valid)
	Contradicts  []string // current items it conflicts with
}

// Hidden reports whether the item is history by default.
func (s Status) Hidden() bool { return s.SupersededBy != "" || s.Expired }

// KVAddress names kv entry scope/ns/key as an edge endpoint, so policies
// can be linked, superseded and contradicted like nodes (the store's
// convention, lmdbstore.KVAddress, SPEC.md §2).
func KVAddress(scope, ns, key string) string { return lmdbstore.KVAddress(scope, ns, key) }

// itemStatus is the store's status of a node key or kv address at the view
// (lmdbstore.ReadTxn.Status: supersede chains, valid time, contradictions).
func itemStatus(r *lmdbstore.ReadTxn, key string, at lmdbstore.At, validAt time.Time) (Status, error) {
	st, err := r.Status(key, at, validAt)
	if err != nil {
		return Status{}, err
	}
	return Status{SupersededBy: st.Newest, Expired: !st.Valid, Pending: st.Pending, Contradicts: st.Contradicts}, nil
}
