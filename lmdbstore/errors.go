package lmdbstore

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the store returns matches exactly one of
// these with errors.Is; the typed errors below carry the details.
var (
	// ErrNotFound: no such node, edge, kv entry, relation or revision.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the caller's input is malformed (bad key, bad JSON, bad weight...).
	ErrInvalid = errors.New("invalid input")
	// ErrUnknownRelation: a relation name that is not registered (also ErrInvalid).
	ErrUnknownRelation = errors.New("unknown relation")
	// ErrCollision: two canonical keys hash to the same NodeID.
	ErrCollision = errors.New("id collision")
	// ErrCorrupt: a stored key or value does not decode or breaks an invariant.
	ErrCorrupt = errors.New("corrupt store")
	// ErrBeforeHorizon: a point-in-time read older than the retention horizon.
	ErrBeforeHorizon = errors.New("revision is older than the retention horizon")
	// ErrNewerSchema: the store was written by a newer schema version.
	ErrNewerSchema = errors.New("store written by a newer schema")
	// ErrNotExist: no store at the path.
	ErrNotExist = errors.New("no store at path")
	// ErrExists: Init on a path that already holds a store.
	ErrExists = errors.New("store already exists")
	// ErrMapFull: the map reached MaxMapSize or the disk is full.
	ErrMapFull = errors.New("store is full")
	// ErrReadOnly: a write on a store opened read-only or a read-only path.
	ErrReadOnly = errors.New("store is read-only")
	// ErrClosed: a read on a store after Close.
	ErrClosed = errors.New("store is closed")
	// ErrPermission: the operating system refused access to the store's
	// directory or files (EACCES, EPERM, EROFS). A store that cannot be
	// written is still opened by reads (Options.ReadOnly, store.go).
	ErrPermission = errors.New("permission denied")
	// ErrNotEmpty: a bulk load that must go into an empty store
	// (Bulk.RequireEmpty) found a node or an edge there when it committed;
	// nothing was written.
	ErrNotEmpty = errors.New("store is no longer empty")
	// ErrDiskFull: the file system holding the store has no room left
	// (ENOSPC, EDQUOT, or a short write on a full file system). The write
	// that met it committed nothing.
	ErrDiskFull = errors.New("disk full")
)

// CorruptionError names what is damaged: the keyspace (DBI name), the raw
// key, and what is wrong. errors.Is(err, ErrCorrupt) holds.
type CorruptionError struct {
	Keyspace string
	Key      []byte
	Msg      string
}

func (e *CorruptionError) Error() string {
	if len(e.Key) == 0 {
		return fmt.Sprintf("corrupt %s: %s", e.Keyspace, e.Msg)
	}
	return fmt.Sprintf("corrupt %s entry %x: %s", e.Keyspace, e.Key, e.Msg)
}

func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// CollisionError: Key and Existing both hash to ID. errors.Is(err, ErrCollision).
type CollisionError struct {
	ID       NodeID
	Key      string
	Existing string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("id collision: %q and existing %q both hash to %016x", e.Key, e.Existing, uint64(e.ID))
}

func (e *CollisionError) Is(target error) bool { return target == ErrCollision }

// UnknownRelationError: Name is not registered; Suggestion is the nearest
// known name (may be empty). errors.Is matches ErrUnknownRelation and ErrInvalid.
type UnknownRelationError struct {
	Name       string
	Suggestion string
}

func (e *UnknownRelationError) Error() string {
	if e.Suggestion != "" {
		return fmt.Sprintf("unknown relation %q (did you mean %q?)", e.Name, e.Suggestion)
	}
	return fmt.Sprintf("unknown relation %q", e.Name)
}

func (e *UnknownRelationError) Is(target error) bool {
	return target == ErrUnknownRelation || target == ErrInvalid
}
