package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// A kv entry is named by (scope, namespace, key); an empty scope argument
// means the server's --scope (SPEC.md §10.2).

// PutKVArgs: put_kv.
type PutKVArgs struct {
	Scope     string          `json:"scope,omitempty" jsonschema:"scope of the entry, e.g. a repository (default: the server's --scope)"`
	Namespace string          `json:"namespace" jsonschema:"namespace, e.g. decisions, constraints, procedures"`
	Key       string          `json:"key" jsonschema:"key of the entry within the namespace"`
	Payload   json.RawMessage `json:"payload" jsonschema:"the entry: any JSON value"`
	RunID     string          `json:"run_id,omitempty" jsonschema:"run id recorded with the write (default: the server's --run)"`
	TaskID    string          `json:"task_id,omitempty" jsonschema:"task id recorded with the write (default: the server's --task)"`
	ValidityArgs
}

func (s *Server) kvScope(scope string) string {
	if scope == "" {
		return s.opts.Defaults.Scope
	}
	return scope
}

func (s *Server) putKV(_ context.Context, a *PutKVArgs) (records.Commit, error) {
	scope := s.kvScope(a.Scope)
	valid, err := a.validity()
	if err != nil {
		return records.Commit{}, err
	}
	return s.write(ProvenanceArgs{Scope: scope, RunID: a.RunID, TaskID: a.TaskID}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutKV(lmdbstore.KVPut{Scope: scope, Namespace: a.Namespace, Key: a.Key, Payload: a.Payload, Valid: valid})
	})
}

// KVArgs: delete_kv.
type KVArgs struct {
	Scope     string `json:"scope,omitempty" jsonschema:"scope of the entry (default: the server's --scope)"`
	Namespace string `json:"namespace" jsonschema:"namespace of the entry"`
	Key       string `json:"key" jsonschema:"key of the entry"`
	RunID     string `json:"run_id,omitempty" jsonschema:"run id recorded with the write (default: the server's --run)"`
	TaskID    string `json:"task_id,omitempty" jsonschema:"task id recorded with the write (default: the server's --task)"`
}

func (s *Server) deleteKV(_ context.Context, a *KVArgs) (records.Commit, error) {
	scope := s.kvScope(a.Scope)
	return s.write(ProvenanceArgs{Scope: scope, RunID: a.RunID, TaskID: a.TaskID}, func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteKV(scope, a.Namespace, a.Key)
	})
}

// GetKVArgs: get_kv.
type GetKVArgs struct {
	Scope     string `json:"scope,omitempty" jsonschema:"scope of the entry (default: the server's --scope)"`
	Namespace string `json:"namespace" jsonschema:"namespace of the entry"`
	Key       string `json:"key" jsonschema:"key of the entry"`
	ViewArgs
	ValidAtArgs
}

func (s *Server) getKV(_ context.Context, a *GetKVArgs) (records.KV, error) {
	var rec records.KV
	validAt, err := a.validAt(s.opts.Now)
	if err != nil {
		return rec, err
	}
	err = s.read(a.ViewArgs, func(r *lmdbstore.ReadTxn, at lmdbstore.At, _ lmdbstore.Revision) error {
		kv, err := r.GetKV(s.kvScope(a.Scope), a.Namespace, a.Key, at)
		if err != nil {
			return err
		}
		st, err := r.Status(lmdbstore.KVAddress(kv.Scope, kv.Namespace, kv.Key), at, validAt)
		if err != nil {
			return err
		}
		rec = records.KVOf(kv, st)
		return nil
	})
	return rec, err
}

// ListKVArgs: list_kv.
type ListKVArgs struct {
	Scope     string `json:"scope,omitempty" jsonschema:"scope of the entries (default: the server's --scope)"`
	Namespace string `json:"namespace" jsonschema:"namespace to list"`
	ViewArgs
	ListStatusArgs
}

// KVList is the answer of list_kv.
type KVList struct {
	Rev     uint64       `json:"rev" jsonschema:"the revision the read saw"`
	Entries []records.KV `json:"entries" jsonschema:"live entries of the namespace, by key"`
}

func (s *Server) listKV(_ context.Context, a *ListKVArgs) (KVList, error) {
	var res KVList
	f, err := a.filter(s.opts.Now)
	if err != nil {
		return res, err
	}
	err = s.read(a.ViewArgs, func(r *lmdbstore.ReadTxn, at lmdbstore.At, rev lmdbstore.Revision) error {
		kvs, err := r.ListKV(s.kvScope(a.Scope), a.Namespace, at)
		if err != nil {
			return err
		}
		// Superseded and expired entries are history (SPEC.md §4), as in
		// `memctl list-kv`.
		res = KVList{Rev: uint64(rev), Entries: make([]records.KV, 0, len(kvs))}
		for _, kv := range kvs {
			st, err := r.Status(lmdbstore.KVAddress(kv.Scope, kv.Namespace, kv.Key), at, f.ValidAt)
			if err != nil {
				return err
			}
			if f.Shows(st) {
				res.Entries = append(res.Entries, records.KVOf(kv, st))
			}
		}
		return nil
	})
	return res, err
}
