package peers

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"

	"github.com/memctl/memctl/bench/gen"
)

// The key/value layout bbolt and raw LMDB share: one key per edge in each
// direction, big-endian so a prefix scan returns one node's edges.
//
//	nodes: id(8)                    -> type(1) rev(8) keylen(uvarint) key payload
//	keys:  canonical key            -> id(8)
//	names: id(8)                    -> canonical key (what reads resolve peers with)
//	out:   src(8) rel(4) dst(8)     -> rev(8) weight(f32, 4)
//	in:    dst(8) rel(4) src(8)     -> rev(8) weight(f32, 4)
const (
	edgeKeyLen = 20
	edgeValLen = 12
)

func edgeKey(buf []byte, a uint64, rel uint32, b uint64) []byte {
	buf = binary.BigEndian.AppendUint64(buf[:0], a)
	buf = binary.BigEndian.AppendUint32(buf, rel)
	return binary.BigEndian.AppendUint64(buf, b)
}

func edgeVal(buf []byte, rev int) []byte {
	buf = binary.BigEndian.AppendUint64(buf[:0], uint64(rev))
	return binary.BigEndian.AppendUint32(buf, math.Float32bits(1.0))
}

func nodeVal(buf []byte, typ uint8, rev int, key string, payload []byte) []byte {
	buf = append(buf[:0], typ)
	buf = binary.BigEndian.AppendUint64(buf, uint64(rev))
	buf = binary.AppendUvarint(buf, uint64(len(key)))
	buf = append(buf, key...)
	return append(buf, payload...)
}

func idKey(buf []byte, id uint64) []byte { return binary.BigEndian.AppendUint64(buf[:0], id) }

// splitEdgeKey returns rel and the far end of an edge key.
func splitEdgeKey(k []byte) (rel uint32, peer uint64) {
	return binary.BigEndian.Uint32(k[8:12]), binary.BigEndian.Uint64(k[12:20])
}

func valRev(v []byte) int { return int(binary.BigEndian.Uint64(v)) }

var errNoName = errors.New("peers: node has no name entry")

// aliasString views b as a string without copying: valid only while b's
// memory is (inside the read transaction), which is all an EdgeFunc needs.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// relName is the relation name of a generator relation id.
func relName(rel uint32) string { return gen.Rel(rel).Name() }
