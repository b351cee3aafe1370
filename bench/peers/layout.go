package peers

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// The key/value layout bbolt and raw LMDB share: what a user of either
// stores for a graph whose nodes are named by canonical keys — the keys
// themselves, no integer ids and no id → key lookup on the read path. One
// key per edge in each direction, so one prefix scan returns a node's
// edges and each edge key ends with the peer's canonical key.
//
//	nodes: key                   -> type(1) rev(8) payload
//	out:   src 0x00 rel 0x00 dst -> rev(8) weight(f32, 4)
//	in:    dst 0x00 rel 0x00 src -> rev(8) weight(f32, 4)
//
// rel is the relation's name. Canonical keys and relation names hold no
// NUL byte (Load refuses one), so "key 0x00" is exactly a node's prefix.
// LMDB keys are at most 511 bytes: the raw LMDB peer refuses longer edge
// keys (the generator's are under 200).
const edgeValLen = 12

// edgeKey is the out key of (a, rel, b), or the in key of (b, rel, a).
func edgeKey(buf []byte, a, rel, b string) []byte {
	buf = append(append(buf[:0], a...), 0)
	buf = append(append(buf, rel...), 0)
	return append(buf, b...)
}

// nodePrefix is the prefix of every edge key of node key.
func nodePrefix(buf []byte, key string) []byte { return append(append(buf[:0], key...), 0) }

func edgeVal(buf []byte, rev int) []byte {
	buf = binary.BigEndian.AppendUint64(buf[:0], uint64(rev))
	return binary.BigEndian.AppendUint32(buf, math.Float32bits(1.0))
}

func nodeVal(buf []byte, typ uint8, rev int, payload []byte) []byte {
	buf = append(buf[:0], typ)
	buf = binary.BigEndian.AppendUint64(buf, uint64(rev))
	return append(buf, payload...)
}

// splitEdgeKey returns the relation name and the far end's key of an edge
// key under a prefix of length plen, both aliasing k.
func splitEdgeKey(k []byte, plen int) (rel, peer string, err error) {
	rest := k[plen:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return "", "", fmt.Errorf("peers: edge key %q has no relation separator", k)
	}
	return aliasString(rest[:i]), aliasString(rest[i+1:]), nil
}

func valRev(v []byte) int { return int(binary.BigEndian.Uint64(v)) }

// checkName refuses a key or relation name the layout cannot hold.
func checkName(s string) error {
	if s == "" || strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("peers: key or relation %q is empty or holds a NUL byte", s)
	}
	return nil
}

// aliasString views b as a string without copying: valid only while b's
// memory is (inside the read transaction), which is all an EdgeFunc needs.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
