package lmdbstore

// Log record format 03 (SPEC.md §2): the operations with a key table.
//
//	value: 03 ‖ commit time u64 BE ‖ str scope ‖ str run_id ‖ str task_id ‖
//	       uvarint op count ‖ uvarint body length ‖ zstd frame of body ‖ crc
//	body:  uvarint n ‖ n × str (the key table) ‖ ops
//	op:    as in formats 01 and 02, except that every name field (the
//	       provenance, node keys, types, relation names, namespaces and kv
//	       keys: every str but a payload) is a uvarint index into the table
//
// The table lists each distinct name once, in the order of its first use,
// so an index is at most one more than the largest before it and every
// entry is used: the encoding of an op list is unique. A bulk load names
// each node key about 16 times; the table spells it once, which is a
// quarter of format 02's bytes before compression and less work for zstd.
//
// Format 03 replaces 02 for every record whose format-01 ops exceed
// compressLogAbv bytes; shorter records stay plain (01). The exception is
// a body under minKeyedBody bytes (names repeated in a few ops), which
// stays 02: zstd writes no content size in a frame that small, and every
// reader requires one. Writing the first format-03 record of a store sets
// its schema to 4 (schemaKeyedLog).
//
// The ops of a transaction are built in format 01 (WriteTxn.op); keyedOps
// converts them. The bulk load's fast path builds the same bytes directly
// from its interned keys (Bulk.encodeKeyedLog).

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// fmtKeyed is the format byte of a log record with a key table.
const fmtKeyed byte = 3

// minKeyedBody is the smallest format-03 body written: zstd frames of
// fewer bytes carry no content size.
const minKeyedBody = 256

// opField is one field of a logged operation after its kind and
// provenance.
type opField uint8

const (
	fieldName     opField = iota // str; a table index in format 03
	fieldPayload                 // str, always inline
	fieldF32                     // f32 LE
	fieldU32                     // u32 BE (add_rel's id)
	fieldU8                      // u8 (add_rel's flags)
	fieldValidity                // validity (SPEC.md §2)
)

// opFields lists the fields of each op kind, in order (SPEC.md §2's op
// table); decodeLog reads the same fields.
var opFields = [...][]opField{
	OpPutNode:      {fieldName, fieldName, fieldPayload},
	OpDelNode:      {fieldName},
	OpPutEdge:      {fieldName, fieldName, fieldName, fieldF32, fieldPayload},
	OpDelEdge:      {fieldName, fieldName, fieldName},
	OpPutKV:        {fieldName, fieldName, fieldPayload},
	OpDelKV:        {fieldName, fieldName},
	OpAddRel:       {fieldName, fieldU32, fieldU8, fieldF32},
	opPutNodeValid: {fieldName, fieldName, fieldPayload, fieldValidity},
	opPutKVValid:   {fieldName, fieldName, fieldPayload, fieldValidity},
}

// keyTable assigns table indices to names in the order of first use.
type keyTable struct {
	idx map[string]uint32
	tab []byte // the entries so far, each a str
	n   uint32
}

func newKeyTable(sizeHint int) *keyTable {
	return &keyTable{idx: make(map[string]uint32, sizeHint)}
}

// keyIndex returns name's index in t, adding it when it is new.
func keyIndex[S ~string | ~[]byte](t *keyTable, name S) uint32 {
	if i, ok := t.idx[string(name)]; ok {
		return i
	}
	i := t.n
	t.idx[string(name)] = i
	t.tab = binary.AppendUvarint(t.tab, uint64(len(name)))
	t.tab = append(t.tab, name...)
	t.n++
	return i
}

// body returns the format-03 body: the table, then ops (whose names are
// this table's indices).
func (t *keyTable) body(ops []byte) []byte {
	b := make([]byte, 0, uvarintLen(uint64(t.n))+len(t.tab)+len(ops))
	b = binary.AppendUvarint(b, uint64(t.n))
	return append(append(b, t.tab...), ops...)
}

// keyedOps converts nops operations in format 01 (as WriteTxn.op writes
// them) into a format-03 body. ops come from this process's own encoder;
// an error means they do not parse (a bug).
func keyedOps(ops []byte, nops int) ([]byte, error) {
	t := newKeyTable(nops)
	out, err := t.appendOps(make([]byte, 0, len(ops)/2), ops, nops)
	if err != nil {
		return nil, err
	}
	return t.body(out), nil
}

// appendOps appends the nops format-01 operations of ops to out with
// their names as indices into t.
func (t *keyTable) appendOps(out, ops []byte, nops int) ([]byte, error) {
	d := decoder{b: ops}
	for range nops {
		kind := d.u8()
		if d.err == nil && (int(kind) >= len(opFields) || opFields[kind] == nil) {
			return nil, fmt.Errorf("log op of unknown kind %d", kind)
		}
		out = append(out, kind)
		for range 3 { // scope, run, task
			out = binary.AppendUvarint(out, uint64(keyIndex(t, d.bytes())))
		}
		for _, f := range opFields[kind] {
			if f == fieldName {
				out = binary.AppendUvarint(out, uint64(keyIndex(t, d.bytes())))
				continue
			}
			start := d.off
			skipOpField(&d, f)
			if d.err != nil {
				break
			}
			out = append(out, ops[start:d.off]...)
		}
		if d.err != nil {
			return nil, fmt.Errorf("log ops: %v", d.err)
		}
	}
	d.end()
	if d.err != nil {
		return nil, fmt.Errorf("log ops: %v", d.err)
	}
	return out, nil
}

// skipOpField reads over one field that is not a name.
func skipOpField(d *decoder, f opField) {
	switch f {
	case fieldPayload:
		d.bytes()
	case fieldF32:
		d.f32()
	case fieldU32:
		d.u32be()
	case fieldU8:
		d.u8()
	case fieldValidity:
		decodeLogValidity(d)
	}
}

// splitKeyTable reads the key table at the start of a format-03 body and
// returns it with the ops that follow. The entries share one string.
func splitKeyTable(body []byte) ([]string, []byte, error) {
	d := decoder{b: body}
	n := d.uvarint()
	if d.err != nil {
		return nil, nil, d.err
	}
	if n > uint64(len(body)-d.off) { // every entry takes at least its length byte
		return nil, nil, errors.New("key table longer than the record")
	}
	start := d.off
	ends := make([]int, 0, n)
	for range n {
		d.bytes()
		if d.err != nil {
			return nil, nil, fmt.Errorf("key table: %v", d.err)
		}
		ends = append(ends, d.off)
	}
	all := string(body[start:d.off])
	tab := make([]string, n)
	pos := 0
	for i, end := range ends {
		l, w := binary.Uvarint(body[start+pos:])
		tab[i] = all[pos+w : pos+w+int(l)]
		pos = end - start
	}
	return tab, body[d.off:], nil
}

// opDecoder reads the ops of a log record: names inline (formats 01 and
// 02) or as indices into tab (format 03).
type opDecoder struct {
	decoder
	tab  []string // nil: names are inline
	next uint64   // the index a name not used before must have
}

// name reads a name field.
func (d *opDecoder) name() string {
	if d.tab == nil {
		return d.str()
	}
	i := d.uvarint()
	if d.err != nil {
		return ""
	}
	if i > d.next || i >= uint64(len(d.tab)) {
		d.fail(fmt.Sprintf("key index %d (%d entries, next new one %d)", i, len(d.tab), d.next))
		return ""
	}
	if i == d.next {
		d.next++
	}
	return d.tab[i]
}

// nameLike is name, sharing prev's string when equal (formats 01 and 02;
// table entries are shared already).
func (d *opDecoder) nameLike(prev string) string {
	if d.tab == nil {
		return d.strLike(prev)
	}
	return d.name()
}

// end checks that the ops are used up, and so is the table.
func (d *opDecoder) end() {
	d.decoder.end()
	if d.err == nil && d.tab != nil && d.next != uint64(len(d.tab)) {
		d.fail(fmt.Sprintf("key table has %d entries, the ops use %d", len(d.tab), d.next))
	}
}
