package mcpserver

import (
	"context"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/roles"
)

// NoArgs is the input of tools without arguments.
type NoArgs struct{}

// StatsRecord is the answer of stats (SPEC.md §6.3 "stats").
type StatsRecord = records.Stats

func (s *Server) stats(context.Context, *NoArgs) (StatsRecord, error) {
	return ops.Stats(s.store)
}

// maxListedMissing bounds the missing nodes check lists (ingested code
// references many external symbols).
const maxListedMissing = 100

// CheckResult is the answer of check.
type CheckResult = records.Check

func (s *Server) check(context.Context, *NoArgs) (CheckResult, error) {
	return ops.Check(s.store, maxListedMissing)
}

// RelationList is the answer of list_relations.
type RelationList struct {
	Relations []records.Relation `json:"relations" jsonschema:"every registered relation, by id"`
}

func (s *Server) listRelations(_ context.Context, _ *NoArgs) (RelationList, error) {
	var res RelationList
	err := s.store.View(func(r *lmdbstore.ReadTxn) error {
		rels, err := r.Relations()
		if err != nil {
			return err
		}
		res.Relations = make([]records.Relation, len(rels))
		for i, rel := range rels {
			res.Relations[i] = records.RelationOf(rel)
		}
		return nil
	})
	return res, err
}

// AddRelationArgs: add_relation.
type AddRelationArgs struct {
	Name          string   `json:"name" jsonschema:"1-64 characters of A-Z a-z 0-9 _ . -"`
	DefaultWeight *float64 `json:"default_weight,omitempty" jsonschema:"weight of edges put without one (default 1)"`
	Bidirectional bool     `json:"bidirectional,omitempty" jsonschema:"engines also follow the relation backwards"`
	Inhibitory    bool     `json:"inhibitory,omitempty" jsonschema:"engines subtract along the relation"`
	Role          string   `json:"role,omitempty" jsonschema:"what it means to the engines: structure, usage, history or memory (default memory; SPEC §1)"`
	ProvenanceArgs
}

// RelationAdded is the answer of add_relation.
type RelationAdded struct {
	Rev  uint64 `json:"rev"`
	TS   string `json:"ts,omitempty"`
	ID   uint32 `json:"id" jsonschema:"the new relation's id"`
	Name string `json:"name"`
}

func (s *Server) addRelation(_ context.Context, a *AddRelationArgs) (RelationAdded, error) {
	w, err := checkWeight(a.DefaultWeight)
	if err != nil {
		return RelationAdded{}, err
	}
	if a.Role == "" {
		a.Role = "memory"
	}
	role, err := roles.Parse(a.Role)
	if err != nil {
		return RelationAdded{}, invalidArg("role: %v", err)
	}
	var id lmdbstore.RelID
	c, err := s.write(a.ProvenanceArgs, func(tx *lmdbstore.WriteTxn) error {
		var err error
		id, err = tx.AddRelation(lmdbstore.Relation{Name: a.Name, DefaultWeight: w, Bidirectional: a.Bidirectional, Inhibitory: a.Inhibitory, Role: role})
		return err
	})
	if err != nil {
		return RelationAdded{}, err
	}
	return RelationAdded{Rev: c.Rev, TS: c.TS, ID: uint32(id), Name: a.Name}, nil
}
