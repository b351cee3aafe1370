package mcpserver

import (
	"context"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/roles"
)

// NoArgs is the input of tools without arguments.
type NoArgs struct{}

// StatsRecord is the answer of stats (SPEC.md §6.3 "stats").
type StatsRecord struct {
	Revision         uint64           `json:"revision"`
	Horizon          uint64           `json:"horizon" jsonschema:"oldest readable revision (0: all history kept)"`
	Nodes            int              `json:"nodes"`
	Edges            int              `json:"edges"`
	KVs              int              `json:"kvs"`
	Relations        int              `json:"relations"`
	AdjacencyChunks  int              `json:"adjacency_chunks"`
	AdjacencyEntries int              `json:"adjacency_entries"`
	Tombstones       int              `json:"tombstones"`
	Superseded       int              `json:"superseded"`
	MissingNodes     int              `json:"missing_nodes"`
	MapSize          int64            `json:"map_size"`
	FileSize         int64            `json:"file_size"`
	Warnings         []string         `json:"warnings"`
	Keyspaces        []KeyspaceRecord `json:"keyspaces" jsonschema:"space per LMDB keyspace"`
}

// KeyspaceRecord is one keyspace's space in the stats record.
type KeyspaceRecord struct {
	Name    string `json:"name"`
	Entries uint64 `json:"entries"`
	Pages   uint64 `json:"pages"`
	Bytes   uint64 `json:"bytes"`
}

func (s *Server) stats(context.Context, *NoArgs) (StatsRecord, error) {
	st, err := s.store.Stats()
	if err != nil {
		return StatsRecord{}, err
	}
	rec := StatsRecord{
		Revision: uint64(st.Revision), Horizon: uint64(st.Horizon),
		Nodes: st.Nodes, Edges: st.Edges, KVs: st.KVs, Relations: st.Relations,
		AdjacencyChunks: st.AdjacencyChunks, AdjacencyEntries: st.AdjacencyEntries,
		Tombstones: st.Tombstones, Superseded: st.Superseded, MissingNodes: st.MissingNodes,
		MapSize: st.MapSize, FileSize: st.FileSize, Warnings: st.Warnings,
	}
	for _, k := range st.Keyspaces {
		rec.Keyspaces = append(rec.Keyspaces, KeyspaceRecord{Name: k.Name, Entries: k.Entries, Pages: k.Pages(), Bytes: k.Bytes})
	}
	if rec.Warnings == nil {
		rec.Warnings = []string{}
	}
	return rec, nil
}

// maxListedMissing bounds the missing nodes check lists (ingested code
// references many external symbols).
const maxListedMissing = 100

// CheckResult is the answer of check.
type CheckResult struct {
	OK                 bool     `json:"ok" jsonschema:"true when no integrity problem was found"`
	Problems           []string `json:"problems" jsonschema:"integrity violations, each naming the keyspace and key"`
	Warnings           []string `json:"warnings"`
	MissingNodes       int      `json:"missing_nodes" jsonschema:"number of keys referenced by live edges that have no live node (allowed)"`
	MissingNodesListed []string `json:"missing_nodes_listed" jsonschema:"the first 100 of them"`
}

func (s *Server) check(context.Context, *NoArgs) (CheckResult, error) {
	rep, err := s.store.Check()
	if err != nil {
		return CheckResult{}, err
	}
	res := CheckResult{
		OK: len(rep.Problems) == 0, Problems: rep.Problems, Warnings: rep.Warnings,
		MissingNodes: len(rep.MissingNodes), MissingNodesListed: rep.MissingNodes,
	}
	if len(res.MissingNodesListed) > maxListedMissing {
		res.MissingNodesListed = res.MissingNodesListed[:maxListedMissing]
	}
	for _, p := range []*[]string{&res.Problems, &res.Warnings, &res.MissingNodesListed} {
		if *p == nil {
			*p = []string{}
		}
	}
	return res, nil
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
