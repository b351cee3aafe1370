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
	plain := func(body []byte) []byte { return sealValue(append([]byte{fmtPlain}, body...)) }
	switch db {
	case dbNodes, dbEdges, dbKV, dbHist:
		kind := map[string]byte{dbNodes: histNode, dbEdges: histEdge, dbKV: histKV}[db]
		if db == dbHist {
			if len(key) == 0 {
				return nil, &CorruptionError{db, bytes.Clone(key), "empty key"}
			}
			kind = key[0]
		}
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
		return nil, &CorruptionError{db, bytes.Clone(key), "unknown hist kind"}
	case dbRel:
		if len(key) != 4 {
			return nil, &CorruptionError{db, bytes.Clone(key), "key is not 4 bytes"}
		}
		r, err := decodeRel(RelID(binary.BigEndian.Uint32(key)), value)
		if err != nil {
			return nil, &CorruptionError{db, bytes.Clone(key), err.Error()}
		}
		return encodeRel(r), nil
	case dbRelName:
		id, err := parseRelNameValue(value)
		if err != nil {
			return nil, &CorruptionError{db, bytes.Clone(key), err.Error()}
		}
		return relNameValue(id), nil
	case dbIDs:
		k, err := parseIDsValue(value)
		if err != nil {
			return nil, &CorruptionError{db, bytes.Clone(key), err.Error()}
		}
		return idsValue(string(k)), nil
	case dbMeta, dbTS:
		v, err := parseU64Value(value)
		if err != nil {
			return nil, &CorruptionError{db, bytes.Clone(key), err.Error()}
		}
		return u64Value(v), nil
	case dbLog:
		_, err := d.s.decodeLog(key, value)
		return nil, err
	case dbRevs:
		m, err := parseRevsValue(value)
		if err != nil {
			return nil, &CorruptionError{db, bytes.Clone(key), err.Error()}
		}
		return revsValue(m), nil
	}
	return nil, fmt.Errorf("%w: unknown keyspace %q", ErrInvalid, db)
}

// ParseKey parses key as a key of keyspace db the way the read paths and
// Check do, and returns its canonical encoding.
func (d *RecordDecoder) ParseKey(db string, key []byte) (canonical []byte, err error) {
	bad := func(msg string) ([]byte, error) {
		return nil, &CorruptionError{db, bytes.Clone(key), msg}
	}
	switch db {
	case dbOut, dbIn, dbEdges:
		node, rel, peer, ok := parseAdjKey(key)
		if !ok {
			return bad("key is not 20 bytes")
		}
		return adjKey(node, rel, peer), nil
	case dbKV:
		scope, ns, k, err := parseKVKey(key)
		if err != nil || validKVKey(scope, ns, k) != nil {
			return bad("bad key")
		}
		return kvKey(scope, ns, k), nil
	case dbHist:
		if len(key) < 10 {
			return bad("key too short")
		}
		_, latest, ok := d.s.latestRecordKey(key[0], key[1:len(key)-8])
		if !ok {
			return bad("bad kind or entity")
		}
		entity := latest
		if key[0] == histKV {
			scope, ns, k, err := parseKVKey(latest)
			if err != nil {
				return bad("bad kv entity")
			}
			entity = kvEntity(scope, ns, k)
		}
		return histKey(key[0], entity, Revision(binary.BigEndian.Uint64(key[len(key)-8:]))), nil
	case dbNodes, dbIDs, dbLog, dbTS, dbRevs:
		if len(key) != 8 {
			return bad("key is not 8 bytes")
		}
		return bytes.Clone(key), nil
	case dbRel:
		if len(key) != 4 {
			return bad("key is not 4 bytes")
		}
		return bytes.Clone(key), nil
	}
	return nil, fmt.Errorf("%w: unknown keyspace %q", ErrInvalid, db)
}

// Close releases the decoder's zstd state.
func (d *RecordDecoder) Close() {
	if d.s.zdec != nil {
		d.s.zdec.Close()
	}
}
