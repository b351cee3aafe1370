package treesitter

import "sort"

// Scope helpers every front-end's parser shares. A file's definitions
// (functions, classes, items…) nest; each embeds an extent, and the names
// bound inside a definition are kept per definition index in a
// scopeNames.

// extent is where a definition lies in its file and which definition
// encloses it.
type extent struct {
	parent     int  // the enclosing definition's index, -1 at top level
	start, end uint // byte range of the whole definition
	nameStart  uint // byte offset of its name (0 when it has none)
}

func (e *extent) span() *extent { return e }

// nested is a pointer to a definition that embeds an extent.
type nested[D any] interface {
	*D
	span() *extent
}

// scopeAt is the index of the innermost of defs containing the byte
// offset p (-1: none). defs are in document order, parents before
// children.
func scopeAt[D any, P nested[D]](defs []D, p uint) int {
	i := sort.Search(len(defs), func(i int) bool { return P(&defs[i]).span().start > p }) - 1
	for i >= 0 {
		e := P(&defs[i]).span()
		if e.start <= p && p < e.end {
			break
		}
		i = e.parent
	}
	return i
}

// scopeNames holds, per definition index, the names bound inside it.
type scopeNames map[int]map[string]bool

// bind records names as bound in the definition scope (nothing for
// scope < 0: top-level names are not locals of anything).
func (m scopeNames) bind(scope int, names []string) {
	if scope < 0 || len(names) == 0 {
		return
	}
	if m[scope] == nil {
		m[scope] = make(map[string]bool)
	}
	for _, n := range names {
		m[scope][n] = true
	}
}
