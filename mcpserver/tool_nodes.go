package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// PutNodeArgs: put_node.
type PutNodeArgs struct {
	Key     string          `json:"key" jsonschema:"canonical key of the node, e.g. file:cli/app.go, sym:pkg.Func, decision:error-handling"`
	Type    string          `json:"type,omitempty" jsonschema:"node type (default: the part of key before the first ':')"`
	Payload json.RawMessage `json:"payload,omitempty" jsonschema:"any JSON value stored with the node (replaces the previous one)"`
	ValidityArgs
	ProvenanceArgs
}

func (s *Server) putNode(_ context.Context, a *PutNodeArgs) (records.Commit, error) {
	valid, err := a.validity()
	if err != nil {
		return records.Commit{}, err
	}
	return s.write(a.ProvenanceArgs, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutNode(lmdbstore.NodePut{Key: a.Key, Type: a.Type, Payload: a.Payload, Valid: valid})
	})
}

// KeyArgs: delete_node.
type KeyArgs struct {
	Key string `json:"key" jsonschema:"canonical key of the node"`
	ProvenanceArgs
}

func (s *Server) deleteNode(_ context.Context, a *KeyArgs) (records.Commit, error) {
	return s.write(a.ProvenanceArgs, func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteNode(a.Key)
	})
}

// GetNodeArgs: get_node.
type GetNodeArgs struct {
	Key string `json:"key" jsonschema:"canonical key of the node"`
	ViewArgs
	ValidAtArgs
}

func (s *Server) getNode(_ context.Context, a *GetNodeArgs) (records.Node, error) {
	var rec records.Node
	validAt, err := a.validAt(s.opts.Now)
	if err != nil {
		return records.Node{}, err
	}
	err = s.read(a.ViewArgs, func(r *lmdbstore.ReadTxn, at lmdbstore.At, _ lmdbstore.Revision) error {
		n, err := r.GetNode(a.Key, at)
		if err != nil {
			return err
		}
		st, err := r.Status(n.Key, at, validAt)
		if err != nil {
			return err
		}
		rec = records.NodeOf(n, st)
		return nil
	})
	return rec, err
}

// SupersedeArgs: supersede.
type SupersedeArgs struct {
	Old string `json:"old" jsonschema:"the item replaced: a node key, or a kv entry as kv:SCOPE/NS/KEY ('%' and '/' inside a part as %25 and %2F)"`
	New string `json:"new" jsonschema:"the item that replaces it (node key or kv address)"`
	ProvenanceArgs
}

func (s *Server) supersede(_ context.Context, a *SupersedeArgs) (records.Commit, error) {
	return s.write(a.ProvenanceArgs, func(tx *lmdbstore.WriteTxn) error { return tx.Supersede(a.Old, a.New) })
}
