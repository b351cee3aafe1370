package roles

import "slices"

// The relation vocabulary: every relation memctl defines itself, one row
// each. A new built-in relation is one row here (and its line in SPEC §1);
// code that needs a set of relations asks the table by role or by flag
// rather than listing names.

// Names of the relations memctl defines (SPEC §1, §4, §9).
const (
	RelDefines     = "defines"
	RelReferences  = "references"
	RelCalls       = "calls"
	RelImports     = "imports"
	RelTests       = "tests"
	RelImplements  = "implements"
	RelConstrains  = "constrains"
	RelDecidedFor  = "decided_for"
	RelDerivedFrom = "derived_from"
	RelSupersedes  = "supersedes"
	RelContains    = "contains"
	RelCoChanged   = "co_changed"
	RelContradicts = "contradicts"
)

// Relation is one relation memctl defines: what it is registered with and
// what the code above the store makes of it.
type Relation struct {
	Name string
	Role Role
	// ID is the fixed id of a store built-in (1–10, SPEC §1); 0 for a
	// relation registered on first use (contains and co_changed by ingest,
	// contradicts by the store).
	ID            uint32
	DefaultWeight float32
	Bidirectional bool
	// Policy: the relation links a policy node to what it applies to
	// (context packs' "Applies here", SPEC §12.2).
	Policy bool
	// Unranked: a memory relation that carries no code structure; context
	// packs' Related never walks it and its edges never make the engine
	// snapshot stale (SPEC §12.2, §12.5).
	Unranked bool
}

// relations is the vocabulary: the store's built-ins first, by id, then
// the relations registered on first use. Read it through Relations,
// Lookup and the selectors below, which hand out copies.
var relations = [...]Relation{
	{Name: RelDefines, Role: Structure, ID: 1, DefaultWeight: 1},
	{Name: RelReferences, Role: Usage, ID: 2, DefaultWeight: 1},
	{Name: RelCalls, Role: Usage, ID: 3, DefaultWeight: 1},
	{Name: RelImports, Role: Usage, ID: 4, DefaultWeight: 1},
	{Name: RelTests, Role: Usage, ID: 5, DefaultWeight: 1},
	{Name: RelImplements, Role: Usage, ID: 6, DefaultWeight: 1},
	{Name: RelConstrains, Role: Memory, ID: 7, DefaultWeight: 1, Policy: true, Unranked: true},
	{Name: RelDecidedFor, Role: Memory, ID: 8, DefaultWeight: 1, Policy: true, Unranked: true},
	{Name: RelDerivedFrom, Role: Memory, ID: 9, DefaultWeight: 1},
	{Name: RelSupersedes, Role: Memory, ID: 10, DefaultWeight: 1, Unranked: true},
	// contains is bidirectional so that the engines move from a symbol to
	// its file, from a file to its package and directory, and back.
	{Name: RelContains, Role: Structure, DefaultWeight: 1, Bidirectional: true},
	// co_changed is symmetric: one edge per pair of files.
	{Name: RelCoChanged, Role: History, DefaultWeight: 1, Bidirectional: true},
	{Name: RelContradicts, Role: Memory, DefaultWeight: 1, Unranked: true},
}

// Relations returns the vocabulary, one row per relation: the built-ins
// by id, then the relations registered on first use.
func Relations() []Relation { return slices.Clone(relations[:]) }

// Lookup returns the row of the relation named name; ok is false for a
// relation memctl does not define.
func Lookup(name string) (r Relation, ok bool) {
	for _, r := range relations {
		if r.Name == name {
			return r, true
		}
	}
	return Relation{}, false
}

// Builtins returns the relations every store has with fixed ids, by id
// (row i has id i+1).
func Builtins() []Relation {
	var out []Relation
	for _, r := range relations {
		if r.ID != 0 {
			out = append(out, r)
		}
	}
	return out
}

// WithRole returns the names of the relations of any of the roles rs, in
// table order.
func WithRole(rs ...Role) []string {
	return relationNames(func(r Relation) bool {
		for _, role := range rs {
			if r.Role == role {
				return true
			}
		}
		return false
	})
}

// PolicyRelations returns the names of the relations that link a policy
// node to what it applies to, in table order.
func PolicyRelations() []string { return relationNames(func(r Relation) bool { return r.Policy }) }

// Ranked reports whether context packs rank along the relation named
// name: every relation but the Unranked rows (a relation memctl does not
// define is ranked).
func Ranked(name string) bool {
	r, ok := Lookup(name)
	return !ok || !r.Unranked
}

func relationNames(keep func(Relation) bool) []string {
	var out []string
	for _, r := range relations {
		if keep(r) {
			out = append(out, r.Name)
		}
	}
	return out
}
