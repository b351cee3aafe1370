package engines

import (
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/roles"
)

// Role is what a relation means to the engines. Profiles choose which edges
// to follow and how much each weighs by role, never by relation name
// (SPEC.md §8.0).
type Role uint8

const (
	// RoleNone: a relation id the table does not define (an edge carrying
	// one is corruption); every defined relation has a stored role.
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

// relationRole is the related profile's Role of one relation of the
// snapshot's table: its stored role (SPEC §1).
func relationRole(r csr.Relation) Role {
	switch r.Role {
	case roles.Structure:
		return RoleStructure
	case roles.Usage:
		return RoleUsage
	case roles.History:
		return RoleHistory
	}
	return RoleMemory
}
