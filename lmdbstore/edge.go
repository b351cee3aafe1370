package lmdbstore

// The e keyspace (SPEC.md §2): the latest version of every edge whose
// record is not implicit (edgerec.go).
//
//	key:   src id u64 BE ‖ rel id u32 BE ‖ dst id u64 BE (20 bytes)
//	value: record envelope (records.go) of an edge body ‖ crc
//	body:  flags u8 (bit0 tombstone, bit1 weight explicit) ‖ uvarint rev ‖
//	       uvarint created_rev ‖ uvarint created_ts ‖ uvarint updated_ts ‖
//	       weight f32 LE ‖ str scope ‖ str run_id ‖ str task_id ‖ str payload
//
// Every edge version is also an entry in the out list of its source and the
// in list of its destination (adj.go); a replaced version goes to hist.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

func edgeKey(src NodeID, rel RelID, dst NodeID) []byte {
	k := make([]byte, 20)
	binary.BigEndian.PutUint64(k, uint64(src))
	binary.BigEndian.PutUint32(k[8:], uint32(rel))
	binary.BigEndian.PutUint64(k[12:], uint64(dst))
	return k
}

// edgeRec is the body of an `e` value.
type edgeRec struct {
	flags      byte
	rev        Revision
	createdRev Revision
	createdTS  uint64
	updatedTS  uint64
	weight     float32
	scope      string
	run        string
	task       string
	payload    []byte
}

func (r *edgeRec) tombstone() bool { return r.flags&recTombstone != 0 }

func (r *edgeRec) appendBody(b []byte) []byte {
	b = append(b, r.flags)
	b = binary.AppendUvarint(b, uint64(r.rev))
	b = binary.AppendUvarint(b, uint64(r.createdRev))
	b = binary.AppendUvarint(b, r.createdTS)
	b = binary.AppendUvarint(b, r.updatedTS)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r.weight))
	b = appendStr(b, r.scope)
	b = appendStr(b, r.run)
	b = appendStr(b, r.task)
	return appendStr(b, string(r.payload))
}

func (r *edgeRec) decodeBody(body []byte) error {
	d := decoder{b: body}
	r.flags = d.u8()
	r.rev = Revision(d.uvarint())
	r.createdRev = Revision(d.uvarint())
	r.createdTS = d.uvarint()
	r.updatedTS = d.uvarint()
	r.weight = d.f32()
	r.scope = d.str()
	r.run = d.str()
	r.task = d.str()
	r.payload = d.bytes()
	d.end()
	if d.err == nil && r.flags&^(recTombstone|recWeight) != 0 {
		return fmt.Errorf("unknown edge flags %#x", r.flags)
	}
	return d.err
}

func validWeight(w float32) error {
	if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) || w <= 0 {
		return fmt.Errorf("%w: weight %v must be finite and positive", ErrInvalid, w)
	}
	return nil
}

func (r *ReadTxn) edgeAt(src NodeID, rel RelID, dst NodeID, view Revision, rec *edgeRec) (bool, error) {
	k := edgeKey(src, rel, dst)
	_, _, found, err := r.currentEdge(src, rel, dst, rec)
	if err != nil || !found {
		return false, err
	}
	if rec.rev > view {
		hk, hv, ok, err := r.histAt(histEdge, k, view)
		if err != nil || !ok {
			return false, err
		}
		if err := r.s.decodeRecord(dbHist, hk, hv, rec.decodeBody); err != nil {
			return false, err
		}
	}
	return !rec.tombstone(), nil
}

// ScanEdges calls fn for every live edge at the view in (src, rel, dst) order.
func (r *ReadTxn) ScanEdges(at At, fn func(Edge) error) error {
	return r.scanEdges(at, nil, fn)
}

// ScanEdgesOf is ScanEdges for the edges of the relations rels only: the
// others are decoded and checked as ScanEdges does, but not resolved
// against the view or handed out (a scan for a few memory edges among a
// code graph's hundreds of thousands).
func (r *ReadTxn) ScanEdgesOf(at At, rels []RelID, fn func(Edge) error) error {
	want := []bool{}
	for _, id := range rels {
		if int(id) >= len(want) {
			want = append(want, make([]bool, int(id)+1-len(want))...)
		}
		want[id] = true
	}
	return r.scanEdges(at, want, fn)
}

// scanEdges is ScanEdges over the relations want marks (nil: all).
func (r *ReadTxn) scanEdges(at At, want []bool, fn func(Edge) error) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	if r.inWrite {
		if err := r.w.flushAdj(); err != nil {
			return err
		}
	}
	cur, err := r.txn().OpenCursor(r.s.db.out)
	if err != nil {
		return err
	}
	defer cur.Close()
	vis := adjacency.Visible{View: uint64(view)}
	var it adjacency.Iterator
	var node NodeID
	var last adjacency.Entry
	emit := func(e adjacency.Entry) error {
		return fn(Edge{Src: node, Rel: RelID(e.Rel), Dst: NodeID(e.Peer), Rev: Revision(e.Rev), Weight: e.Weight})
	}
	for op := uint(lmdb.First); ; op = lmdb.Next {
		k, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			break
		}
		if err != nil {
			return err
		}
		n, _, _, ok := parseAdjKey(k)
		if !ok {
			return &CorruptionError{dbOut, bytes.Clone(k), "key is not 20 bytes"}
		}
		if n != node {
			if got, ok := vis.Flush(); ok {
				if err := emit(got); err != nil {
					return err
				}
			}
			node = n
			last = adjacency.Entry{}
		}
		it.Reset(v)
		first := true
		for it.Next() {
			e := it.Entry()
			if first {
				if err := checkChunkStart(dbOut, k, e, last); err != nil {
					return err
				}
				first = false
			}
			last = e
			if !r.validRel(e.Rel) {
				return &CorruptionError{dbOut, bytes.Clone(k), fmt.Sprintf("invalid relation id %d", e.Rel)}
			}
			if want != nil && (int(e.Rel) >= len(want) || !want[e.Rel]) {
				continue // every version of an edge has its relation: whole edges are left out
			}
			if got, ok := vis.Push(e); ok {
				if err := emit(got); err != nil {
					return err
				}
			}
		}
		if err := it.Err(); err != nil {
			return &CorruptionError{dbOut, bytes.Clone(k), err.Error()}
		}
	}
	if got, ok := vis.Flush(); ok {
		return emit(got)
	}
	return nil
}

// GetEdge returns the e: record of the live edge at the view.
func (r *ReadTxn) GetEdge(src, rel, dst string, at At) (EdgeRecord, error) {
	x, err := r.RelationByName(rel)
	if err != nil {
		return EdgeRecord{}, err
	}
	srcID, knownSrc, err := r.idOf(src)
	if err != nil {
		return EdgeRecord{}, err
	}
	dstID, knownDst, err := r.idOf(dst)
	if err != nil {
		return EdgeRecord{}, err
	}
	view, err := r.view(at)
	if err != nil {
		return EdgeRecord{}, err
	}
	var rec edgeRec
	found := false
	if knownSrc && knownDst {
		found, err = r.edgeAt(srcID, x.ID, dstID, view, &rec)
		if err != nil {
			return EdgeRecord{}, err
		}
	}
	r.emitRead("read", "e:"+src+":"+rel+":"+dst, "edge", rec.rev, func(e *event) { e.Found = &found; e.Rel = rel })
	if !found {
		return EdgeRecord{}, fmt.Errorf("%w: edge %s -%s-> %s", ErrNotFound, src, rel, dst)
	}
	return EdgeRecord{
		Edge:    Edge{Src: srcID, Dst: dstID, Rel: x.ID, Rev: rec.rev, Weight: rec.weight},
		Payload: clonePayload(rec.payload), Scope: rec.scope, RunID: rec.run, TaskID: rec.task,
		CreatedTS: nsTime(rec.createdTS), UpdatedTS: nsTime(rec.updatedTS), CreatedRev: rec.createdRev,
	}, nil
}

// checkEdgePut is WriteTxn.PutEdge's validation (Bulk checks each distinct
// endpoint once and shares the rest, checkEdgeValues): both endpoints, no supersedes or contradicts edge from an item to itself,
// the relation (resolved by relation: the two differ in where relations
// come from) and the weight. It returns the relation, the effective
// weight (the relation's default when the put gives none) and whether the
// weight is explicit: given and not the relation's default (a weight equal
// to the default is stored as if not given, SPEC §2, so a load that
// spells every weight out keeps its edges' records implicit).
func checkEdgePut(p EdgePut, relation func(name string) (Relation, error)) (rel Relation, weight float32, explicit bool, err error) {
	if err := validEndpoint("source key", p.Src); err != nil {
		return Relation{}, 0, false, err
	}
	if err := validEndpoint("destination key", p.Dst); err != nil {
		return Relation{}, 0, false, err
	}
	return checkEdgeValues(p, relation)
}

// checkEdgeValues is checkEdgePut for endpoints already checked (a bulk
// load checks each distinct key once).
func checkEdgeValues(p EdgePut, relation func(name string) (Relation, error)) (rel Relation, weight float32, explicit bool, err error) {
	if (p.Rel == relSupersedes || p.Rel == relContradicts) && p.Src == p.Dst {
		return Relation{}, 0, false, fmt.Errorf("%w: an item cannot %s itself (%s)", ErrInvalid, strings.TrimSuffix(p.Rel, "s"), p.Src)
	}
	rel, err = relation(p.Rel)
	if err != nil {
		return Relation{}, 0, false, err
	}
	weight = p.Weight
	if weight == 0 {
		weight = rel.DefaultWeight
	} else if err := validWeight(weight); err != nil {
		return Relation{}, 0, false, err
	}
	return rel, weight, weight != rel.DefaultWeight, nil
}

// putRelation resolves the relation of an edge put: contradicts is
// registered by its first use (an add_rel operation in this revision).
func (tx *WriteTxn) putRelation(name string) (Relation, error) {
	rel, err := tx.relByName(name)
	if errors.Is(err, ErrUnknownRelation) && name == relContradicts {
		if _, err = tx.AddRelation(Relation{Name: relContradicts, DefaultWeight: 1}); err == nil {
			rel, err = tx.relByName(name)
		}
	}
	return rel, err
}

// PutEdge creates or overwrites the edge src -rel-> dst. Endpoints starting
// with "kv:" must be kv addresses. The relations the store interprets
// (SPEC.md §4): a `supersedes` edge may not close a cycle, neither it nor a
// `contradicts` edge may join an item to itself, and `contradicts` is
// registered by its first use (an add_rel operation in the same revision).
func (tx *WriteTxn) PutEdge(p EdgePut) error {
	if tx.err != nil {
		return tx.err
	}
	p, err := tx.red.edgePut(p)
	if err != nil {
		return err
	}
	rel, weight, explicit, err := checkEdgePut(p, tx.putRelation)
	if err != nil {
		return err
	}
	payload, err := canonicalPayload(p.Payload, false)
	if err != nil {
		return err
	}
	scope, run, task := tx.inherit(p.Scope, p.RunID, p.TaskID)
	src, err := tx.registerID(p.Src)
	if err != nil {
		return err
	}
	dst, err := tx.registerID(p.Dst)
	if err != nil {
		return err
	}
	if rel.Name == relSupersedes {
		if err := tx.checkSupersede(p.Src, src, p.Dst, dst, rel.ID); err != nil {
			return err
		}
	}
	rec := edgeRec{rev: tx.rev, createdRev: tx.rev, createdTS: tx.ts, updatedTS: tx.ts,
		weight: weight, scope: scope, run: run, task: task, payload: payload}
	if explicit {
		rec.flags |= recWeight
	}
	overwrite, stored := false, false
	if !tx.edgeAbsent(src, rel.ID, dst) {
		overwrite, stored, err = tx.supersedeEdge(src, rel.ID, dst, &rec)
		if err == errUnchanged {
			return nil // same weight and payload: no change (SPEC §2)
		}
		if err != nil {
			return err
		}
	}
	if err := tx.writeEdge(src, rel.ID, dst, &rec, stored); err != nil {
		return err
	}
	tx.op(OpPutEdge, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, p.Src)
		b = appendStr(b, rel.Name)
		b = appendStr(b, p.Dst)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(weight))
		return appendStr(b, string(payload))
	})
	if tx.s.opts.Telemetry != nil {
		missing := tx.missingEndpoints(p.Src, src, p.Dst, dst)
		tx.event(eventWriteOrOverwrite(overwrite), "e:"+p.Src+":"+rel.Name+":"+p.Dst, "edge", scope, run, task,
			func(e *event) { e.Rel = rel.Name; e.Weight = &weight; e.Missing = missing })
	}
	return nil
}

func (tx *WriteTxn) missingEndpoints(srcKey string, src NodeID, dstKey string, dst NodeID) []string {
	var missing []string
	var rec nodeRec
	if ok, err := tx.r.nodeAt(src, Revision(math.MaxUint64), &rec); err == nil && !ok {
		missing = append(missing, srcKey)
	}
	if ok, err := tx.r.nodeAt(dst, Revision(math.MaxUint64), &rec); err == nil && !ok && dstKey != srcKey {
		missing = append(missing, dstKey)
	}
	return missing
}

// supersedeEdge is supersedeNode for edges. The current record may be
// implicit (edgerec.go): its synthesized record is what hist keeps. stored
// reports whether the edge has an e record now.
func (tx *WriteTxn) supersedeEdge(src NodeID, rel RelID, dst NodeID, rec *edgeRec) (overwrite, stored bool, err error) {
	var old edgeRec
	cur, explicit, found, err := tx.r.currentEdge(src, rel, dst, &old)
	if err != nil {
		return false, false, tx.fail(err)
	}
	if !found {
		return false, false, nil
	}
	if !old.tombstone() && !rec.tombstone() && old.weight == rec.weight && bytes.Equal(old.payload, rec.payload) {
		return true, explicit, errUnchanged
	}
	if old.rev < tx.rev {
		k := edgeKey(src, rel, dst)
		if !explicit {
			cur = tx.record(old.appendBody)
		}
		if err := tx.toHist(dbEdges, histEdge, k, cur, old.rev); err != nil {
			return false, false, err
		}
	}
	if old.tombstone() {
		return false, explicit, nil
	}
	rec.createdRev, rec.createdTS = old.createdRev, old.createdTS
	return true, explicit, nil
}

// writeEdge writes the e record (none for an implicit one, removing the
// one stored when stored) and the out and in adjacency entries.
func (tx *WriteTxn) writeEdge(src NodeID, rel RelID, dst NodeID, rec *edgeRec, stored bool) error {
	k := edgeKey(src, rel, dst)
	if !tx.implicitEdge(rec) {
		if err := tx.txn.Put(tx.s.db.e, k, tx.record(rec.appendBody), 0); err != nil {
			return tx.fail(err)
		}
	} else if stored {
		if err := tx.txn.Del(tx.s.db.e, k, nil); err != nil {
			return tx.fail(err)
		}
	}
	entry := adjacency.Entry{Rel: uint32(rel), Rev: uint64(tx.rev), Weight: rec.weight}
	if rec.tombstone() {
		entry.Flags = adjacency.FlagTombstone
		entry.Weight = 1
	}
	entry.Peer = uint64(dst)
	if err := tx.adjAdd(&tx.outBuf, src, entry); err != nil {
		return tx.fail(err)
	}
	entry.Peer = uint64(src)
	if err := tx.adjAdd(&tx.inBuf, dst, entry); err != nil {
		return tx.fail(err)
	}
	return nil
}

// Supersede records that item newer supersedes item older (each a node
// key or a kv address): the edge newer -supersedes-> older, with the
// relation's default weight. Both must be live (ErrNotFound otherwise).
func (tx *WriteTxn) Supersede(older, newer string) error {
	if tx.err != nil {
		return tx.err
	}
	older, newer = tx.red.text(older), tx.red.text(newer)
	for _, key := range []string{older, newer} {
		if err := validEndpoint("key", key); err != nil {
			return err
		}
		live, err := tx.liveItem(key)
		if err != nil {
			return err
		}
		if !live {
			return fmt.Errorf("%w: %s (supersede needs two live items: nodes or kv entries)", ErrNotFound, key)
		}
	}
	return tx.PutEdge(EdgePut{Src: newer, Rel: relSupersedes, Dst: older})
}

// liveItem reports whether key names a live node or (a kv address) a live
// kv entry, including this transaction's writes.
func (tx *WriteTxn) liveItem(key string) (bool, error) {
	if scope, ns, k, ok := ParseKVAddress(key); ok {
		var rec kvRec
		found, err := tx.r.kvAt(scope, ns, k, Revision(math.MaxUint64), &rec)
		if err != nil {
			return false, tx.fail(err)
		}
		return found, nil
	}
	id, known, err := tx.checkID(key)
	if err != nil || !known {
		return false, err
	}
	var rec nodeRec
	found, err := tx.r.nodeAt(id, Revision(math.MaxUint64), &rec)
	if err != nil {
		return false, tx.fail(err)
	}
	return found, nil
}

// DeleteEdge tombstones the live edge src -rel-> dst.
func (tx *WriteTxn) DeleteEdge(src, rel, dst string) error {
	if tx.err != nil {
		return tx.err
	}
	src, dst = tx.red.text(src), tx.red.text(dst)
	if err := validKey("source key", src); err != nil {
		return err
	}
	if err := validKey("destination key", dst); err != nil {
		return err
	}
	r, err := tx.relByName(rel)
	if errors.Is(err, ErrUnknownRelation) && rel == relContradicts {
		return fmt.Errorf("%w: edge %s -%s-> %s (no contradicts edge was ever written)", ErrNotFound, src, rel, dst)
	}
	if err != nil {
		return err
	}
	srcID, knownSrc, err := tx.checkID(src)
	if err != nil {
		return err
	}
	dstID, knownDst, err := tx.checkID(dst)
	if err != nil {
		return err
	}
	notFound := fmt.Errorf("%w: edge %s -%s-> %s", ErrNotFound, src, rel, dst)
	if !knownSrc || !knownDst {
		return notFound
	}
	var cur edgeRec
	found, err := tx.r.edgeAt(srcID, r.ID, dstID, Revision(math.MaxUint64), &cur)
	if err != nil {
		return tx.fail(err)
	}
	if !found {
		return notFound
	}
	scope, run, task := tx.inherit("", "", "")
	rec := edgeRec{flags: recTombstone, rev: tx.rev, updatedTS: tx.ts, weight: cur.weight,
		scope: scope, run: run, task: task}
	_, stored, err := tx.supersedeEdge(srcID, r.ID, dstID, &rec)
	if err != nil {
		return err
	}
	if err := tx.writeEdge(srcID, r.ID, dstID, &rec, stored); err != nil {
		return err
	}
	tx.op(OpDelEdge, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, src)
		b = appendStr(b, r.Name)
		return appendStr(b, dst)
	})
	tx.event("delete", "e:"+src+":"+r.Name+":"+dst, "edge", scope, run, task, func(e *event) { e.Rel = r.Name })
	return nil
}

// EdgeKeys names an edge of a scan or an adjacency read: its source key,
// relation name and destination key.
func (r *ReadTxn) EdgeKeys(e Edge) (src, rel, dst string, err error) {
	if src, err = r.KeyOf(e.Src); err != nil {
		return "", "", "", err
	}
	if dst, err = r.KeyOf(e.Dst); err != nil {
		return "", "", "", err
	}
	relation, err := r.RelationByID(e.Rel)
	if err != nil {
		return "", "", "", err
	}
	return src, relation.Name, dst, nil
}
