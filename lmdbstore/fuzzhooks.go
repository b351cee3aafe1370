package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Hooks for package fuzz: the key and value decoders of every keyspace,
// reachable without an LMDB environment. Nothing else should call these.

// RecordDecoder decodes keys and values of the store's keyspaces exactly as
// the read paths do. The zero value is ready to use; it is not safe for
// concurrent use.
type RecordDecoder struct {
	s Store // only its zstd codecs are used
}

// DecodeValue decodes value as stored under key in keyspace db ("n", "e",
// "kv", "hist", "rel", "relname", "ids", "meta", "ts", "log", "revs") and returns
// the canonical encoding of what it decoded: the value a writer would store
// for it, uncompressed (format byte 1). canonical is nil for the log, whose
// decoded form drops fields (add_rel id and flags). Errors match ErrCorrupt.
func (d *RecordDecoder) DecodeValue(db string, key, value []byte) (canonical []byte, err error) {
	if ks := keyspaceNamed(db); ks != nil && ks.value != nil {
		return ks.value(d, db, key, value)
	}
	return nil, fmt.Errorf("%w: unknown keyspace %q", ErrInvalid, db)
}

// ParseKey parses key as a key of keyspace db the way the read paths and
// Check do, and returns its canonical encoding.
func (d *RecordDecoder) ParseKey(db string, key []byte) (canonical []byte, err error) {
	if ks := keyspaceNamed(db); ks != nil && ks.key != nil {
		return ks.key(d, db, key)
	}
	return nil, fmt.Errorf("%w: unknown keyspace %q", ErrInvalid, db)
}

// The hooks of the keyspace table's value and key columns.

// corruptKey is the fuzz hooks' corruption of a keyspace's key.
func corruptKey(db string, key []byte, msg string) error {
	return &CorruptionError{db, bytes.Clone(key), msg}
}

// recordValue decodes an n, e or kv value: a record body of hist kind kind.
func recordValue(kind byte) func(d *RecordDecoder, db string, key, value []byte) ([]byte, error) {
	return func(d *RecordDecoder, db string, key, value []byte) ([]byte, error) {
		return d.record(db, kind, key, value)
	}
}

// histValue decodes a hist value: the body of the kind its key starts with.
func histValue(d *RecordDecoder, db string, key, value []byte) ([]byte, error) {
	if len(key) == 0 {
		return nil, corruptKey(db, key, "empty key")
	}
	return d.record(db, key[0], key, value)
}

// record decodes a record of hist kind kind stored in db and returns it
// re-encoded plain.
func (d *RecordDecoder) record(db string, kind byte, key, value []byte) (_ []byte, err error) {
	plain := func(body []byte) []byte { return sealValue(append([]byte{fmtPlain}, body...)) }
	switch kind {
	case histNode:
		var r nodeRec
		err = d.s.decodeRecord(db, key, value, r.decodeBody)
		return plain(r.appendBody(nil)), err
	case histEdge:
		var r edgeRec
		err = d.s.decodeRecord(db, key, value, r.decodeBody)
		return plain(r.appendBody(nil)), err
	case histKV:
		var r kvRec
		err = d.s.decodeRecord(db, key, value, r.decodeBody)
		return plain(r.appendBody(nil)), err
	}
	return nil, corruptKey(db, key, "unknown hist kind")
}

func decodeRelValue(_ *RecordDecoder, db string, key, value []byte) ([]byte, error) {
	if len(key) != 4 {
		return nil, corruptKey(db, key, "key is not 4 bytes")
	}
	r, err := decodeRel(RelID(binary.BigEndian.Uint32(key)), value)
	if err != nil {
		return nil, corruptKey(db, key, err.Error())
	}
	return encodeRel(r), nil
}

func decodeRelNameValue(_ *RecordDecoder, db string, key, value []byte) ([]byte, error) {
	return reencode(db, key, value, parseRelNameValue, relNameValue)
}

func decodeIDsValue(_ *RecordDecoder, db string, key, value []byte) ([]byte, error) {
	return reencode(db, key, value, parseIDsValue, func(k []byte) []byte { return idsValue(string(k)) })
}

// decodeU64Value decodes a meta or ts value (the same form).
func decodeU64Value(_ *RecordDecoder, db string, key, value []byte) ([]byte, error) {
	return reencode(db, key, value, parseU64Value, u64Value)
}

// reencode decodes value with parse and returns enc of the result: the
// value hook of a keyspace whose values have one plain codec.
func reencode[T any](db string, key, value []byte, parse func([]byte) (T, error), enc func(T) []byte) ([]byte, error) {
	x, err := parse(value)
	if err != nil {
		return nil, corruptKey(db, key, err.Error())
	}
	return enc(x), nil
}

func decodeLogValue(d *RecordDecoder, _ string, key, value []byte) ([]byte, error) {
	_, err := d.s.decodeLog(key, value)
	return nil, err
}

func decodeRevsValue(_ *RecordDecoder, db string, key, value []byte) ([]byte, error) {
	return reencode(db, key, value, parseRevsValue, revsValue)
}

// adjKeyCanonical parses an out, in or e key (all 20 bytes: node, rel, peer).
func adjKeyCanonical(_ *RecordDecoder, db string, key []byte) ([]byte, error) {
	node, rel, peer, ok := parseAdjKey(key)
	if !ok {
		return nil, corruptKey(db, key, "key is not 20 bytes")
	}
	return adjKey(node, rel, peer), nil
}

func kvKeyCanonical(_ *RecordDecoder, db string, key []byte) ([]byte, error) {
	scope, ns, k, err := parseKVKey(key)
	if err != nil || validKVKey(scope, ns, k) != nil {
		return nil, corruptKey(db, key, "bad key")
	}
	return kvKey(scope, ns, k), nil
}

func histKeyCanonical(d *RecordDecoder, db string, key []byte) ([]byte, error) {
	if len(key) < 10 {
		return nil, corruptKey(db, key, "key too short")
	}
	_, latest, ok := d.s.latestRecordKey(key[0], key[1:len(key)-8])
	if !ok {
		return nil, corruptKey(db, key, "bad kind or entity")
	}
	entity := latest
	if key[0] == histKV {
		scope, ns, k, err := parseKVKey(latest)
		if err != nil {
			return nil, corruptKey(db, key, "bad kv entity")
		}
		entity = kvEntity(scope, ns, k)
	}
	return histKey(key[0], entity, Revision(binary.BigEndian.Uint64(key[len(key)-8:]))), nil
}

// id8Key parses an n, ids, log, ts or revs key (8 bytes).
func id8Key(_ *RecordDecoder, db string, key []byte) ([]byte, error) {
	if len(key) != 8 {
		return nil, corruptKey(db, key, "key is not 8 bytes")
	}
	return bytes.Clone(key), nil
}

func relKeyCanonical(_ *RecordDecoder, db string, key []byte) ([]byte, error) {
	if len(key) != 4 {
		return nil, corruptKey(db, key, "key is not 4 bytes")
	}
	return bytes.Clone(key), nil
}

// Close releases nothing: the zstd codecs are the process's (Store.zstd).
func (d *RecordDecoder) Close() {}
