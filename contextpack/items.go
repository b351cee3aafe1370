package contextpack

import (
	"encoding/json"
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// Provenance is who wrote an item's version, and when.
type Provenance struct {
	Rev   lmdbstore.Revision
	TS    time.Time
	Scope string
	Run   string
	Task  string
}

// Policy is an item of "Applies here": a constraint, decision or
// procedure (a node linked to the target or what encloses it, or a kv
// entry whose scope or applies_to covers it).
type Policy struct {
	Key    string // node key, or the kv entry's address (KVAddress)
	Kind   string // constraint, decision, procedure or policy
	Source string // "edge" or "kv"
	// Via says why it applies: the relation of its edge (constrains,
	// decided_for), "applies_to", "scope" (a kv scope naming a directory)
	// or "repository" (a kv policy with no narrower scope).
	Via string
	// Anchor is what it is attached to: the key its edge points at, the
	// applies_to key or glob that matched, the directory of its scope;
	// "" for repository-wide entries.
	Anchor  string
	Level   string // the anchor's level (LevelTarget … LevelRepository)
	Rank    int    // the anchor's specificity (Anchor.Rank)
	Text    string // a short text from the payload
	Payload json.RawMessage
	Prov    Provenance
	Status  Status
	// for kv entries
	Scope, Namespace, KVKey string
}

// Neighbour is an item of "Related": a file or symbol ranked by spreading
// activation from the targets (files in the order of the files-only
// ranking, SPEC.md §12).
type Neighbour struct {
	Key  string
	Kind string // file or symbol
	// Score is the activation score of the item's place in the ranking
	// (a file placed by the files-only ranking takes the score of the
	// place it fills).
	Score     float64
	Path      string
	LineStart int
	LineEnd   int
	Prov      Provenance
}

// Change is one operation (or a run of like operations of one revision) on
// a target or an item related to it, read from the stored versions: an item
// of "Changed since" and of "Attempted".
type Change struct {
	Op  string // put_node, del_node, put_edge, del_edge, put_kv, del_kv
	Key string // the node or kv address it touched; for edges, the target end
	// Edges: the relation, the direction seen from Key (out: Key -rel->
	// peers; in: peers -rel-> Key), the peers (at most maxPeers, sorted),
	// and how many edges the line stands for.
	Rel   string
	Dir   string
	Peers []string
	Count int
	Prov  Provenance
}

// Attempt is the operations of one earlier (run, task), newest first.
type Attempt struct {
	Run, Task string
	Changes   []Change
}

// maxPeers bounds the peers a grouped edge change lists by name.
const maxPeers = 3
