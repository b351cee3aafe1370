// Package roles is memctl's relation vocabulary: what a relation means to
// the engines (its role) and the table of the relations memctl defines
// itself (relations.go).
//
// Every relation has exactly one role, stored with it (SPEC §1: bits 2–3 of
// the relation flags in the store's `rel` value and in the snapshot's
// relation row). Engines decide what to follow, in which direction and how
// much it weighs by role, never by relation name.
//
// Invariants: a Role is one of the four constants; its encoding is the
// 2-bit value v in flags bits 2–3 (flags & Mask == v << Shift); Memory is 0,
// so a relation added without a role is a memory relation. Every relation
// memctl defines is one row of the table in relations.go, and code that
// needs a set of them (built-ins, policy relations, the relations of a
// role) asks the table: a new built-in relation is one new row there.
package roles

import (
	"fmt"
	"strings"
)

// Role is a relation's role.
type Role uint8

// The four roles, with their 2-bit encodings.
const (
	// Memory: what agents and people record about the code (constrains,
	// decided_for, derived_from, supersedes, and every relation added
	// without a role).
	Memory Role = 0
	// Structure: containment and declaration (contains, defines): who
	// owns what.
	Structure Role = 1
	// Usage: one entity depends on another (calls, references,
	// implements, tests, imports).
	Usage Role = 2
	// History: observed together in the version history (co_changed).
	History Role = 3

	// Count is the number of roles: an array indexed by Role has Count
	// elements.
	Count = int(History) + 1
)

// Shift and Mask place a role in a relation's flags (bits 2–3).
const (
	Shift       = 2
	Mask  uint8 = 3 << Shift
)

var names = [...]string{Memory: "memory", Structure: "structure", Usage: "usage", History: "history"}

// String is the role's name: memory, structure, usage or history.
func (r Role) String() string {
	if int(r) < len(names) {
		return names[r]
	}
	return fmt.Sprintf("role(%d)", r)
}

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool { return r <= History }

// Bits is r's contribution to a relation's flags byte.
func (r Role) Bits() uint8 { return uint8(r) << Shift }

// FromFlags extracts the role from relation flags.
func FromFlags(flags uint32) Role { return Role(flags>>Shift) & 3 }

// ErrUnknown is returned by Parse for a name that is not a role.
type ErrUnknown struct{ Name string }

func (e *ErrUnknown) Error() string {
	return fmt.Sprintf("unknown role %q (want %s)", e.Name, strings.Join(names[:], ", "))
}

// Parse reads a role name (case-insensitive).
func Parse(s string) (Role, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return Role(i), nil
		}
	}
	return 0, &ErrUnknown{s}
}

// Known is the role memctl gives the relations it registers itself (the
// rows of Relations). ok is false for any other name.
func Known(name string) (r Role, ok bool) {
	row, ok := Lookup(name)
	return row.Role, ok
}
