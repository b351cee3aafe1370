package lmdbstore

// The rel and relname keyspaces (SPEC.md §2): the relation table and its
// name index.
//
//	rel key:       rel id u32 BE
//	rel value:     02 ‖ flags u8 (bit0 bidirectional, bit1 inhibitory,
//	               bits 2–3 the role) ‖ default weight f32 LE ‖
//	               uvarint created_rev ‖ name bytes ‖ crc
//	               (01: schema 1, no created_rev and no role)
//	relname key:   name bytes
//	relname value: 01 ‖ rel id u32 BE ‖ crc
//
// Relations are never removed; a past state has those with
// created_rev ≤ its revision. Committed relations are cached (relCache).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/suggest"
)

func relKey(id RelID) []byte { return binary.BigEndian.AppendUint32(nil, uint32(id)) }

// relNameValue is the value of a `relname` entry: the relation's id.
func relNameValue(id RelID) []byte {
	return sealValue(append([]byte{fmtPlain}, relKey(id)...))
}

func parseRelNameValue(v []byte) (RelID, error) {
	v, err := unsealValue(v)
	if err != nil {
		return 0, err
	}
	if len(v) != 5 || v[0] != fmtPlain {
		return 0, errors.New("bad value")
	}
	return RelID(binary.BigEndian.Uint32(v[1:])), nil
}

// Relation values (`rel`): format u8 ‖ flags u8 (bit0 bidirectional, bit1
// inhibitory, bits 2–3 the role, format 02 only) ‖ default weight f32 LE ‖
// [uvarint created_rev, format 02 only] ‖ name bytes ‖ crc. Schema 2
// writes 02; 01 (no creation revision) exists only in schema-1 stores,
// which Open upgrades.
const (
	relFormatV1 = 0x01
	relFormatV2 = 0x02
)

func encodeRel(r Relation) []byte {
	b := []byte{relFormatV2, 0}
	if r.Bidirectional {
		b[1] |= 1
	}
	if r.Inhibitory {
		b[1] |= 2
	}
	b[1] |= r.Role.Bits()
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r.DefaultWeight))
	b = binary.AppendUvarint(b, uint64(r.CreatedRev))
	return sealValue(append(b, r.Name...))
}

// decodeRel decodes a schema-2 relation value.
func decodeRel(id RelID, v []byte) (Relation, error) {
	return decodeRelFormat(id, v, relFormatV2)
}

// decodeRelFormat decodes a relation value of the given format (01 only
// while upgrading a schema-1 store: its CreatedRev is then 0).
func decodeRelFormat(id RelID, v []byte, format byte) (Relation, error) {
	v, err := unsealValue(v)
	if err != nil {
		return Relation{}, err
	}
	if len(v) < 6 || v[0] != format {
		return Relation{}, errors.New("bad relation value")
	}
	known := byte(3) // 01: bidirectional, inhibitory
	if format == relFormatV2 {
		known |= roles.Mask // 02: and the role
	}
	if v[1]&^known != 0 {
		return Relation{}, fmt.Errorf("unknown relation flags %#x", v[1])
	}
	r := Relation{
		ID:            id,
		DefaultWeight: math.Float32frombits(binary.LittleEndian.Uint32(v[2:])),
		Bidirectional: v[1]&1 != 0, Inhibitory: v[1]&2 != 0,
		Role: roles.FromFlags(uint32(v[1])),
	}
	name := v[6:]
	if format == relFormatV2 {
		created, n := binary.Uvarint(name)
		if n <= 0 || n != uvarintLen(created) {
			return Relation{}, errors.New("bad relation creation revision")
		}
		r.CreatedRev, name = Revision(created), name[n:]
	}
	r.Name = string(name)
	if err := validRelName(r.Name); err != nil {
		return Relation{}, err
	}
	return r, nil
}

// uvarintLen is the length of x's minimal uvarint encoding.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

func validRelName(name string) error {
	if name == "" || len(name) > maxRelNameLen {
		return fmt.Errorf("%w: relation name must be 1 to %d bytes", ErrInvalid, maxRelNameLen)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return fmt.Errorf("%w: relation name %q: only letters, digits, '_', '-', '.'", ErrInvalid, name)
		}
	}
	return nil
}

// builtinRelations exist with their ids (1…n, in order) in every store:
// the rows of the relation vocabulary (roles) that carry a fixed id.
var builtinRelations = roles.Builtins()

type relCache struct {
	byID   map[RelID]Relation
	byName map[string]Relation
}

// loadRelations fills the relation cache.
func (s *Store) loadRelations() error {
	return s.View(func(r *ReadTxn) error {
		rels, err := r.Relations()
		for _, rel := range rels {
			s.cacheRel(rel)
		}
		if errors.Is(err, ErrCorrupt) {
			return nil // reads that need the damaged relation fail; Check reports it
		}
		return err
	})
}

// Relations lists every relation in id order.
func (r *ReadTxn) Relations() ([]Relation, error) {
	cur, err := r.txn().OpenCursor(r.s.db.rel)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	var rels []Relation
	for op := uint(lmdb.First); ; op = lmdb.Next {
		k, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			return rels, nil
		}
		if err != nil {
			return nil, err
		}
		if len(k) != 4 || binary.BigEndian.Uint32(k) == 0 {
			return nil, &CorruptionError{dbRel, bytes.Clone(k), "bad relation id"}
		}
		rel, err := decodeRel(RelID(binary.BigEndian.Uint32(k)), v)
		if err == nil {
			err = r.checkRelName(rel)
		}
		if err != nil {
			return nil, &CorruptionError{dbRel, bytes.Clone(k), err.Error()}
		}
		rels = append(rels, rel)
	}
}

// RelationByName resolves a relation name; an unknown name is an
// *UnknownRelationError suggesting the nearest known name.
func (r *ReadTxn) RelationByName(name string) (Relation, error) {
	rel, ok, err := r.relationNamed(name)
	if err == nil && !ok {
		err = r.unknownRelation(name)
	}
	return rel, err
}

// relationNamed looks a relation up by name; ok is false when none has it.
// No error is built for a missing one: callers that only ask whether a
// relation exists (an edge's status asks about contradicts, which most
// stores never register) do not pay for the "did you mean" suggestion.
func (r *ReadTxn) relationNamed(name string) (Relation, bool, error) {
	if rel, ok := r.s.cachedRel(0, name); ok {
		return rel, true, nil
	}
	v, err := r.txn().Get(r.s.db.relname, []byte(name))
	if lmdb.IsNotFound(err) || (err == nil && name == "") {
		return Relation{}, false, nil
	}
	if err != nil {
		return Relation{}, false, err
	}
	id, perr := parseRelNameValue(v)
	if perr != nil {
		return Relation{}, false, &CorruptionError{dbRelName, []byte(name), perr.Error()}
	}
	rel, err := r.RelationByID(id)
	if errors.Is(err, ErrNotFound) {
		return Relation{}, false, &CorruptionError{dbRelName, []byte(name), fmt.Sprintf("names missing relation id %d", id)}
	}
	if err == nil && rel.Name != name {
		return Relation{}, false, &CorruptionError{dbRelName, []byte(name), fmt.Sprintf("names relation %d called %q", rel.ID, rel.Name)}
	}
	return rel, err == nil, err
}

func (r *ReadTxn) unknownRelation(name string) error {
	rels, err := r.Relations()
	if err != nil {
		return err
	}
	names := make([]string, len(rels))
	for i, rel := range rels {
		names[i] = rel.Name
	}
	return &UnknownRelationError{Name: name, Suggestion: suggest.Nearest(name, names)}
}

// RelationByID resolves a relation id (ErrNotFound if unknown).
func (r *ReadTxn) RelationByID(id RelID) (Relation, error) {
	if rel, ok := r.s.cachedRel(id, ""); ok {
		return rel, nil
	}
	k := relKey(id)
	v, err := r.txn().Get(r.s.db.rel, k)
	if lmdb.IsNotFound(err) {
		return Relation{}, fmt.Errorf("%w: relation id %d", ErrNotFound, id)
	}
	if err != nil {
		return Relation{}, classifyLMDB(dbRel, k, err)
	}
	rel, err := decodeRel(id, v)
	if err == nil {
		err = r.checkRelName(rel)
	}
	if err != nil {
		return Relation{}, &CorruptionError{dbRel, k, err.Error()}
	}
	if !r.inWrite {
		r.s.cacheRel(rel) // committed: relations never change once written
	}
	return rel, nil
}

// checkRelName verifies that relname maps rel's name back to its id (the
// two keyspaces are mirror images; a damaged name fails here).
func (r *ReadTxn) checkRelName(rel Relation) error {
	v, err := r.txn().Get(r.s.db.relname, []byte(rel.Name))
	var id RelID
	if err == nil {
		id, err = parseRelNameValue(v)
	}
	if err != nil || id != rel.ID {
		return fmt.Errorf("name %q is not mapped back to id %d by relname", rel.Name, rel.ID)
	}
	return nil
}

func (s *Store) cachedRel(id RelID, name string) (Relation, bool) {
	if rel := s.tabledRel(id); rel != nil {
		return *rel, true
	}
	s.relMu.Lock()
	defer s.relMu.Unlock()
	if id != 0 {
		rel, ok := s.rels.byID[id]
		return rel, ok
	}
	rel, ok := s.rels.byName[name]
	return rel, ok
}

// tabledRel is id's row of the committed relations' table, or nil (read
// without the lock; rows are never written once published).
func (s *Store) tabledRel(id RelID) *Relation {
	if t := s.relTable.Load(); id != 0 && t != nil && int(id) < len(*t) && (*t)[id].ID == id {
		return &(*t)[id]
	}
	return nil
}

func (s *Store) cacheRel(rel Relation) {
	s.relMu.Lock()
	defer s.relMu.Unlock()
	if s.rels.byID == nil {
		s.rels = relCache{byID: map[RelID]Relation{}, byName: map[string]Relation{}}
	}
	s.rels.byID[rel.ID] = rel
	s.rels.byName[rel.Name] = rel
	// Readers index relTable without the lock: publish a new copy.
	var t []Relation
	if old := s.relTable.Load(); old != nil {
		t = *old
	}
	t = append(make([]Relation, 0, max(len(t), int(rel.ID)+1)), t...)
	for len(t) <= int(rel.ID) {
		t = append(t, Relation{})
	}
	t[rel.ID] = rel
	s.relTable.Store(&t)
	if uint32(rel.ID) > s.maxRel.Load() {
		s.maxRel.Store(uint32(rel.ID))
	}
}

// validRel reports whether id names a relation, consulting the store only
// for ids above the largest one seen (ids are dense and never removed).
func (r *ReadTxn) validRel(id uint32) bool {
	if id != 0 && id <= r.s.maxRel.Load() {
		return true
	}
	_, err := r.RelationByID(RelID(id))
	return err == nil && id != 0
}

func (r *ReadTxn) relFilter(rel string) (RelID, error) {
	if rel == "" {
		return 0, nil
	}
	x, err := r.RelationByName(rel)
	return x.ID, err
}

// relByName resolves a relation inside the write transaction (it sees
// relations this transaction added).
func (tx *WriteTxn) relByName(name string) (Relation, error) {
	return tx.r.RelationByName(name)
}

// AddRelation registers a new relation and returns its id (r.ID is
// ignored). DefaultWeight 0 means 1.0; the zero Role is memory. A name
// already registered is ErrInvalid.
func (tx *WriteTxn) AddRelation(r Relation) (RelID, error) {
	if tx.err != nil {
		return 0, tx.err
	}
	if err := tx.red.relName(r.Name); err != nil {
		return 0, err
	}
	if err := validRelName(r.Name); err != nil {
		return 0, err
	}
	if r.DefaultWeight == 0 {
		r.DefaultWeight = 1
	}
	if err := validWeight(r.DefaultWeight); err != nil {
		return 0, err
	}
	if !r.Role.Valid() {
		return 0, fmt.Errorf("%w: relation %q: invalid role %d", ErrInvalid, r.Name, r.Role)
	}
	if _, err := tx.txn.Get(tx.s.db.relname, []byte(r.Name)); err == nil {
		return 0, fmt.Errorf("%w: relation %q already exists", ErrInvalid, r.Name)
	} else if !lmdb.IsNotFound(err) {
		return 0, tx.fail(err)
	}
	if tx.nextRel == 0 || tx.nextRel == math.MaxUint32 {
		return 0, tx.fail(&CorruptionError{dbMeta, []byte(metaNextRel), "relation ids exhausted"})
	}
	r.ID, r.CreatedRev = tx.nextRel, tx.rev
	if err := tx.txn.Put(tx.s.db.rel, relKey(r.ID), encodeRel(r), 0); err != nil {
		return 0, tx.fail(err)
	}
	if err := tx.txn.Put(tx.s.db.relname, []byte(r.Name), relNameValue(r.ID), 0); err != nil {
		return 0, tx.fail(err)
	}
	tx.nextRel++
	if err := tx.txn.Put(tx.s.db.meta, []byte(metaNextRel), u64Value(uint64(tx.nextRel)), 0); err != nil {
		return 0, tx.fail(err)
	}
	scope, run, task := tx.inherit("", "", "")
	tx.op(OpAddRel, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, r.Name)
		b = binary.BigEndian.AppendUint32(b, uint32(r.ID))
		b = append(b, encodeRel(r)[1])
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(r.DefaultWeight))
	})
	tx.event("write", "rel:"+r.Name, "relation", scope, run, task, nil)
	return r.ID, nil
}
