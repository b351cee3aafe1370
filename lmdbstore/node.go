package lmdbstore

// The n keyspace (SPEC.md §2): the latest version of every node.
//
//	key:   node id u64 BE
//	value: record envelope (records.go) of a node body ‖ crc
//	body:  flags u8 (bit0 tombstone, bit2 valid_from, bit3 valid_until) ‖
//	       uvarint rev ‖ uvarint created_rev ‖ uvarint created_ts ‖
//	       uvarint updated_ts ‖ [vtime valid_from] ‖ [vtime valid_until] ‖
//	       str type ‖ str scope ‖ str run_id ‖ str task_id ‖ str payload
//
// A version a write replaces goes to hist first (hist.go).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

func nodeKey(id NodeID) []byte { return u64be(uint64(id)) }

func validKey(what, key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	}
	if len(key) > maxNodeKeyLen {
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalid, what, maxNodeKeyLen)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %s is not UTF-8", ErrInvalid, what)
	}
	return nil
}

// nodeRec is the body of an `n` value (and of a node's hist value).
type nodeRec struct {
	flags      byte
	rev        Revision
	createdRev Revision
	createdTS  uint64
	updatedTS  uint64
	valid      validity
	typ        string
	scope      string
	run        string
	task       string
	payload    []byte
}

func (r *nodeRec) tombstone() bool { return r.flags&recTombstone != 0 }

func (r *nodeRec) appendBody(b []byte) []byte {
	b = append(b, r.flags|r.valid.flags())
	b = binary.AppendUvarint(b, uint64(r.rev))
	b = binary.AppendUvarint(b, uint64(r.createdRev))
	b = binary.AppendUvarint(b, r.createdTS)
	b = binary.AppendUvarint(b, r.updatedTS)
	b = r.valid.append(b)
	b = appendStr(b, r.typ)
	b = appendStr(b, r.scope)
	b = appendStr(b, r.run)
	b = appendStr(b, r.task)
	return appendStr(b, string(r.payload))
}

func (r *nodeRec) decodeBody(body []byte) error {
	d := decoder{b: body}
	r.flags = d.u8()
	r.rev = Revision(d.uvarint())
	r.createdRev = Revision(d.uvarint())
	r.createdTS = d.uvarint()
	r.updatedTS = d.uvarint()
	r.valid = decodeValidity(&d, r.flags)
	r.flags &^= recValidFrom | recValidUntil
	r.typ = d.str()
	r.scope = d.str()
	r.run = d.str()
	r.task = d.str()
	r.payload = d.bytes()
	d.end()
	if d.err == nil && r.flags&^recTombstone != 0 {
		return fmt.Errorf("unknown node flags %#x", r.flags)
	}
	return d.err
}

func (r *nodeRec) node(id NodeID, key string) Node {
	return Node{
		ID: id, Key: key, Type: r.typ, Payload: clonePayload(r.payload),
		Scope: r.scope, RunID: r.run, TaskID: r.task,
		CreatedTS: nsTime(r.createdTS), UpdatedTS: nsTime(r.updatedTS),
		CreatedRev: r.createdRev, Rev: r.rev, Valid: r.valid.api(),
	}
}

// nodeAt reads the version of node id visible at view into rec. found is
// false for no version or a tombstone.
func (r *ReadTxn) nodeAt(id NodeID, view Revision, rec *nodeRec) (bool, error) {
	k := nodeKey(id)
	v, err := r.txn().Get(r.s.db.n, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, classifyLMDB(dbNodes, k, err)
	}
	return r.nodeVersionAt(k, v, view, rec)
}

func (r *ReadTxn) nodeVersionAt(k, v []byte, view Revision, rec *nodeRec) (bool, error) {
	if err := r.s.decodeRecord(dbNodes, k, v, rec.decodeBody); err != nil {
		return false, err
	}
	if rec.rev > view {
		hk, hv, ok, err := r.histAt(histNode, k, view)
		if err != nil || !ok {
			return false, err
		}
		if err := r.s.decodeRecord(dbHist, hk, hv, rec.decodeBody); err != nil {
			return false, err
		}
	}
	return !rec.tombstone(), nil
}

// GetNode returns the node's version visible at the view.
func (r *ReadTxn) GetNode(key string, at At) (Node, error) {
	id, known, err := r.idOf(key)
	if err != nil {
		return Node{}, err
	}
	n, err := r.getNode(id, key, known, at)
	found := err == nil
	r.emitRead("read", "n:"+key, "node", n.Rev, func(e *event) {
		e.Found = &found
		e.NodeType = n.Type
		if !at.IsLatest() {
			e.AtRev = uint64(r.resolvedOrZero(at))
		}
	})
	return n, err
}

func (r *ReadTxn) getNode(id NodeID, key string, known bool, at At) (Node, error) {
	view, err := r.view(at)
	if err != nil {
		return Node{}, err
	}
	if !known {
		return Node{}, fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	var rec nodeRec
	ok, err := r.nodeAt(id, view, &rec)
	if err != nil {
		return Node{}, err
	}
	if !ok {
		return Node{}, fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	return rec.node(id, key), nil
}

// GetNodeByID is GetNode by id.
func (r *ReadTxn) GetNodeByID(id NodeID, at At) (Node, error) {
	key, err := r.keyOf(id)
	if errors.Is(err, ErrNotFound) {
		if _, verr := r.view(at); verr != nil {
			return Node{}, verr
		}
		return Node{}, err
	}
	if err != nil {
		return Node{}, err
	}
	return r.getNode(id, key, true, at)
}

// ScanNodes calls fn for every live node at the view, in ascending NodeID order.
func (r *ReadTxn) ScanNodes(at At, fn func(Node) error) error {
	view, err := r.view(at)
	if err != nil {
		return err
	}
	cur, err := r.txn().OpenCursor(r.s.db.n)
	if err != nil {
		return err
	}
	defer cur.Close()
	for op := uint(lmdb.First); ; op = lmdb.Next {
		k, v, err := cur.Get(nil, nil, op)
		if lmdb.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(k) != 8 {
			return &CorruptionError{dbNodes, bytes.Clone(k), "key is not 8 bytes"}
		}
		var rec nodeRec
		ok, err := r.nodeVersionAt(k, v, view, &rec)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		id := NodeID(binary.BigEndian.Uint64(k))
		key, err := r.keyOf(id)
		if errors.Is(err, ErrNotFound) {
			return &CorruptionError{dbNodes, bytes.Clone(k), "node has no ids entry"}
		}
		if err != nil {
			return err
		}
		if err := fn(rec.node(id, key)); err != nil {
			return err
		}
	}
}

// checkNodePut is the validation WriteTxn.PutNode and Bulk.PutNode share:
// the key (never a kv address), then the node's type (the key's prefix up
// to ":" when none is given). WriteTxn.PutNode checks the payload and valid
// time after it.
func checkNodePut(p NodePut) (typ string, err error) {
	if err := validKey("node key", p.Key); err != nil {
		return "", err
	}
	if strings.HasPrefix(p.Key, kvAddrPrefix) {
		return "", fmt.Errorf("%w: node key %q: keys starting with %q name kv entries (kv:SCOPE/NS/KEY), not nodes", ErrInvalid, p.Key, kvAddrPrefix)
	}
	typ = p.Type
	if typ == "" {
		typ, _, _ = strings.Cut(p.Key, ":")
		if typ == p.Key {
			typ = ""
		}
	}
	return typ, nil
}

// PutNode creates or overwrites a node. A put that leaves the live node as
// it is (same type, payload and valid time) changes nothing (SPEC.md §2).
func (tx *WriteTxn) PutNode(p NodePut) error {
	if tx.err != nil {
		return tx.err
	}
	p = tx.red.nodePut(p)
	typ, err := checkNodePut(p)
	if err != nil {
		return err
	}
	payload, err := canonicalPayload(p.Payload, false)
	if err != nil {
		return err
	}
	valid, err := toValidity(p.Valid)
	if err != nil {
		return err
	}
	scope, run, task := tx.inherit(p.Scope, p.RunID, p.TaskID)
	id, err := tx.registerID(p.Key)
	if err != nil {
		return err
	}
	rec := nodeRec{rev: tx.rev, createdRev: tx.rev, createdTS: tx.ts, updatedTS: tx.ts,
		valid: valid, typ: typ, scope: scope, run: run, task: task, payload: payload}
	overwrite, err := tx.supersedeNode(id, &rec)
	if err == errUnchanged {
		return nil // same type, payload and valid time: no change, no operation (SPEC §2)
	}
	if err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.n, nodeKey(id), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	kind := OpPutNode
	if valid != (validity{}) {
		kind = opPutNodeValid
	}
	tx.op(kind, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, p.Key)
		b = appendStr(b, typ)
		b = appendStr(b, string(payload))
		if kind == opPutNodeValid {
			b = valid.appendLog(b)
		}
		return b
	})
	tx.event(eventWriteOrOverwrite(overwrite), "n:"+p.Key, "node", scope, run, task, func(e *event) { e.NodeType = typ })
	return nil
}

// supersedeNode moves the current version of node id (if any, and if it was
// written by an earlier revision) to hist, and carries its creation over to
// rec when it was live. It reports whether a live version existed.
func (tx *WriteTxn) supersedeNode(id NodeID, rec *nodeRec) (bool, error) {
	k := nodeKey(id)
	cur, err := tx.txn.Get(tx.s.db.n, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, tx.fail(err)
	}
	var old nodeRec
	if err := tx.s.decodeRecord(dbNodes, k, cur, old.decodeBody); err != nil {
		return false, tx.fail(err)
	}
	if !old.tombstone() && !rec.tombstone() && old.typ == rec.typ && old.valid == rec.valid && bytes.Equal(old.payload, rec.payload) {
		return true, errUnchanged
	}
	if old.rev < tx.rev {
		if err := tx.toHist(dbNodes, histNode, k, cur, old.rev); err != nil {
			return false, err
		}
	}
	if old.tombstone() {
		return false, nil
	}
	rec.createdRev, rec.createdTS = old.createdRev, old.createdTS
	return true, nil
}

// DeleteNode tombstones a live node. Its edges stay (their endpoint becomes
// a missing node, see Check).
func (tx *WriteTxn) DeleteNode(key string) error {
	if tx.err != nil {
		return tx.err
	}
	key = tx.red.text(key)
	if err := validKey("node key", key); err != nil {
		return err
	}
	id, known, err := tx.checkID(key)
	if err != nil {
		return err
	}
	if !known {
		return fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	var cur nodeRec
	found, err := tx.r.nodeAt(id, Revision(math.MaxUint64), &cur)
	if err != nil {
		return tx.fail(err)
	}
	if !found {
		return fmt.Errorf("%w: node %q", ErrNotFound, key)
	}
	scope, run, task := tx.inherit("", "", "")
	rec := nodeRec{flags: recTombstone, rev: tx.rev, updatedTS: tx.ts, typ: cur.typ,
		scope: scope, run: run, task: task}
	if _, err := tx.supersedeNode(id, &rec); err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.n, nodeKey(id), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	tx.op(OpDelNode, scope, run, task, func(b []byte) []byte { return appendStr(b, key) })
	tx.event("delete", "n:"+key, "node", scope, run, task, func(e *event) { e.NodeType = cur.typ })
	return nil
}
