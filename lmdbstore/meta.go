package lmdbstore

// The meta keyspace (SPEC.md §2): the store's counters.
//
//	key:   ASCII name (schema, created, rev, ts, retain, horizon, next_rel)
//	value: 01 ‖ u64 BE ‖ crc
//
// The ts keyspace uses the same value form (ts.go).

import (
	"encoding/binary"
	"errors"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// Meta keys.
const (
	metaSchema  = "schema"   // u64: SchemaVersion
	metaCreated = "created"  // u64: unix ns of Init
	metaRev     = "rev"      // u64: latest committed revision
	metaTS      = "ts"       // u64: commit time of metaRev, unix ns
	metaRetain  = "retain"   // u64: revisions kept readable by Compact (0: all)
	metaHorizon = "horizon"  // u64: oldest readable revision (0: all)
	metaNextRel = "next_rel" // u64: id the next AddRelation gets
)

func u64Value(v uint64) []byte {
	return sealValue(binary.BigEndian.AppendUint64([]byte{fmtPlain}, v))
}

func parseU64Value(v []byte) (uint64, error) {
	v, err := unsealValue(v)
	if err != nil {
		return 0, err
	}
	if len(v) != 9 || v[0] != fmtPlain {
		return 0, errors.New("not a format-1 u64 value")
	}
	return binary.BigEndian.Uint64(v[1:]), nil
}

func getU64(txn *lmdb.Txn, dbi lmdb.DBI, key string) (uint64, error) {
	v, err := txn.Get(dbi, []byte(key))
	if err != nil {
		if lmdb.IsNotFound(err) {
			return 0, &CorruptionError{dbMeta, []byte(key), "missing"}
		}
		return 0, err
	}
	x, err := parseU64Value(v)
	if err != nil {
		return 0, &CorruptionError{dbMeta, []byte(key), err.Error()}
	}
	return x, nil
}
