package engines

import (
	"strings"

	"github.com/memctl/memctl/csr"
)

// Role is what a relation means to the engines. Profiles choose which edges
// to follow and how much each weighs by role, never by relation name
// (SPEC.md §8.0).
type Role uint8

const (
	// RoleNone: a relation nobody gave a role (added without one); profiles
	// weigh it like any other role.
	RoleNone Role = iota
	// RoleStructure: containment and declaration (contains, defines).
	RoleStructure
	// RoleUsage: code that uses other code (calls, references, implements,
	// tests, imports).
	RoleUsage
	// RoleHistory: evidence from version control (co_changed).
	RoleHistory
	// RoleMemory: what agents decided and recorded (constrains,
	// decided_for, derived_from, supersedes).
	RoleMemory
	numRoles
)

var roleNames = [numRoles]string{"none", "structure", "usage", "history", "memory"}

func (r Role) String() string {
	if r < numRoles {
		return roleNames[r]
	}
	return "invalid"
}

// ParseRole maps a role name to its Role.
func ParseRole(s string) (Role, error) {
	for i, n := range roleNames {
		if n == s {
			return Role(i), nil
		}
	}
	return 0, invalidf("unknown role %q (want structure, usage, history, memory or none)", s)
}

// builtinRoles are the roles of the relations memctl itself defines (the
// store's built-ins and those ingest registers). TODO(roles): the relation
// table carries each relation's role (issue 12); relationRole then reads it
// and this table goes.
var builtinRoles = map[string]Role{
	"contains": RoleStructure, "defines": RoleStructure,
	"calls": RoleUsage, "references": RoleUsage, "implements": RoleUsage, "tests": RoleUsage, "imports": RoleUsage,
	"co_changed":  RoleHistory,
	"constrains":  RoleMemory,
	"decided_for": RoleMemory, "derived_from": RoleMemory, "supersedes": RoleMemory,
}

// relationRole is the role of one relation of the snapshot's table.
func relationRole(r csr.Relation) Role {
	return builtinRoles[strings.TrimSpace(r.Name)]
}
