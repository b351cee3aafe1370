package engines

import "sync"

// maxKindSets bounds the kinds an engine keeps a node set for (a kind is
// any string a caller filters by).
const maxKindSets = 16

// kindSets keeps, per engine, the set of nodes of each kind a query
// filtered by (csr.Graph.NodesOfType, one pass over the node table), so
// that ranking tests a bit per activated node instead of reading and
// comparing its type string; the snapshot never changes under an engine.
type kindSets struct {
	mu   sync.Mutex
	sets map[string]*kindSet
}

// kindSet is the nodes of one kind; bad, those whose type cannot be read
// (their test reads the type, to report the same error as before).
type kindSet struct {
	match, bad []uint64
}

// nodesOfKind returns the set of kind's nodes, nil when the engine reads
// no node information (algorithm-core tests: no kind filter).
func (e *Engine) nodesOfKind(kind string) *kindSet {
	if e.info == nil {
		return nil
	}
	e.kinds.mu.Lock()
	defer e.kinds.mu.Unlock()
	if ks, ok := e.kinds.sets[kind]; ok {
		return ks
	}
	match, bad := e.info.NodesOfType(kind)
	ks := &kindSet{match: match, bad: bad}
	if e.kinds.sets == nil {
		e.kinds.sets = make(map[string]*kindSet)
	}
	if len(e.kinds.sets) < maxKindSets {
		e.kinds.sets[kind] = ks
	}
	return ks
}

// isKind reports whether node v is of the kind ks was made for (e.info.Type
// equal to it); a type that cannot be read is the reader's error.
func (e *Engine) isKind(ks *kindSet, kind string, v uint32) (bool, error) {
	w, b := v/64, uint64(1)<<(v%64)
	if int(w) >= len(ks.match) || ks.bad[w]&b != 0 {
		typ, err := e.info.Type(v)
		return typ == kind, err
	}
	return ks.match[w]&b != 0, nil
}

// surelyNot reports whether node v is known not to be of ks's kind (its
// type was read and differs), without reading anything else.
func (ks *kindSet) surelyNot(v uint32) bool {
	w, b := v/64, uint64(1)<<(v%64)
	return int(w) < len(ks.match) && (ks.match[w]|ks.bad[w])&b == 0
}
