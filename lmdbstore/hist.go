package lmdbstore

// The hist keyspace (SPEC.md §2): every superseded version of a node, edge
// or kv entry, under the revision that wrote it.
//
//	key:   kind u8 ‖ entity ‖ rev u64 BE, where
//	       kind 'n' (0x6e): entity is the node id (8 bytes)
//	       kind 'e' (0x65): entity is the 20-byte edge key
//	       kind 'k' (0x6b): entity is str(scope) ‖ str(namespace) ‖ str(key)
//	value: record envelope (records.go) of the superseded body ‖ crc
//
// The entity part is prefix-free, so one entity's versions are contiguous
// and ordered by revision. Walks over whole histories are in history.go.

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// hist key kinds.
const (
	histNode byte = 'n'
	histEdge byte = 'e'
	histKV   byte = 'k'
)

func histKey(kind byte, entity []byte, rev Revision) []byte {
	k := make([]byte, 0, 1+len(entity)+8)
	k = append(k, kind)
	k = append(k, entity...)
	return binary.BigEndian.AppendUint64(k, uint64(rev))
}

// histAt finds the newest hist version of an entity at or below view.
func (r *ReadTxn) histAt(kind byte, entity []byte, view Revision) ([]byte, []byte, bool, error) {
	cur, err := r.txn().OpenCursor(r.s.db.hist)
	if err != nil {
		return nil, nil, false, err
	}
	defer cur.Close()
	prefix := append([]byte{kind}, entity...)
	var k, v []byte
	if view == math.MaxUint64 {
		k, v, err = cur.Get(append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), nil, lmdb.SetRange)
	} else {
		k, v, err = cur.Get(histKey(kind, entity, view+1), nil, lmdb.SetRange)
	}
	switch {
	case err == nil:
		k, v, err = cur.Get(nil, nil, lmdb.Prev)
	case lmdb.IsNotFound(err):
		k, v, err = cur.Get(nil, nil, lmdb.Last)
	}
	if lmdb.IsNotFound(err) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	if len(k) != len(prefix)+8 || !bytes.HasPrefix(k, prefix) {
		return nil, nil, false, nil
	}
	return k, v, true, nil
}

// toHist copies the current value of an entity to hist under its revision,
// compressing large values.
func (tx *WriteTxn) toHist(dbName string, kind byte, entity, cur []byte, rev Revision) error {
	body, err := tx.s.decodeEnvelope(dbName, entity, cur)
	if err != nil {
		return tx.fail(err)
	}
	val := tx.envelope(body, true)
	if err := tx.txn.Put(tx.s.db.hist, histKey(kind, entity, rev), val, 0); err != nil {
		return tx.fail(err)
	}
	return nil
}
