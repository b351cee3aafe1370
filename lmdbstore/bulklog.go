package lmdbstore

// The fast path's log record (SPEC §2: "Bulk loads", and the log
// record's formats 01 and 03): the operations of a load that change
// something, in order, as the ordinary path's WriteTxn would log them,
// encoded on every core and compressed beside the keyspaces' writes.

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
)

// bulkLog is the fast path's log record, whole (v) or in parts, or why
// it could not be encoded.
type bulkLog struct {
	v     []byte
	parts *recordParts
	err   error
}

// whole is l with its record in v.
func (l bulkLog) whole() bulkLog {
	if l.parts != nil {
		var err error
		l.v, err = l.parts.bytes()
		l.parts.release()
		l.parts = nil
		if l.err == nil {
			l.err = err
		}
	}
	return l
}

// encodeLog starts encoding the log record, delivered on b.logValue: the
// operations that change something, in order, compressed. It counts them
// (tx.nops) and returns; the record is encoded and compressed on other
// goroutines while the keyspaces are written. A load whose format-01 ops
// certainly exceed compressLogAbv bytes (minLogOpBytes each) is format 03,
// built from the interned keys without sizing its format-01 ops
// (encodeKeyedLog); a smaller one is sized exactly and takes format 01,
// or 03, as WriteTxn writes them.
func (b *Bulk) encodeLog(tx *WriteTxn, p *bulkPlan) error {
	relNames := b.relNames()
	n := b.seq.len()
	workers := opShares(n)
	counts, pays := make([]int, workers), make([]int, workers)
	each := func(fn func(w, lo, hi int)) { eachShare(n, workers, fn) }
	each(func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			b.evictEvery(i)
			if !p.changed.has(uint32(i)) {
				continue
			}
			counts[w]++
			if x := b.op(i); x&bulkEdgeBit != 0 {
				pays[w] += len(b.edgePayload(b.edges.at(int(x &^ bulkEdgeBit))))
			} else {
				pays[w] += int(b.nodes.at(int(x)).pay.n)
			}
		}
	})
	changes := 0
	for _, c := range counts {
		changes += c
	}
	if b.logSpec != nil { // nameLog's record of every operation, with tx.nops counting them all
		if changes == b.seq.len() {
			b.logValue, b.logBytes = b.logSpec, b.keyedLowerBound(changes, pays)
			return nil
		}
		<-b.logSpec // it reads tx.nops
		tx.nops -= b.seq.len()
		if len(b.provs) > 1 {
			b.logNames = nil // a provenance may be first named by an operation that changes nothing
		}
	}
	before := tx.nops // operations in tx.ops already (add_rel)
	tx.nops += changes
	logDone := make(chan bulkLog, 1)
	b.logValue = logDone
	if !b.s.logFormat02 && len(tx.ops)+(tx.nops-before)*minLogOpBytes > compressLogAbv {
		// logBytes, which decides whether write waits for the record
		// before the node records, is a lower bound of the keyed body: its
		// payloads and its keys (each in the table once).
		b.logBytes = b.keyedLowerBound(tx.nops-before, pays)
		go func() {
			names := b.logNamesFor(p, relNames, tx.ops, before, tx.nops)
			if names.err != nil {
				logDone <- bulkLog{err: names.err}
				return
			}
			logDone <- b.sealKeyed(tx, names, p.changed)
		}()
		return nil
	}
	// Few operations: each worker sizes its share exactly, then encodes it
	// in place at its offset in tx.ops.
	sizes := make([]int, workers)
	each(func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			if p.changed.has(uint32(i)) {
				sizes[w] += b.logOpSize(b.op(i), relNames)
			}
		}
	})
	start := len(tx.ops)
	total := start
	for _, sz := range sizes {
		total += sz
	}
	b.logBytes = total - len(tx.ops)
	if total > compressLogAbv && !b.s.logFormat02 {
		body, err := b.encodeKeyedLog(p, relNames, tx.ops, before, tx.nops)
		if err != nil {
			return err
		}
		if len(body) >= minKeyedBody { // else logValue writes format 02
			go func() { logDone <- bulkLog{v: tx.sealLog(fmtKeyed, body)} }()
			return nil
		}
	}
	offs := make([]int, workers)
	for w := range workers {
		offs[w] = start
		start += sizes[w]
	}
	tx.ops = slices.Grow(tx.ops, start-len(tx.ops))[:start]
	wrote := make([]int, workers)
	each(func(w, lo, hi int) {
		buf := tx.ops[offs[w]:offs[w]:(offs[w] + sizes[w])] // appends stay in place
		for i := lo; i < hi; i++ {
			if p.changed.has(uint32(i)) {
				buf = b.appendLogOp(buf, b.op(i), relNames)
			}
		}
		wrote[w] = len(buf)
	})
	if !slices.Equal(wrote, sizes) {
		return fmt.Errorf("bulk load: log operations of %v bytes, sized %v", wrote, sizes) // a bug, not bad input
	}
	go func() {
		v, err := tx.logValue()
		logDone <- bulkLog{v: v, err: err}
	}()
	return nil
}

// opShares is how many goroutines a pass of the log's encoding over n
// operations uses: every core, 4,096 operations each at least.
func opShares(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n/4096)) }

// eachShare runs fn on shares goroutines, share w covering operations
// [w*n/shares, (w+1)*n/shares), and waits for them.
func eachShare(n, shares int, fn func(w, lo, hi int)) {
	var wg sync.WaitGroup
	for w := range shares {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, w*n/shares, (w+1)*n/shares)
		}()
	}
	wg.Wait()
}

// keyedLowerBound is logBytes for a format-03 record of changes
// operations whose payloads add up to pays (per share): a lower bound of
// its body (an op's kind, its payload, each key once), which decides
// whether write waits for the record before the node records.
func (b *Bulk) keyedLowerBound(changes int, pays []int) int {
	n := changes
	for _, pay := range pays {
		n += pay
	}
	for i := range b.keys.len() {
		if i%evictOps == 0 {
			b.keys.keys.evict() // read in order: the pages read go as the pass goes
			b.keys.first.evict()
		}
		if b.keys.firstUse(uint32(i)) != notUsed {
			n += len(b.keys.at(uint32(i)))
		}
	}
	return n
}

// minLogOpBytes is the fewest bytes an operation of a bulk load takes in
// format 01: its kind, three provenance strs, and a node's key (at least
// one byte), type and payload strs (an edge's fields take more).
const minLogOpBytes = 8

// encodeKeyedLog encodes the operations already in ops (nops0 of them,
// format 01) and those of the load that change something as a format-03
// body: the bytes keyedOps makes of ops followed by appendLogOp's
// encoding, with one table lookup per distinct key, provenance and
// relation rather than one per name.
//
// The table is filled in operation order on one goroutine (the order of
// first use: indexNames); the operations, names as indices, are then
// sized and written on every core, each worker its share of the
// operations at its offset in one body of exactly the right size.
func (b *Bulk) encodeKeyedLog(p *bulkPlan, relNames map[RelID]string, ops []byte, nops0, nops int) ([]byte, error) {
	names := b.logNamesFor(p, relNames, ops, nops0, nops)
	if names.err != nil {
		return nil, names.err
	}
	return b.keyedBody(names, p.changed)
}

// logNamesFor is the key table of the log record of the operations in
// ops (nops0) and of the load's that change something: nameLog's when it
// filled one.
func (b *Bulk) logNamesFor(p *bulkPlan, relNames map[RelID]string, ops []byte, nops0, nops int) logNames {
	if b.logNames != nil { // nameLog's
		return <-b.logNames
	}
	return b.keyedNames(relNames, ops, nops0, p.changed)
}

// keyedBody is the format-03 body of names' table and ops followed by the
// load's operations that change something (every operation, with changed
// nil), names as indices.
func (b *Bulk) keyedBody(names logNames, changed bitSet) ([]byte, error) {
	body := binary.AppendUvarint(nil, uint64(names.t.n))
	body = append(names.appendTable(body, &b.keys.keys), names.pre...)
	return b.appendKeyedOps(body, names.k, changed, 0, b.seq.len())
}

// keyedWindow is how many operations sealKeyed encodes at a time.
const keyedWindow = 1 << 16

// sealKeyed is the sealed format-03 log record of keyedBody's body
// (tx.sealLog): over streamLogAbove bytes, encoded keyedWindow operations
// at a time into the compressor (tx.sealLogStream), so that the body is
// never held whole, only the record. The bytes are sealLog's.
func (b *Bulk) sealKeyed(tx *WriteTxn, names logNames, changed bitSet) bulkLog {
	head := binary.AppendUvarint(nil, uint64(names.t.n))
	n := b.seq.len()
	sizes := make([]int, opShares(n))
	eachShare(n, len(sizes), func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			b.evictEvery(i)
			if changed == nil || changed.has(uint32(i)) {
				sizes[w] += names.k.size(b.op(i))
			}
		}
	})
	size := len(head) + names.tabLen + len(names.pre)
	for _, sz := range sizes {
		size += sz
	}
	// At least minLogOpBytes-1 bytes an operation: never under minKeyedBody.
	if size < minKeyedBody {
		return bulkLog{err: fmt.Errorf("bulk load: format-03 log body of %d bytes", size)} // a bug, not bad input
	}
	if size <= b.s.streamLogAbove() { // sealLog compresses it in one call
		body, err := b.keyedBody(names, changed)
		if err != nil {
			return bulkLog{err: err}
		}
		return bulkLog{v: tx.sealLog(fmtKeyed, body)}
	}
	parts, err := tx.sealLogStream(fmtKeyed, size, b.s.path, func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		if err := names.writeTable(w, &b.keys.keys); err != nil {
			return err
		}
		if _, err := w.Write(names.pre); err != nil {
			return err
		}
		var buf []byte
		win := cmp.Or(b.keyedWin, keyedWindow)
		for lo := 0; lo < n; lo += win {
			var err error
			if buf, err = b.appendKeyedOps(buf[:0], names.k, changed, lo, min(n, lo+win)); err != nil {
				return err
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
	return bulkLog{parts: parts, err: err}
}

// appendKeyedOps appends operations lo..hi-1 of the load that change
// something (every one, with changed nil) in format 03, names as k's
// indices: each worker sizes its share, then encodes it at its offset.
func (b *Bulk) appendKeyedOps(body []byte, k *keyedIndex, changed bitSet, lo, hi int) ([]byte, error) {
	n := hi - lo
	workers := opShares(n)
	sizes := make([]int, workers)
	each := func(fn func(w, lo, hi int)) {
		eachShare(n, workers, func(w, l, h int) { fn(w, lo+l, lo+h) })
	}
	each(func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			if changed == nil || changed.has(uint32(i)) {
				sizes[w] += k.size(b.op(i))
			}
		}
	})
	size := 0
	for _, sz := range sizes {
		size += sz
	}
	body = slices.Grow(body, size)
	offs := make([]int, workers)
	for w := range workers {
		offs[w] = len(body)
		body = body[:len(body)+sizes[w]]
	}
	wrote := make([]int, workers)
	each(func(w, lo, hi int) {
		buf := body[offs[w]:offs[w]:(offs[w] + sizes[w])] // appends stay in place
		for i := lo; i < hi; i++ {
			b.evictEvery(i)
			if changed == nil || changed.has(uint32(i)) {
				buf = k.append(buf, b.op(i))
			}
		}
		wrote[w] = len(buf)
	})
	if !slices.Equal(wrote, sizes) {
		return nil, fmt.Errorf("bulk load: format-03 log operations of %v bytes, sized %v", wrote, sizes) // a bug, not bad input
	}
	return body, nil
}

// keyedIndex holds the table index of every name a load's logged operations
// use (indexNames), for encoding them in format 03 on several goroutines:
// it is only read then.
type keyedIndex struct {
	b    *Bulk
	keys []uint32    // by key index
	prov [][3]uint32 // by provenance index: scope, run, task
	rels []uint32    // by relation id
	typs []uint32    // by type (index into typeNames)
}

// logNames is a format-03 log record's key table with the indices of
// every name in it (indexNames), and the table's encoding of the ops
// already in the transaction (add_rel).
//
// The load's keys are not copied into the table: with order set, the
// table is order's entries, each a key of the load (its index +1) or,
// 0, the next entry of t.tab (the names that went through t's map).
// tabLen is the table's size in bytes, its count excepted.
type logNames struct {
	t      *keyTable
	order  []uint32
	tabLen int
	pre    []byte
	k      *keyedIndex
	err    error
}

// tableChunk is how many bytes of the table writeTable hands its writer
// at a time.
const tableChunk = 64 << 10

// writeTable writes the table's entries (without their count) to w, keys
// being the load's keys.
func (names *logNames) writeTable(w io.Writer, keys *keyArena) error {
	if names.order == nil {
		_, err := w.Write(names.t.tab)
		return err
	}
	buf := make([]byte, 0, tableChunk+binary.MaxVarintLen64)
	tab := names.t.tab
	for _, o := range names.order {
		if o == 0 {
			n, k := binary.Uvarint(tab)
			end := k + int(n)
			buf, tab = append(buf, tab[:end]...), tab[end:]
		} else {
			key := keys.at(o - 1)
			buf = append(binary.AppendUvarint(buf, uint64(len(key))), key...)
		}
		if len(buf) >= tableChunk {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
			keys.evict() // the keys are read about in the order they were added
		}
	}
	_, err := w.Write(buf)
	return err
}

// appendTable appends the table's entries (without their count) to out.
func (names *logNames) appendTable(out []byte, keys *keyArena) []byte {
	w := appendWriter{slices.Grow(out, names.tabLen)}
	names.writeTable(&w, keys) // an appendWriter does not fail
	return w.b
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// nameLog fills the key table of the load's log record on another
// goroutine (b.logNames), before the edge sorts tell which operations
// change something, when that cannot change the table: in the fast path
// (an empty store) the first operation naming a key, edge, relation or
// type always changes something, and an operation that changes nothing
// names only what an earlier one that did named (the same key, the same
// edge, a type equal to the live record's), so each name's first use is
// the same among all the operations and among those logged; a
// provenance's is too when the load has one, or when every operation
// changes something (AllChange, checked by encodeLog). Only for loads
// whose record will likely be format 03.
func (b *Bulk) nameLog(tx *WriteTxn) {
	if b.s.logFormat02 || len(b.provs) > 1 && !b.allChange || len(tx.ops)+b.seq.len()*minLogOpBytes <= compressLogAbv {
		return
	}
	ch := make(chan logNames, 1)
	b.logNames = ch
	relNames := b.relNames()
	ops, nops := tx.ops, tx.nops
	if !b.allChange {
		go func() { ch <- b.keyedNames(relNames, ops, nops, nil) }()
		return
	}
	// Every operation is expected to change something: the record of all
	// of them is encoded and compressed now, with their count in its
	// header (tx.nops, which encodeLog puts back, once this goroutine is
	// done, if the expectation fails).
	tx.nops += b.seq.len()
	spec := make(chan bulkLog, 1)
	b.logSpec = spec
	go func() {
		names := b.keyedNames(relNames, ops, nops, nil)
		ch <- names // valid for the operations that change something too (see above)
		if names.err != nil {
			spec <- bulkLog{err: names.err}
			return
		}
		spec <- b.sealKeyed(tx, names, nil)
	}()
}

// AllChange tells the load that every operation is expected to change its
// record (a snapshot's distinct nodes and edges into an empty store): the
// fast path then encodes and compresses the log record before the edge
// sorts confirm it, beside the keyspaces' work. If some operation changes
// nothing after all, that work is discarded and the record encoded again:
// the record is the same either way.
func (b *Bulk) AllChange() { b.allChange = true }

// relNames is every relation the load names, by id.
func (b *Bulk) relNames() map[RelID]string {
	names := make(map[RelID]string, len(b.relOf))
	for id, r := range b.relOf {
		names[id] = r.Name
	}
	return names
}

// keyedNames is the key table of the nops format-01 ops already in ops
// and of the load's operations that change something (all of them with
// changed nil), in order.
func (b *Bulk) keyedNames(relNames map[RelID]string, ops []byte, nops int, changed bitSet) logNames {
	t := newKeyTable(len(b.provs) + len(relNames) + len(b.types))
	pre, err := t.appendOps(make([]byte, 0, len(ops)), ops, nops)
	if err != nil {
		return logNames{err: err}
	}
	names := logNames{t: t, pre: pre}
	b.indexNames(&names, changed, relNames)
	return names
}

// indexNames adds to names' table, in the order format 03 lists them
// (each operation's provenance, then its names in field order), every
// name the operations that change something (every operation, with
// changed nil) use, and sets their indices (names.k).
//
// When no key was changed by its redaction, the keys are distinct (as
// given, they are the key table's map keys), so a key that is no other
// name (provenance, relation, type, or a name of t) is added to the
// table without a lookup, as its index in the load's keys (names.order);
// the others go through t's map, on both sides.
func (b *Bulk) indexNames(names *logNames, changed bitSet, relNames map[RelID]string) {
	t := names.t
	k := &keyedIndex{b: b, keys: make([]uint32, b.keys.len()), prov: make([][3]uint32, len(b.provs)), typs: make([]uint32, len(b.typeNames))}
	maxRel := RelID(0)
	for id := range relNames {
		maxRel = max(maxRel, id)
	}
	k.rels = make([]uint32, int(maxRel)+1)
	var others map[string]bool // the names that are not keys, when keys skip the map
	if !b.keys.redactedSome {
		others = make(map[string]bool, len(t.idx)+3*len(b.provs)+len(relNames)+len(b.types))
		for name := range t.idx {
			others[name] = true
		}
		for _, pv := range b.provs {
			others[pv.scope], others[pv.run], others[pv.task] = true, true, true
		}
		for _, name := range relNames {
			others[name] = true
		}
		for typ := range b.types {
			others[typ] = true
		}
		names.order = make([]uint32, t.n, int(t.n)+b.keys.len())
	}
	named := func(name string) uint32 {
		n0 := t.n
		i := keyIndex(t, name)
		if names.order != nil && t.n != n0 {
			names.order = append(names.order, 0)
		}
		return i
	}
	keyBytes := 0 // the table entries of keys added as their index
	// Indices +1 while the table fills: 0 is not in it yet.
	key := func(i uint32) {
		if k.keys[i] != 0 {
			return
		}
		name := b.keys.at(i)
		if others == nil || others[name] {
			k.keys[i] = named(name) + 1
			return
		}
		names.order = append(names.order, i+1)
		keyBytes += uvarintLen(uint64(len(name))) + len(name)
		t.n++
		k.keys[i] = t.n
	}
	prov := func(pi uint32) {
		if k.prov[pi][0] == 0 {
			pv := b.provs[pi]
			k.prov[pi] = [3]uint32{named(pv.scope) + 1, named(pv.run) + 1, named(pv.task) + 1}
		}
	}
	for i := range b.seq.len() {
		b.evictEvery(i)
		x := b.op(i)
		if changed != nil && !changed.has(uint32(i)) {
			continue
		}
		if x&bulkEdgeBit != 0 {
			e := b.edges.at(int(x &^ bulkEdgeBit))
			prov(b.edgeProv(e))
			key(e.src)
			if k.rels[e.rel()] == 0 {
				k.rels[e.rel()] = named(relNames[e.rel()]) + 1
			}
			key(e.dst)
			continue
		}
		nd := b.nodes.at(int(x))
		prov(nd.prov)
		key(nd.key)
		if k.typs[nd.typ] == 0 {
			k.typs[nd.typ] = named(b.typeNames[nd.typ]) + 1
		}
	}
	names.k, names.tabLen = k, len(t.tab)+keyBytes
}

// size is the size of operation x in format 03.
func (k *keyedIndex) size(x uint32) int {
	b := k.b
	if x&bulkEdgeBit != 0 {
		e := b.edges.at(int(x &^ bulkEdgeBit))
		pv := &k.prov[b.edgeProv(e)]
		pay := len(b.edgePayload(e))
		return 1 + idxLen(pv[0]) + idxLen(pv[1]) + idxLen(pv[2]) + idxLen(k.keys[e.src]) + idxLen(k.rels[e.rel()]) + idxLen(k.keys[e.dst]) +
			4 + uvarintLen(uint64(pay)) + pay
	}
	nd := b.nodes.at(int(x))
	pv := &k.prov[nd.prov]
	pay := int(nd.pay.n)
	return 1 + idxLen(pv[0]) + idxLen(pv[1]) + idxLen(pv[2]) + idxLen(k.keys[nd.key]) + idxLen(k.typs[nd.typ]) + uvarintLen(uint64(pay)) + pay
}

// append appends operation x in format 03.
func (k *keyedIndex) append(out []byte, x uint32) []byte {
	b := k.b
	if x&bulkEdgeBit != 0 {
		e := b.edges.at(int(x &^ bulkEdgeBit))
		pv := &k.prov[b.edgeProv(e)]
		out = append(out, byte(OpPutEdge))
		out = appendIdx(appendIdx(appendIdx(out, pv[0]), pv[1]), pv[2])
		out = appendIdx(appendIdx(appendIdx(out, k.keys[e.src]), k.rels[e.rel()]), k.keys[e.dst])
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(b.edgeWeight(e)))
		pay := b.edgePayload(e)
		return append(binary.AppendUvarint(out, uint64(len(pay))), pay...)
	}
	nd := b.nodes.at(int(x))
	pv := &k.prov[nd.prov]
	out = append(out, byte(OpPutNode))
	out = appendIdx(appendIdx(appendIdx(out, pv[0]), pv[1]), pv[2])
	out = appendIdx(appendIdx(out, k.keys[nd.key]), k.typs[nd.typ])
	pay := b.nodePayload(nd)
	return append(binary.AppendUvarint(out, uint64(len(pay))), pay...)
}

// appendIdx appends a table index held +1 (keyedIndex).
func appendIdx(out []byte, i uint32) []byte { return binary.AppendUvarint(out, uint64(i-1)) }

// idxLen is appendIdx's length.
func idxLen(i uint32) int { return uvarintLen(uint64(i - 1)) }

// appendLogOp appends operation x (an element of seq) as the log encodes
// it (WriteTxn.op).
func (b *Bulk) appendLogOp(buf []byte, x uint32, relNames map[RelID]string) []byte {
	keys := &b.keys.keys
	if x&bulkEdgeBit != 0 {
		e := b.edges.at(int(x &^ bulkEdgeBit))
		pv := b.provs[b.edgeProv(e)]
		return appendLogOp(buf, OpPutEdge, pv.scope, pv.run, pv.task, func(buf []byte) []byte {
			buf = appendStr(buf, keys.at(e.src))
			buf = appendStr(buf, relNames[e.rel()])
			buf = appendStr(buf, keys.at(e.dst))
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(b.edgeWeight(e)))
			return appendStr(buf, string(b.edgePayload(e)))
		})
	}
	n := b.nodes.at(int(x))
	pv := b.provs[n.prov]
	return appendLogOp(buf, OpPutNode, pv.scope, pv.run, pv.task, func(buf []byte) []byte {
		buf = appendStr(buf, keys.at(n.key))
		buf = appendStr(buf, b.typeNames[n.typ])
		return appendStr(buf, string(b.nodePayload(n)))
	})
}

// logOpSize is the exact size of appendLogOp's encoding of x.
func (b *Bulk) logOpSize(x uint32, relNames map[RelID]string) int {
	keys := &b.keys.keys
	str := func(n int) int { return uvarintLen(uint64(n)) + n }
	if x&bulkEdgeBit != 0 {
		e := b.edges.at(int(x &^ bulkEdgeBit))
		pv := b.provs[b.edgeProv(e)]
		return 1 + str(len(pv.scope)) + str(len(pv.run)) + str(len(pv.task)) +
			str(len(keys.at(e.src))) + str(len(relNames[e.rel()])) + str(len(keys.at(e.dst))) + 4 + str(len(b.edgePayload(e)))
	}
	n := b.nodes.at(int(x))
	pv := b.provs[n.prov]
	return 1 + str(len(pv.scope)) + str(len(pv.run)) + str(len(pv.task)) + str(len(keys.at(n.key))) + str(len(b.typeNames[n.typ])) + str(int(n.pay.n))
}
