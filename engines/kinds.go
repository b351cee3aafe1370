package engines

import (
	"sync"
	"sync/atomic"
)

// maxKindSets bounds the kinds an engine keeps a node set for (a kind is
// any string a caller filters by).
const maxKindSets = 16

// kindSets keeps, per engine, what queries learnt of each kind they
// filtered by, so that ranking tests a bit per activated node it already
// asked about instead of reading and comparing its type string again; the
// snapshot never changes under an engine.
type kindSets struct {
	mu   sync.Mutex
	sets map[string]*kindSet
}

// kindSet is what is known of the nodes of one kind: bit 2v says node v's
// type was read, bit 2v+1 that it is the kind. It is learnt as nodes are
// asked about, not from a pass over the node table: a one-shot query
// ranks a sixth of the Go standard library's nodes, and reading every
// node's type (72-byte rows, 8.5 MB) cost it more than ranking them. A
// type that cannot be read is not remembered: asking again reads it
// again, and fails again.
type kindSet struct {
	bits []atomic.Uint32
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
	ks := &kindSet{bits: make([]atomic.Uint32, (2*e.numNodes+31)/32)}
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
	bit := 2 * uint64(v)
	word, known, is := bit/32, uint32(1)<<(bit%32), uint32(2)<<(bit%32)
	if word < uint64(len(ks.bits)) {
		if w := ks.bits[word].Load(); w&known != 0 {
			return w&is != 0, nil
		}
	}
	typ, err := e.info.Type(v)
	if err != nil {
		return false, err
	}
	ok := typ == kind
	if word < uint64(len(ks.bits)) {
		mask := known
		if ok {
			mask |= is
		}
		ks.bits[word].Or(mask)
	}
	return ok, nil
}

// surelyNot reports whether node v is known not to be of ks's kind (its
// type was read and differs), without reading anything else.
func (ks *kindSet) surelyNot(v uint32) bool {
	bit := 2 * uint64(v)
	word, known, is := bit/32, uint32(1)<<(bit%32), uint32(2)<<(bit%32)
	if word >= uint64(len(ks.bits)) {
		return false
	}
	w := ks.bits[word].Load()
	return w&known != 0 && w&is == 0
}
