package lmdbstore

// The kv keyspace (SPEC.md §2): the latest version of every kv entry.
//
//	key:   str(scope) ‖ str(namespace) ‖ key bytes (raw, so keys sort bytewise)
//	value: record envelope (records.go) of a kv body ‖ crc
//	body:  flags u8 (bit0 tombstone, bit2 valid_from, bit3 valid_until) ‖
//	       uvarint rev ‖ uvarint ts ‖ [vtime valid_from] ‖
//	       [vtime valid_until] ‖ str run_id ‖ str task_id ‖ str payload
//
// A version a write replaces goes to hist first (hist.go).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// kvPrefix is str(scope) ‖ str(ns): the prefix ListKV scans.
func kvPrefix(scope, ns string) []byte {
	return appendStr(appendStr(nil, scope), ns)
}

// kvKey is str(scope) ‖ str(ns) ‖ key (raw, so keys sort bytewise).
func kvKey(scope, ns, key string) []byte { return append(kvPrefix(scope, ns), key...) }

// kvEntity is the prefix-free form used inside hist keys.
func kvEntity(scope, ns, key string) []byte { return appendStr(kvPrefix(scope, ns), key) }

func parseKVKey(k []byte) (scope, ns, key string, err error) {
	d := decoder{b: k}
	scope = d.str()
	ns = d.str()
	if d.err != nil {
		return "", "", "", d.err
	}
	return scope, ns, string(d.b[d.off:]), nil
}

// kvRec is the body of a `kv` value.
type kvRec struct {
	flags   byte
	rev     Revision
	ts      uint64
	valid   validity
	run     string
	task    string
	payload []byte
}

func (r *kvRec) tombstone() bool { return r.flags&recTombstone != 0 }

func (r *kvRec) appendBody(b []byte) []byte {
	b = append(b, r.flags|r.valid.flags())
	b = binary.AppendUvarint(b, uint64(r.rev))
	b = binary.AppendUvarint(b, r.ts)
	b = r.valid.append(b)
	b = appendStr(b, r.run)
	b = appendStr(b, r.task)
	return appendStr(b, string(r.payload))
}

func (r *kvRec) decodeBody(body []byte) error {
	d := decoder{b: body}
	r.flags = d.u8()
	r.rev = Revision(d.uvarint())
	r.ts = d.uvarint()
	r.valid = decodeValidity(&d, r.flags)
	r.flags &^= recValidFrom | recValidUntil
	r.run = d.str()
	r.task = d.str()
	r.payload = d.bytes()
	d.end()
	if d.err == nil && r.flags&^recTombstone != 0 {
		return fmt.Errorf("unknown kv flags %#x", r.flags)
	}
	return d.err
}

func (r *ReadTxn) kvAt(scope, ns, key string, view Revision, rec *kvRec) (bool, error) {
	k := kvKey(scope, ns, key)
	v, err := r.txn().Get(r.s.db.kv, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, classifyLMDB(dbKV, k, err)
	}
	return r.kvVersionAt(k, v, scope, ns, key, view, rec)
}

func (r *ReadTxn) kvVersionAt(k, v []byte, scope, ns, key string, view Revision, rec *kvRec) (bool, error) {
	if err := r.s.decodeRecord(dbKV, k, v, rec.decodeBody); err != nil {
		return false, err
	}
	if rec.rev > view {
		hk, hv, ok, err := r.histAt(histKV, kvEntity(scope, ns, key), view)
		if err != nil || !ok {
			return false, err
		}
		if err := r.s.decodeRecord(dbHist, hk, hv, rec.decodeBody); err != nil {
			return false, err
		}
	}
	return !rec.tombstone(), nil
}

// GetKV returns the kv entry's version visible at the view.
func (r *ReadTxn) GetKV(scope, ns, key string, at At) (KV, error) {
	view, err := r.view(at)
	if err != nil {
		return KV{}, err
	}
	var rec kvRec
	found := false
	if validKVKey(scope, ns, key) == nil {
		found, err = r.kvAt(scope, ns, key, view, &rec)
		if err != nil {
			return KV{}, err
		}
	}
	r.emitRead("read", "kv:"+scope+":"+ns+":"+key, "kv", rec.rev, func(e *event) { e.Found = &found })
	if !found {
		return KV{}, fmt.Errorf("%w: kv %s/%s/%s", ErrNotFound, scope, ns, key)
	}
	return rec.kv(scope, ns, key), nil
}

func (rec *kvRec) kv(scope, ns, key string) KV {
	return KV{Scope: scope, Namespace: ns, Key: key, Payload: clonePayload(rec.payload),
		RunID: rec.run, TaskID: rec.task, TS: nsTime(rec.ts), Rev: rec.rev, Valid: rec.valid.api()}
}

// ListKV returns the live entries of scope/ns at the view, ordered by key.
func (r *ReadTxn) ListKV(scope, ns string, at At) ([]KV, error) {
	view, err := r.view(at)
	if err != nil {
		return nil, err
	}
	cur, err := r.txn().OpenCursor(r.s.db.kv)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	prefix := kvPrefix(scope, ns)
	var out []KV
	k, v, err := cur.Get(prefix, nil, lmdb.SetRange)
	for ; err == nil && bytes.HasPrefix(k, prefix); k, v, err = cur.Get(nil, nil, lmdb.Next) {
		key := string(k[len(prefix):])
		var rec kvRec
		ok, err := r.kvVersionAt(k, v, scope, ns, key, view, &rec)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, rec.kv(scope, ns, key))
		}
	}
	if err != nil && !lmdb.IsNotFound(err) {
		return nil, classifyLMDB(dbKV, nil, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	n := len(out)
	r.emitRead("query", "kv:"+scope+":"+ns, "kv", 0, func(e *event) {
		e.Query, e.Results, e.Rev = "list_kv", &n, uint64(r.seenRev(view))
	})
	return out, nil
}

func validKVKey(scope, ns, key string) error {
	if ns == "" || key == "" {
		return fmt.Errorf("%w: kv namespace and key must not be empty", ErrInvalid)
	}
	if !utf8.ValidString(scope) || !utf8.ValidString(ns) || !utf8.ValidString(key) {
		return fmt.Errorf("%w: kv scope, namespace and key must be UTF-8", ErrInvalid)
	}
	if n := len(kvEntity(scope, ns, key)); n > maxKVKeyLen {
		return fmt.Errorf("%w: kv scope+namespace+key take %d bytes, at most %d", ErrInvalid, n, maxKVKeyLen)
	}
	return nil
}

// PutKV creates or overwrites a policy-memory entry.
func (tx *WriteTxn) PutKV(p KVPut) error {
	if tx.err != nil {
		return tx.err
	}
	p.Namespace, p.Key, p.Payload = tx.red.text(p.Namespace), tx.red.text(p.Key), tx.red.payload(p.Payload)
	p.Scope, p.RunID, p.TaskID = tx.red.text(p.Scope), tx.red.text(p.RunID), tx.red.text(p.TaskID)
	scope, run, task := tx.inherit(p.Scope, p.RunID, p.TaskID)
	if err := validKVKey(scope, p.Namespace, p.Key); err != nil {
		return err
	}
	payload, err := canonicalPayload(p.Payload, true)
	if err != nil {
		return err
	}
	valid, err := toValidity(p.Valid)
	if err != nil {
		return err
	}
	rec := kvRec{rev: tx.rev, ts: tx.ts, valid: valid, run: run, task: task, payload: payload}
	overwrite, err := tx.supersedeKV(scope, p.Namespace, p.Key, &rec)
	if err == errUnchanged {
		return nil // same payload and valid time: no change (SPEC §2)
	}
	if err != nil {
		return err
	}
	if err := tx.txn.Put(tx.s.db.kv, kvKey(scope, p.Namespace, p.Key), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	kind := OpPutKV
	if valid != (validity{}) {
		kind = opPutKVValid
	}
	tx.op(kind, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, p.Namespace)
		b = appendStr(b, p.Key)
		b = appendStr(b, string(payload))
		if kind == opPutKVValid {
			b = valid.appendLog(b)
		}
		return b
	})
	tx.event(eventWriteOrOverwrite(overwrite), "kv:"+scope+":"+p.Namespace+":"+p.Key, "kv", scope, run, task, nil)
	return nil
}

// supersedeKV moves the current version of a kv entry to hist (if an
// earlier revision wrote it) and reports whether it was live; errUnchanged
// when rec (nil for a delete) would leave the live entry as it is.
func (tx *WriteTxn) supersedeKV(scope, ns, key string, rec *kvRec) (bool, error) {
	k := kvKey(scope, ns, key)
	cur, err := tx.txn.Get(tx.s.db.kv, k)
	if lmdb.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, tx.fail(err)
	}
	var old kvRec
	if err := tx.s.decodeRecord(dbKV, k, cur, old.decodeBody); err != nil {
		return false, tx.fail(err)
	}
	if !old.tombstone() && rec != nil && !rec.tombstone() && old.valid == rec.valid && bytes.Equal(old.payload, rec.payload) {
		return true, errUnchanged
	}
	if old.rev < tx.rev {
		if err := tx.toHist(dbKV, histKV, kvEntity(scope, ns, key), cur, old.rev); err != nil {
			return false, err
		}
	}
	return !old.tombstone(), nil
}

// DeleteKV tombstones a live kv entry.
func (tx *WriteTxn) DeleteKV(scope, ns, key string) error {
	if tx.err != nil {
		return tx.err
	}
	scope, ns, key = tx.red.text(scope), tx.red.text(ns), tx.red.text(key)
	scope, run, task := tx.inherit(scope, "", "")
	if err := validKVKey(scope, ns, key); err != nil {
		return err
	}
	var cur kvRec
	found, err := tx.r.kvAt(scope, ns, key, Revision(math.MaxUint64), &cur)
	if err != nil {
		return tx.fail(err)
	}
	if !found {
		return fmt.Errorf("%w: kv %s/%s/%s", ErrNotFound, scope, ns, key)
	}
	if _, err := tx.supersedeKV(scope, ns, key, nil); err != nil {
		return err
	}
	rec := kvRec{flags: recTombstone, rev: tx.rev, ts: tx.ts, run: run, task: task}
	if err := tx.txn.Put(tx.s.db.kv, kvKey(scope, ns, key), tx.record(rec.appendBody), 0); err != nil {
		return tx.fail(err)
	}
	tx.op(OpDelKV, scope, run, task, func(b []byte) []byte {
		b = appendStr(b, ns)
		return appendStr(b, key)
	})
	tx.event("delete", "kv:"+scope+":"+ns+":"+key, "kv", scope, run, task, nil)
	return nil
}
