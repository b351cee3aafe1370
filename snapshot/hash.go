package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
)

// LogicalHashDomain opens the hashed stream, so the hash of another format
// version's logical content can never collide by construction.
const LogicalHashDomain = "memctl snapshot logical v2\n"

// LogicalHash is the SHA-256 of the snapshot's logical content: what a
// graph is, independent of when and in which order it was written. Two
// snapshots of the same logical state have the same hash even if their
// revisions, timestamps, run/task ids, payload compression, or optional
// sections (PageRank) differ. The hashed stream (all integers
// little-endian; "bytes" is a u64 length then the bytes):
//
//	LogicalHashDomain
//	u64 relation_count, then per relation in id order:
//	    u32 id, bytes name, u32 float bits of default weight, u32 flags
//	u64 node_count, then per node in id order:
//	    u64 id, bytes key, u32 flags (the node row's: missing, valid-time
//	    bounds present, superseded, expired), bytes type, bytes scope,
//	    bytes payload (decoded JSON as stored; empty for none),
//	    i64 valid_from, i64 valid_until (0 when absent)
//	u64 edge_count, then per edge in (src id, rel, dst id) order:
//	    u64 src id, u32 rel, u64 dst id, u32 float bits of weight
//
// It reads the whole file; call Verify first if the file may be damaged
// (LogicalHash itself still never panics and reports bad offsets).
func (f *File) LogicalHash() ([32]byte, error) {
	h := sha256.New()
	w := hashWriter{h: h}
	w.raw([]byte(LogicalHashDomain))
	w.u64(uint64(len(f.relations)))
	for _, r := range f.relations {
		name, err := f.String(r.Name)
		if err != nil {
			return [32]byte{}, err
		}
		w.u32(r.ID)
		w.str(name)
		w.u32(math.Float32bits(r.DefaultWeight))
		w.u32(r.Flags)
	}
	n := uint32(f.NumNodes())
	w.u64(uint64(n))
	for i := uint32(0); i < n; i++ {
		row := f.nodes[i]
		key, err := f.Key(i)
		if err != nil {
			return [32]byte{}, err
		}
		typ, err := f.String(row.Type)
		if err != nil {
			return [32]byte{}, err
		}
		scope, err := f.String(row.Scope)
		if err != nil {
			return [32]byte{}, err
		}
		payload, err := f.Payload(i)
		if err != nil {
			return [32]byte{}, err
		}
		w.u64(f.nodeIDs[i])
		w.str(key)
		w.u32(row.Flags)
		w.str(typ)
		w.str(scope)
		w.bytes(payload)
		w.u64(uint64(row.ValidFrom))
		w.u64(uint64(row.ValidUntil))
	}
	w.u64(uint64(f.NumEdges()))
	for src := uint32(0); src < n; src++ {
		lo, hi, err := f.OutRange(src)
		if err != nil {
			return [32]byte{}, err
		}
		for p := lo; p < hi; p++ {
			t := f.fwdTargets[p]
			if t >= n {
				return [32]byte{}, f.sectionErr(KindFwdTargets, p, 4, "target %d out of range [0, %d)", t, n)
			}
			w.u64(f.nodeIDs[src])
			w.u32(f.fwdRels[p])
			w.u64(f.nodeIDs[t])
			w.u32(math.Float32bits(f.fwdWeights[p]))
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

type hashWriter struct {
	h   hash.Hash
	buf [8]byte
}

func (w *hashWriter) raw(p []byte) { w.h.Write(p) }
func (w *hashWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:4], v)
	w.h.Write(w.buf[:4])
}
func (w *hashWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:], v)
	w.h.Write(w.buf[:])
}
func (w *hashWriter) str(s string) {
	w.u64(uint64(len(s)))
	w.h.Write([]byte(s))
}
func (w *hashWriter) bytes(p []byte) {
	w.u64(uint64(len(p)))
	w.h.Write(p)
}
