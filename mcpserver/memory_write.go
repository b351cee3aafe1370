package mcpserver

// The reference memory server's six write tools. Each call is one write
// transaction: the existence checks and duplicate filtering happen inside
// it, so concurrent servers can neither lose a write nor duplicate one, and
// a call that fails writes nothing.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// ScopeArg is the scope of the memory tools: entities created are stored
// with it, and read_graph / search_nodes list only entities of it. Empty:
// the server's --scope; "*": every scope.
type ScopeArg struct {
	Scope string `json:"scope,omitempty" jsonschema:"per-project memory: the scope entities are created in and read_graph/search_nodes list (default: the server's --scope; * for all scopes)"`
}

// CreateEntitiesArgs: create_entities.
type CreateEntitiesArgs struct {
	Entities []Entity `json:"entities"`
	ScopeArg
}

// CreateEntitiesResult lists the entities created (those whose name was
// not taken).
type CreateEntitiesResult struct {
	Entities []Entity `json:"entities" jsonschema:"the entities created; names that already existed are skipped"`
	Existing []string `json:"existing,omitempty" jsonschema:"names skipped because an entity with that name already exists"`
	Rev      uint64   `json:"rev" jsonschema:"the revision committed (0: nothing created)"`
	Redacted int      `json:"redacted,omitempty" jsonschema:"secrets replaced by [REDACTED:kind] before storing"`
}

// Text is the reference's text content: the created entities as
// JSON.stringify(entities, null, 2).
func (r CreateEntitiesResult) Text() string { return prettyJSON(r.Entities) }

func (s *Server) writeScope(a ScopeArg) string {
	if a.Scope == "*" {
		return ""
	}
	return a.Scope
}

func (s *Server) createEntities(_ context.Context, a *CreateEntitiesArgs) (CreateEntitiesResult, error) {
	now := records.Time(s.opts.Now())
	var res CreateEntitiesResult
	c, err := s.write(ProvenanceArgs{Scope: s.writeScope(a.ScopeArg)}, func(tx *lmdbstore.WriteTxn) error {
		res = CreateEntitiesResult{Entities: []Entity{}}
		r := tx.Reader()
		for _, e := range a.Entities {
			_, err := r.GetNode(e.Name, lmdbstore.At{})
			switch {
			case err == nil:
				res.Existing = append(res.Existing, e.Name)
				continue
			case !errors.Is(err, lmdbstore.ErrNotFound):
				return fmt.Errorf("entity %q: %w", e.Name, err)
			}
			obs := make([]observation, len(e.Observations))
			for i, o := range e.Observations {
				obs[i] = observation{Text: o, Added: now, Rev: uint64(tx.Revision())}
			}
			payload, err := withObservations(e.Name, nil, obs)
			if err != nil {
				return err
			}
			if err := tx.PutNode(lmdbstore.NodePut{Key: e.Name, Type: e.EntityType, Payload: payload}); err != nil {
				return fmt.Errorf("entity %q: %w", e.Name, err)
			}
			if e.Observations == nil {
				e.Observations = []string{}
			}
			res.Entities = append(res.Entities, e)
		}
		return nil
	})
	res.Rev, res.Redacted = c.Rev, c.Redacted
	return res, err
}

// CreateRelationsArgs: create_relations.
type CreateRelationsArgs struct {
	Relations []GraphRelation `json:"relations"`
	ScopeArg
}

// CreateRelationsResult lists the relations created.
type CreateRelationsResult struct {
	Relations []GraphRelation `json:"relations" jsonschema:"the relations created; ones that already existed are skipped"`
	Rev       uint64          `json:"rev"`
	Redacted  int             `json:"redacted,omitempty" jsonschema:"secrets replaced by [REDACTED:kind] before storing"`
}

// Text is the reference's text content: the created relations, pretty-printed.
func (r CreateRelationsResult) Text() string { return prettyJSON(r.Relations) }

func (s *Server) createRelations(_ context.Context, a *CreateRelationsArgs) (CreateRelationsResult, error) {
	var res CreateRelationsResult
	c, err := s.write(ProvenanceArgs{Scope: s.writeScope(a.ScopeArg)}, func(tx *lmdbstore.WriteTxn) error {
		res = CreateRelationsResult{Relations: []GraphRelation{}}
		r := tx.Reader()
		for _, rel := range a.Relations {
			// Like the reference, an end need not exist: the edge then ends at
			// a missing node (as put_edge and the CLI allow).
			name, err := relationName(rel.RelationType)
			if err != nil {
				return err
			}
			if _, err := r.RelationByName(name); errors.Is(err, lmdbstore.ErrUnknownRelation) {
				if _, err := tx.AddRelation(lmdbstore.Relation{Name: name}); err != nil {
					return fmt.Errorf("registering relation %q: %w", name, err)
				}
			} else if err != nil {
				return err
			}
			if _, err := r.GetEdge(rel.From, name, rel.To, lmdbstore.At{}); err == nil {
				continue // already there (or earlier in this call)
			} else if !errors.Is(err, lmdbstore.ErrNotFound) {
				return err
			}
			if err := tx.PutEdge(lmdbstore.EdgePut{Src: rel.From, Rel: name, Dst: rel.To, Payload: relationPayload(rel.RelationType, name)}); err != nil {
				return err
			}
			res.Relations = append(res.Relations, rel)
		}
		return nil
	})
	res.Rev, res.Redacted = c.Rev, c.Redacted
	return res, err
}

// ObservationAdd is one entity's new observations.
type ObservationAdd struct {
	EntityName string   `json:"entityName" jsonschema:"the name of the entity to add the observations to"`
	Contents   []string `json:"contents" jsonschema:"observation contents to add"`
}

// AddObservationsArgs: add_observations.
type AddObservationsArgs struct {
	Observations []ObservationAdd `json:"observations"`
	ScopeArg
}

// ObservationsAdded is one entity's result.
type ObservationsAdded struct {
	EntityName        string   `json:"entityName"`
	AddedObservations []string `json:"addedObservations" jsonschema:"the contents added (ones already present are skipped)"`
}

// AddObservationsResult is the answer of add_observations.
type AddObservationsResult struct {
	Results  []ObservationsAdded `json:"results"`
	Rev      uint64              `json:"rev"`
	Redacted int                 `json:"redacted,omitempty" jsonschema:"secrets replaced by [REDACTED:kind] before storing"`
}

// Text is the reference's text content: the results, pretty-printed.
func (r AddObservationsResult) Text() string { return prettyJSON(r.Results) }

func (s *Server) addObservations(_ context.Context, a *AddObservationsArgs) (AddObservationsResult, error) {
	now := records.Time(s.opts.Now())
	var res AddObservationsResult
	c, err := s.write(ProvenanceArgs{Scope: s.writeScope(a.ScopeArg)}, func(tx *lmdbstore.WriteTxn) error {
		res = AddObservationsResult{Results: []ObservationsAdded{}}
		r := tx.Reader()
		for _, o := range a.Observations {
			n, err := r.GetNode(o.EntityName, lmdbstore.At{})
			if errors.Is(err, lmdbstore.ErrNotFound) {
				return fmt.Errorf("Entity with name %s not found", o.EntityName)
			} else if err != nil {
				return err
			}
			obs := observations(n.Payload)
			before := len(obs) // as the reference: a content given twice in one entry is added twice
			added := []string{}
			for _, text := range o.Contents {
				if slices.ContainsFunc(obs[:before], func(x observation) bool { return x.Text == text }) {
					continue
				}
				obs = append(obs, observation{Text: text, Added: now, Rev: uint64(tx.Revision())})
				added = append(added, text)
			}
			res.Results = append(res.Results, ObservationsAdded{EntityName: o.EntityName, AddedObservations: added})
			if len(added) == 0 {
				continue
			}
			payload, err := withObservations(n.Key, n.Payload, obs)
			if err != nil {
				return err
			}
			if err := tx.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type, Payload: payload, Scope: n.Scope}); err != nil {
				return err
			}
		}
		return nil
	})
	res.Rev, res.Redacted = c.Rev, c.Redacted
	return res, err
}

// DeleteEntitiesArgs: delete_entities.
type DeleteEntitiesArgs struct {
	EntityNames []string `json:"entityNames" jsonschema:"the names of the entities to delete"`
	ScopeArg
}

// Outcome is the answer of the delete tools (the reference's success and
// message, plus the revision).
type Outcome struct {
	Success  bool     `json:"success"`
	Message  string   `json:"message"`
	Rev      uint64   `json:"rev" jsonschema:"the revision committed (0: nothing changed)"`
	NotFound []string `json:"notFound,omitempty" jsonschema:"names that matched no entity"`
}

// Text is the reference's text content: the message.
func (o Outcome) Text() string { return o.Message }

func (s *Server) deleteEntities(_ context.Context, a *DeleteEntitiesArgs) (Outcome, error) {
	var deleted, notFound []string
	c, err := s.write(ProvenanceArgs{Scope: s.writeScope(a.ScopeArg)}, func(tx *lmdbstore.WriteTxn) error {
		deleted, notFound = nil, nil
		r := tx.Reader()
		for _, name := range a.EntityNames {
			// The reference drops every relation from or to the name, whether
			// or not an entity of that name exists.
			if err := deleteEdgesOf(tx, name); err != nil && !isNotFoundOrInvalid(err) {
				return err
			}
			if _, err := r.GetNode(name, lmdbstore.At{}); isNotFoundOrInvalid(err) {
				notFound = append(notFound, name)
				continue
			} else if err != nil {
				return err
			}
			if err := tx.DeleteNode(name); err != nil {
				return err
			}
			deleted = append(deleted, name)
		}
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	msg := "Entities deleted successfully"
	if len(notFound) > 0 {
		msg = fmt.Sprintf("Deleted %d of %d entities. Not found: %s", len(deleted), len(a.EntityNames), strings.Join(notFound, ", "))
	}
	return Outcome{Success: true, Message: msg, Rev: c.Rev, NotFound: notFound}, nil
}

// deleteEdgesOf deletes every live edge into or out of key.
func deleteEdgesOf(tx *lmdbstore.WriteTxn, key string) error {
	r := tx.Reader()
	out, err := r.GetOut(key, "", lmdbstore.At{})
	if err != nil {
		return err
	}
	in, err := r.GetIn(key, "", lmdbstore.At{})
	if err != nil {
		return err
	}
	for _, e := range append(out, in...) {
		src, rel, dst, err := r.EdgeKeys(e)
		if err != nil {
			return err
		}
		// A self-loop is in both lists: the second delete finds it gone.
		if err := tx.DeleteEdge(src, rel, dst); err != nil && !errors.Is(err, lmdbstore.ErrNotFound) {
			return err
		}
	}
	return nil
}

// ObservationDelete is one entity's observations to delete.
type ObservationDelete struct {
	EntityName   string   `json:"entityName" jsonschema:"the name of the entity containing the observations"`
	Observations []string `json:"observations" jsonschema:"observations to delete"`
}

// DeleteObservationsArgs: delete_observations.
type DeleteObservationsArgs struct {
	Deletions []ObservationDelete `json:"deletions"`
	ScopeArg
}

func (s *Server) deleteObservations(_ context.Context, a *DeleteObservationsArgs) (Outcome, error) {
	var deletedCount int
	var missing []string
	c, err := s.write(ProvenanceArgs{Scope: s.writeScope(a.ScopeArg)}, func(tx *lmdbstore.WriteTxn) error {
		deletedCount, missing = 0, nil
		r := tx.Reader()
		for _, d := range a.Deletions {
			n, err := r.GetNode(d.EntityName, lmdbstore.At{})
			if errors.Is(err, lmdbstore.ErrNotFound) {
				missing = append(missing, d.EntityName)
				continue
			} else if err != nil {
				return err
			}
			obs := observations(n.Payload)
			for _, text := range d.Observations {
				if slices.ContainsFunc(obs, func(o observation) bool { return o.Text == text }) {
					deletedCount++ // a requested observation that matched (every copy of it goes)
				}
			}
			kept := slices.DeleteFunc(slices.Clone(obs), func(o observation) bool { return slices.Contains(d.Observations, o.Text) })
			if len(kept) == len(obs) {
				continue
			}
			payload, err := withObservations(n.Key, n.Payload, kept)
			if err != nil {
				return err
			}
			if err := tx.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type, Payload: payload, Scope: n.Scope}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	requested := 0
	for _, d := range a.Deletions {
		requested += len(d.Observations)
	}
	msg := "Observations deleted successfully"
	if deletedCount != requested {
		msg = fmt.Sprintf("Deleted %d of %d observations.", deletedCount, requested)
		if len(missing) > 0 {
			msg += " Entities not found: " + strings.Join(missing, ", ")
		}
	}
	return Outcome{Success: true, Message: msg, Rev: c.Rev, NotFound: missing}, nil
}

// DeleteRelationsArgs: delete_relations.
type DeleteRelationsArgs struct {
	Relations []GraphRelation `json:"relations" jsonschema:"the relations to delete"`
	ScopeArg
}

func (s *Server) deleteRelations(_ context.Context, a *DeleteRelationsArgs) (Outcome, error) {
	deleted := 0
	c, err := s.write(ProvenanceArgs{Scope: s.writeScope(a.ScopeArg)}, func(tx *lmdbstore.WriteTxn) error {
		deleted = 0
		for _, rel := range a.Relations {
			name, err := relationName(rel.RelationType)
			if err != nil {
				return err
			}
			switch err := tx.DeleteEdge(rel.From, name, rel.To); {
			case err == nil:
				deleted++
			case errors.Is(err, lmdbstore.ErrNotFound), errors.Is(err, lmdbstore.ErrUnknownRelation):
				// matches nothing: the reference server ignores it too
			default:
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	msg := "Relations deleted successfully"
	if deleted != len(a.Relations) {
		msg = fmt.Sprintf("Deleted %d of %d relations. The rest matched nothing.", deleted, len(a.Relations))
	}
	return Outcome{Success: true, Message: msg, Rev: c.Rev}, nil
}
