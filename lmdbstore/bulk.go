package lmdbstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// Bulk collects put_node and put_edge operations and commits them as one
// write transaction (one revision), like Update with the same calls in the
// same order would: the same records, ids, log record and revision, and
// adjacency lists with the same entries (SPEC §2, "Bulk loads").
//
// When the store holds no node and no edge yet (only relations and kv
// entries), Commit builds every keyspace in memory, sorted, and appends it
// with MDB_APPEND (pages filled completely, no B-tree search per record),
// packing adjacency lists into chunks as Compact does; encoding runs on
// several goroutines. Otherwise, or with telemetry on (events are per
// operation), Commit replays the operations through the ordinary write path
// in one transaction. Either way the result is the store the ordinary path
// produces (same logical snapshot hash; Check holds).
//
// A Bulk is not safe for concurrent use. Operations are validated as they
// are added where that needs no store state (keys, weights, relations);
// payloads are canonicalised and collisions found at Commit, whose errors
// name the operation (*BulkOpError).
type Bulk struct {
	s     *Store
	meta  WriteMeta
	red   redaction // secret redaction, as for WriteTxn
	rels  map[string]Relation
	relOf map[RelID]Relation
	provs []provenance          // distinct (scope, run, task), interned
	provN map[provenance]uint32 // index into provs
	keys  bulkKeys              // every node key named, once
	types map[string]uint32     // node type → index into typeNames
	// typeNames are the node types, once each (copies).
	typeNames []string
	nodes     chunked[bulkNode]
	// nodePay holds the node payloads, edgePays the edge payloads (two
	// arenas: a shed load drops the first and keeps the second).
	nodePay, edgePays payArena
	// nodeValid holds the valid times of the nodes that have one, by index
	// into nodes.
	nodeValid map[uint32]Validity
	edges     chunked[bulkEdge]
	// edgeExtras holds the weight, provenance and payload of the edges
	// that have a provenance other than provs[0] or a payload (edgeExtra).
	edgeExtras chunked[bulkEdgeExtra]
	// edgePay holds the edge payloads (edgePayIndex indexes it; 0 is none),
	// so that edges hold no pointer.
	edgePay []payRef
	seq     chunked[uint32] // operations in order: bulkEdgeBit | index into edges, or an index into nodes (op)
	// logValue delivers the fast path's log record (compressed beside the
	// ids keyspace's writes); log is that record once received.
	logValue chan bulkLog
	log      bulkLog
	// logNames delivers the log record's key table when nameLog filled
	// it early; nil otherwise.
	logNames chan logNames
	// allChange: AllChange was called; logSpec then delivers nameLog's
	// record of every operation.
	allChange bool
	logSpec   chan bulkLog
	// Appended reports, after Commit, whether the fast path (appending into
	// an empty store) ran rather than the ordinary write path.
	Appended bool
	// valid: some node has a valid time, which the fast path does not
	// encode; such a load takes the ordinary write path.
	valid bool
	// addRels are relations the load registers before its puts (AddRelation),
	// with the ids they were given.
	addRels []Relation
	// valueBatch is the number of node values the fast path encodes at a
	// time (nodeValueBatch; tests set it small).
	valueBatch int
	// logBytes is the size of the log record's operations before
	// compression (encodeLog), which decides when write waits for it.
	logBytes int
	// logPut: write put the log record itself (putLate); log.v is its format byte.
	logPut bool
	// evictN is evictOps unless a test sets it (0: evictOps).
	evictN int
	// onEvict, when a test sets it, is called as evictPayloads starts.
	onEvict func()
	// onLogPut, when a test sets it, is called as putLate writes the log
	// record.
	onLogPut func(tx *WriteTxn)
	// holdLog is holdLogBytes unless a test sets it (0: holdLogBytes).
	holdLog int
	// keyedWin is keyedWindow unless a test sets it (0: keyedWindow).
	keyedWin int
	// sidePart is sidePartEdges unless a test sets it (0: sidePartEdges).
	sidePart int
	// relIDs are the relations PutEdgeRefs resolved, by id (Name "": not
	// yet).
	relIDs []Relation
	// view is the last KeyView taken, when the load had viewKeys keys.
	view     *KeyView
	viewKeys int
	// dropDangling: Commit first drops the edge operations an endpoint of
	// which no node operation of the load names (DropDangling).
	dropDangling bool
	requireEmpty bool // Commit refuses a store that is not empty (RequireEmpty)
	// shedAfterNodes: Commit reserved the map a fast-path commit needs, so
	// it may shed the node puts once they are written (shed); shedDone: it
	// did.
	shedAfterNodes, shedDone bool
	// Changed counts, after Commit, the node and edge operations that
	// changed their record (those the log record holds); Dropped the edge
	// operations DropDangling left out.
	Changed struct{ Nodes, Edges int }
	Dropped int
}

const bulkEdgeBit = 1 << 31

type provenance struct{ scope, run, task string }

// bulkNode holds no pointer (nor does bulkEdge): a large load's nodes are
// plain data to the collector.
type bulkNode struct {
	key  uint32 // index into keys
	typ  uint32 // index into typeNames
	prov uint32
	pay  payRef // in nodePay: as given; canonical after canonicalise
}

// A bulkEdge takes 16 bytes: its weight is inline unless the edge has a
// provenance other than the load's first (prov 0) or a payload; then x
// indexes edgeExtras, which holds the three (a load's edges rarely do:
// ingest's and import's never).
type bulkEdge struct {
	src, dst uint32 // indexes into keys
	relf     uint32 // relation id << edgeRelShift | edgeExplicit | edgeExtra
	x        uint32 // the effective weight's bits; with edgeExtra, an index into edgeExtras
}

// bulkEdge.relf's flags: the weight was given (not the relation's
// default); x indexes edgeExtras.
const (
	edgeExplicit = 1 << iota
	edgeExtra
	edgeRelShift = iota
)

// maxBulkRel is the largest relation id a bulk load's edge can name (ids
// are given in sequence from 1: a store would need a billion relations).
const maxBulkRel = 1<<(32-edgeRelShift) - 1

// bulkEdgeExtra is what an edge with edgeExtra holds beside its bulkEdge.
type bulkEdgeExtra struct {
	weight    float32 // effective
	prov, pay uint32  // pay: index into edgePay, 0: no payload
}

func (e *bulkEdge) rel() RelID     { return RelID(e.relf >> edgeRelShift) }
func (e *bulkEdge) explicit() bool { return e.relf&edgeExplicit != 0 }

// edgeWeight is e's effective weight.
func (b *Bulk) edgeWeight(e *bulkEdge) float32 {
	if e.relf&edgeExtra != 0 {
		return b.edgeExtras.at(int(e.x)).weight
	}
	return math.Float32frombits(e.x)
}

// edgeProv is the index of e's provenance into provs.
func (b *Bulk) edgeProv(e *bulkEdge) uint32 {
	if e.relf&edgeExtra != 0 {
		return b.edgeExtras.at(int(e.x)).prov
	}
	return 0
}

// edgePayIndex is e's index into edgePay (0: no payload).
func (b *Bulk) edgePayIndex(e *bulkEdge) uint32 {
	if e.relf&edgeExtra != 0 {
		return b.edgeExtras.at(int(e.x)).pay
	}
	return 0
}

// BulkOpError is a Bulk operation the store refused: Op is its position
// among the operations added (from 0).
type BulkOpError struct {
	Op  int
	Err error
}

func (e *BulkOpError) Error() string { return fmt.Sprintf("operation %d: %v", e.Op, e.Err) }
func (e *BulkOpError) Unwrap() error { return e.Err }

// NewBulk starts a bulk load whose operations inherit meta's provenance.
func (s *Store) NewBulk(meta WriteMeta) *Bulk {
	b := &Bulk{s: s, red: redaction{r: s.opts.Redactor}, valueBatch: nodeValueBatch}
	b.nodePay.spillTo(s.path, 0)
	b.edgePays.spillTo(s.path, 0)
	b.keys.spillTo(s.path)
	b.edges.spillTo(s.path, opsResident)
	b.nodes.spillTo(s.path, opsResident)
	b.seq.spillTo(s.path, opsResident)
	b.meta = b.red.meta(meta)
	if meta.Derived {
		b.red.r = nil // as for WriteTxn
	}
	return b
}

// Len is the number of operations added.
func (b *Bulk) Len() int { return b.seq.len() }

// prov interns an operation's provenance after inheriting the
// transaction's for empty fields.
func (b *Bulk) prov(scope, run, task string) uint32 {
	scope, run, task = b.meta.inherit(scope, run, task)
	p := provenance{scope, run, task}
	if n := len(b.provs); n > 0 && b.provs[n-1] == p {
		return uint32(n - 1)
	}
	if i, ok := b.provN[p]; ok {
		return i
	}
	if b.provN == nil {
		b.provN = map[provenance]uint32{}
	}
	p = provenance{strings.Clone(scope), strings.Clone(run), strings.Clone(task)} // kept: copies, as keys
	b.provN[p] = uint32(len(b.provs))
	b.provs = append(b.provs, p)
	return uint32(len(b.provs) - 1)
}

// key is the index of a prepared key (KeyView.Prepare), registered
// (redacted unless the preparation did, then validated as an edge
// endpoint with what naming it in an error) when new, and used by the
// next operation; the secrets it held are counted once more, as WriteTxn
// counts them per use.
func (b *Bulk) key(k PreparedKey, what string) (uint32, error) {
	i, ok := b.preparedRef(k)
	if !ok {
		red, n := b.redacted(k)
		if err := validEndpoint(what, red); err != nil {
			return 0, err
		}
		i = b.keys.add(k.raw, red, n)
	}
	b.red.n += b.keys.secrets(i)
	return i, nil
}

// Key registers a node key for PutEdgeRef, which then names it without
// looking it up: it is redacted and checked as PutEdge checks an endpoint.
// A key no operation names is not stored.
func (b *Bulk) Key(key string) (KeyRef, error) {
	if i, ok := b.keys.lookup(key); ok {
		return KeyRef(i), nil
	}
	red, n := b.red.scan(key)
	if err := validEndpoint("key", red); err != nil {
		return 0, err
	}
	return KeyRef(b.keys.add(key, red, n)), nil
}

// Keys is Key of every key, the keys redacted on every core first. An
// invalid key is refused (by its position in keys); the keys before it
// stay registered.
func (b *Bulk) Keys(keys []string) ([]KeyRef, error) {
	red := make([]string, len(keys))
	n := make([]int, len(keys))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(keys)/1024))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := redaction{r: b.red.r}
			for i := w * len(keys) / workers; i < (w+1)*len(keys)/workers; i++ {
				red[i], n[i] = d.scan(keys[i])
			}
		}()
	}
	wg.Wait()
	refs := make([]KeyRef, len(keys))
	b.keys.grow(len(keys))
	for i, key := range keys {
		if r, ok := b.keys.lookup(key); ok {
			refs[i] = KeyRef(r)
			continue
		}
		if err := validEndpoint("key", red[i]); err != nil {
			return nil, fmt.Errorf("key %d (%q): %w", i, key, err)
		}
		refs[i] = KeyRef(b.keys.add(key, red[i], n[i]))
	}
	return refs, nil
}

// PutNode adds a put_node (WriteTxn.PutNode's rules). An invalid key is
// refused here; nothing is added then.
func (b *Bulk) PutNode(p NodePut) error { return b.PutNodePrepared(p, PreparedKey{raw: p.Key}) }

// PutNodePrepared is PutNode with p.Key prepared as k (KeyView.Prepare
// of the same key).
func (b *Bulk) PutNodePrepared(p NodePut, k PreparedKey) error {
	raw := k.raw
	ref, known := b.preparedRef(k)
	n := 0
	if known {
		p.Key, n = b.keys.at(ref), b.keys.secrets(ref)
	} else {
		p.Key, n = b.redacted(k)
	}
	b.red.n += n
	p.Type = b.red.text(p.Type)
	p.Scope, p.RunID, p.TaskID = b.red.provenance(p.Scope, p.RunID, p.TaskID) // the payload at Commit (canonicalise)
	typ, err := checkNodePut(p)                                               // a node key passes validEndpoint too
	if err == nil && !p.Valid.IsZero() {
		_, err = toValidity(p.Valid)
	}
	if err != nil {
		return err
	}
	if !known {
		ref = b.keys.add(raw, p.Key, n)
	}
	ti, ok := b.types[typ]
	if !ok {
		if b.types == nil {
			b.types = map[string]uint32{}
		}
		ti = uint32(len(b.typeNames))
		typ = strings.Clone(typ)
		b.types[typ] = ti
		b.typeNames = append(b.typeNames, typ)
	}
	if !p.Valid.IsZero() {
		b.valid = true
		if b.nodeValid == nil {
			b.nodeValid = map[uint32]Validity{}
		}
		b.nodeValid[uint32(b.nodes.len())] = p.Valid
	}
	b.keys.use(ref, b.seq.len())
	b.seq.add(uint32(b.nodes.len()))
	b.nodes.add(bulkNode{key: ref, typ: ti, pay: b.nodePay.add(p.Payload), prov: b.prov(p.Scope, p.RunID, p.TaskID)})
	return nil
}

// PutEdge adds a put_edge (WriteTxn.PutEdge's rules). Invalid keys, an
// unknown relation or a bad weight are refused here; nothing is added then.
func (b *Bulk) PutEdge(p EdgePut) error {
	return b.PutEdgePrepared(p, PreparedKey{raw: p.Src}, PreparedKey{raw: p.Dst})
}

// PutEdgePrepared is PutEdge with p.Src and p.Dst prepared as src and dst
// (KeyView.Prepare of the same keys).
func (b *Bulk) PutEdgePrepared(p EdgePut, src, dst PreparedKey) error {
	p.Scope, p.RunID, p.TaskID = b.red.provenance(p.Scope, p.RunID, p.TaskID) // the payload at Commit (canonicalise)
	// A relation resolved before had its name checked then.
	if _, ok := b.rels[p.Rel]; !ok {
		if err := b.red.relName(p.Rel); err != nil {
			return err
		}
	}
	si, err := b.key(src, "source key")
	if err != nil {
		return err
	}
	di, err := b.key(dst, "destination key")
	if err != nil {
		return err
	}
	p.Src, p.Dst = "", ""
	if p.Rel == relSupersedes || p.Rel == relContradicts { // the only relations checkEdgeValues compares them for
		p.Src, p.Dst = b.keys.at(si), b.keys.at(di) // (the key table is read only then: a random key is a cache miss)
	}
	rel, weight, explicit, err := checkEdgeValues(p, b.relation)
	if err != nil {
		return err
	}
	pay := uint32(0)
	if len(p.Payload) > 0 {
		if len(b.edgePay) == 0 {
			b.edgePay = append(b.edgePay, payRef{})
		}
		pay = uint32(len(b.edgePay))
		b.edgePay = append(b.edgePay, b.edgePays.add(p.Payload))
	}
	return b.addEdge(si, di, rel.ID, weight, explicit, b.prov(p.Scope, p.RunID, p.TaskID), pay)
}

// PutEdgeRef adds a put_edge src -rel-> dst between keys registered with
// Key, with no payload and the load's provenance: PutEdge's rules, with no
// key looked up or checked again. A weight of 0 is the relation's default.
func (b *Bulk) PutEdgeRef(src KeyRef, rel string, dst KeyRef, weight float32) error {
	if int(src) >= b.keys.len() || int(dst) >= b.keys.len() {
		return fmt.Errorf("%w: bulk key reference out of range", ErrInvalid)
	}
	if err := b.red.relName(rel); err != nil {
		return err
	}
	r, weight, explicit, err := checkEdgeValues(EdgePut{Src: b.keys.at(uint32(src)), Rel: rel, Dst: b.keys.at(uint32(dst)), Weight: weight}, b.relation)
	if err != nil {
		return err
	}
	b.red.n += b.keys.secrets(uint32(src)) + b.keys.secrets(uint32(dst))
	return b.addEdge(uint32(src), uint32(dst), r.ID, weight, explicit, b.prov("", "", ""), 0)
}

// PutEdgeRefs adds the put_edge operations src -rels[i]-> dsts[i] with
// weight weights[i], in order: PutEdgeRef of each, with the relation named
// by id (a relation of the store or one AddRelation registered) and
// resolved once per load rather than by name per edge. The three slices
// have one element per edge. An edge the load refuses is a *BulkOpError
// (Op: the position it would have had among the operations); the edges
// before it stay added, it and the ones after it are not.
func (b *Bulk) PutEdgeRefs(src KeyRef, rels []RelID, dsts []KeyRef, weights []float32) error {
	if len(rels) != len(dsts) || len(weights) != len(dsts) {
		return fmt.Errorf("%w: bulk edges: %d relations, %d destinations, %d weights", ErrInvalid, len(rels), len(dsts), len(weights))
	}
	nk := b.keys.len()
	if int(src) >= nk {
		return fmt.Errorf("%w: bulk key reference out of range", ErrInvalid)
	}
	prov := b.prov("", "", "")
	srcKey, srcN := b.keys.at(uint32(src)), b.keys.secrets(uint32(src))
	var r Relation
	for i, dst := range dsts {
		if int(dst) >= nk {
			return &BulkOpError{Op: b.seq.len(), Err: fmt.Errorf("%w: bulk key reference out of range", ErrInvalid)}
		}
		if i == 0 || rels[i] != r.ID {
			var err error
			if r, err = b.relationByID(rels[i]); err != nil {
				return &BulkOpError{Op: b.seq.len(), Err: err}
			}
		}
		w := weights[i]
		if w == 0 {
			w = r.DefaultWeight
		} else if err := validWeight(w); err != nil {
			return &BulkOpError{Op: b.seq.len(), Err: err}
		}
		if (r.Name == relSupersedes || r.Name == relContradicts) && srcKey == b.keys.at(uint32(dst)) {
			_, _, _, err := checkEdgeValues(EdgePut{Src: srcKey, Rel: r.Name, Dst: srcKey}, b.relation) // its error
			return &BulkOpError{Op: b.seq.len(), Err: err}
		}
		b.red.n += srcN + b.keys.secrets(uint32(dst))
		if err := b.addEdge(uint32(src), uint32(dst), r.ID, w, w != r.DefaultWeight, prov, 0); err != nil {
			return &BulkOpError{Op: b.seq.len(), Err: err}
		}
	}
	return nil
}

// relationByID resolves a relation id as relation resolves a name (a
// name holding a secret is refused as PutEdge refuses it), once per load.
func (b *Bulk) relationByID(id RelID) (Relation, error) {
	if int(id) < len(b.relIDs) && b.relIDs[id].Name != "" {
		return b.relIDs[id], nil
	}
	rel, ok := b.relOf[id] // registered by name or AddRelation, checked then
	if !ok {
		if err := b.s.View(func(r *ReadTxn) error {
			var err error
			rel, err = r.RelationByID(id)
			return err
		}); err != nil {
			return Relation{}, err
		}
		if err := b.red.relName(rel.Name); err != nil {
			return Relation{}, err
		}
		if b.rels == nil {
			b.rels, b.relOf = map[string]Relation{}, map[RelID]Relation{}
		}
		b.rels[rel.Name], b.relOf[id] = rel, rel
	}
	if int(id) >= len(b.relIDs) {
		b.relIDs = append(b.relIDs, make([]Relation, int(id)+1-len(b.relIDs))...)
	}
	b.relIDs[id] = rel
	return rel, nil
}

// addEdge appends a checked edge operation.
func (b *Bulk) addEdge(src, dst uint32, rel RelID, weight float32, explicit bool, prov, pay uint32) error {
	if rel > maxBulkRel {
		return fmt.Errorf("%w: relation id %d: a bulk load takes relation ids up to %d", ErrInvalid, rel, maxBulkRel)
	}
	e := bulkEdge{src: src, dst: dst, relf: uint32(rel) << edgeRelShift, x: math.Float32bits(weight)}
	if explicit {
		e.relf |= edgeExplicit
	}
	if prov != 0 || pay != 0 {
		e.relf |= edgeExtra
		e.x = uint32(b.edgeExtras.add(bulkEdgeExtra{weight: weight, prov: prov, pay: pay}))
	}
	b.keys.use(src, b.seq.len())
	b.keys.use(dst, b.seq.len())
	b.seq.add(bulkEdgeBit | uint32(b.edges.add(e)))
	return nil
}

// AddRelation registers a relation in the load's revision, before every
// put (WriteTxn.AddRelation's rules, checked again at Commit): the edges
// added after it may use it. The id it gets follows the committed
// relations; a relation registered by another writer before Commit makes
// Commit fail (ErrInvalid) and write nothing.
func (b *Bulk) AddRelation(r Relation) (RelID, error) {
	if b.seq.len() > 0 {
		return 0, fmt.Errorf("%w: bulk AddRelation after a put", ErrInvalid)
	}
	if err := b.red.relName(r.Name); err != nil {
		return 0, err
	}
	if err := validRelName(r.Name); err != nil {
		return 0, err
	}
	if r.DefaultWeight == 0 {
		r.DefaultWeight = 1
	}
	if err := validWeight(r.DefaultWeight); err != nil {
		return 0, err
	}
	if _, err := b.relation(r.Name); err == nil {
		return 0, fmt.Errorf("%w: relation %q already exists", ErrInvalid, r.Name)
	}
	var next uint64
	if err := b.s.View(func(rt *ReadTxn) error {
		var err error
		next, err = getU64(rt.txn(), b.s.db.meta, metaNextRel)
		return err
	}); err != nil {
		return 0, err
	}
	r.ID = RelID(next) + RelID(len(b.addRels))
	if b.rels == nil {
		b.rels, b.relOf = map[string]Relation{}, map[RelID]Relation{}
	}
	b.rels[r.Name], b.relOf[r.ID] = r, r
	b.addRels = append(b.addRels, r)
	return r.ID, nil
}

// addRelations registers the load's relations in tx, with the ids
// AddRelation gave them.
func (b *Bulk) addRelations(tx *WriteTxn) error {
	for _, r := range b.addRels {
		id, err := tx.AddRelation(r)
		if err != nil {
			return err
		}
		if id != r.ID {
			return fmt.Errorf("%w: relation %q: another writer registered relations during the bulk load", ErrInvalid, r.Name)
		}
	}
	return nil
}

// relation resolves a relation name against the committed relations and
// those the load adds.
func (b *Bulk) relation(name string) (Relation, error) {
	if r, ok := b.rels[name]; ok {
		return r, nil
	}
	var rel Relation
	err := b.s.View(func(r *ReadTxn) error {
		var err error
		rel, err = r.RelationByName(name)
		return err
	})
	if err != nil {
		return Relation{}, err
	}
	if b.rels == nil {
		b.rels, b.relOf = map[string]Relation{}, map[RelID]Relation{}
	}
	b.rels[name], b.relOf[rel.ID] = rel, rel
	return rel, nil
}

// canonicalise redacts every raw payload (the store's Redactor, as
// WriteTxn does before it canonicalises) and turns it into its stored
// form, on every core; the first failure (in operation order) is returned.
func (b *Bulk) canonicalise() error {
	workers := max(1, runtime.GOMAXPROCS(0))
	errs := make([]error, workers)
	bad := make([]int, workers)
	found := make([]int, workers) // secrets redacted, per worker
	// changed: per worker, the payloads whose stored form differs from the
	// one given, added to the arenas once every worker is done.
	changed := make([][]changedPay, workers)
	var wg sync.WaitGroup
	n := b.seq.len()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bad[w] = -1
			red := redaction{r: b.red.r}
			defer func() { found[w] = red.n }()
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				b.evictEvery(i)
				x := b.op(i)
				var given []byte
				if x&bulkEdgeBit != 0 {
					given = b.edgePayload(b.edges.at(int(x &^ bulkEdgeBit)))
				} else {
					given = b.nodePayload(b.nodes.at(int(x)))
				}
				if len(given) == 0 {
					continue // none: stored as none (most edges)
				}
				c, err := canonicalPayload(red.payload(given), false)
				if err == nil && !bytes.Equal(c, given) {
					changed[w] = append(changed[w], changedPay{x, c})
				}
				if err != nil {
					errs[w], bad[w] = err, i
					return
				}
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			return &BulkOpError{Op: bad[w], Err: errs[w]}
		}
	}
	for _, f := range found {
		b.red.n += f
	}
	for _, ch := range changed {
		for _, c := range ch {
			if c.x&bulkEdgeBit != 0 {
				b.edgePay[b.edgePayIndex(b.edges.at(int(c.x&^bulkEdgeBit)))] = b.edgePays.add(c.p)
			} else {
				b.nodes.at(int(c.x)).pay = b.nodePay.add(c.p)
			}
		}
	}
	return nil
}

// changedPay is a payload whose stored form differs from the one given:
// the operation (an entry of seq) and that form. Payloads usually arrive
// canonical (ingest makes them so), and then the arena holds each once.
type changedPay struct {
	x uint32
	p []byte
}

// RequireEmpty makes Commit refuse a store that holds a node or an edge
// when the load commits (ErrNotEmpty, nothing written): for a load that is
// right only into an empty store, as a first `ingest go` is (it does not
// read what its operations would replace or share), while another writer
// may write between the caller's check and the commit.
func (b *Bulk) RequireEmpty() { b.requireEmpty = true }

// DropDangling makes Commit leave out every edge operation whose source
// or destination no node operation of the load names, as if it had never
// been added (SPEC §2, "Bulk loads"): a caller that learns which keys are
// nodes only as it goes (`ingest go` fed while it extracts) then adds
// edges to keys outside its graph without keeping them to drop itself.
// Operation positions (BulkOpError.Op) count the operations kept.
func (b *Bulk) DropDangling() { b.dropDangling = true }

// dropDanglingEdges removes the edge operations DropDangling leaves out,
// in place, keeping the order of the others, and numbers the keys' first
// uses again.
func (b *Bulk) dropDanglingEdges() {
	isNode := make([]bool, b.keys.len())
	for i := range b.nodes.len() {
		b.evictEvery(i)
		isNode[b.nodes.at(i).key] = true
	}
	kept, ops := 0, 0 // edges and operations kept
	for i := range b.seq.len() {
		b.evictEvery(i)
		x := b.op(i)
		if x&bulkEdgeBit == 0 {
			*b.seq.at(ops) = x
			ops++
			continue
		}
		e := *b.edges.at(int(x &^ bulkEdgeBit))
		if !isNode[e.src] || !isNode[e.dst] {
			b.red.n -= b.keys.secrets(e.src) + b.keys.secrets(e.dst) // counted per use when added
			if pay := b.edgePayIndex(&e); pay != 0 {
				b.edgePay[pay] = payRef{} // its bytes stay in the arena until the load is done
			}
			b.Dropped++
			continue
		}
		*b.edges.at(kept) = e
		*b.seq.at(ops) = bulkEdgeBit | uint32(kept)
		kept++
		ops++
	}
	b.edges.truncate(kept)
	b.seq.truncate(ops)
	for i := range b.keys.first.len() {
		if i%evictOps == 0 {
			b.keys.first.evict()
		}
		*b.keys.first.at(i) = notUsed
	}
	for i := range b.seq.len() {
		b.evictEvery(i)
		x := b.op(i)
		if x&bulkEdgeBit != 0 {
			e := b.edges.at(int(x &^ bulkEdgeBit))
			b.keys.use(e.src, i)
			b.keys.use(e.dst, i)
		} else {
			b.keys.use(b.nodes.at(int(x)).key, i)
		}
	}
}

// Commit writes every operation added as one revision (see Bulk). A Bulk
// whose every put changes nothing commits nothing (Commit.Rev 0).
func (b *Bulk) Commit() (Commit, error) {
	// No key is looked up from here on: the index, and the last view's
	// copy of it, go (std×80's: 134 MB) before the commit's own tables.
	b.keys.dropIndex()
	b.view = nil
	if b.dropDangling {
		b.dropDanglingEdges()
	}
	b.nodePay.seal()
	b.edgePays.seal()
	if err := b.canonicalise(); err != nil {
		return Commit{}, err
	}
	if err := b.supersedeCycle(); err != nil {
		return Commit{}, err
	}
	s := b.s
	// With the map a fast-path commit may need reserved, no full map can
	// ask it to run again, and it may shed its node puts (shed). A store
	// bound to a remote may run it again to catch up (retryBehind): no
	// shedding there.
	if s.opts.Replicator == nil {
		ok, err := s.reserveMap(b.mapNeed())
		if err != nil {
			return Commit{}, err
		}
		b.shedAfterNodes = ok
	}
	var tx *WriteTxn
	var aborted bool
	err := s.retryBehind(func() (err error) {
		aborted, err = s.update(func(txn *lmdb.Txn) error { return b.commitIn(txn, &tx) })
		return err
	})
	if err != nil {
		return Commit{}, err
	}
	if aborted {
		return Commit{}, nil
	}
	s.ids.addCommitted(tx.verifiedIDs, tx.knownIDs)
	s.emitWrites(tx)
	return Commit{Rev: tx.rev, Time: nsTime(tx.ts), Ops: tx.nops, Redacted: b.red.n}, nil
}

// commitIn is one attempt of Commit inside txn.
func (b *Bulk) commitIn(txn *lmdb.Txn, txp **WriteTxn) error {
	if b.shedDone {
		return errShed
	}
	s := b.s
	tx, err := s.beginWrite(txn, b.meta)
	if err != nil {
		return err
	}
	*txp = tx
	defer tx.close()
	if err := b.addRelations(tx); err != nil {
		return err
	}
	fast := s.opts.Telemetry == nil && !b.valid
	if fast || b.requireEmpty {
		empty, err := b.storeEmpty(txn)
		if err != nil {
			return err
		}
		if b.requireEmpty && !empty {
			return ErrNotEmpty
		}
		fast = fast && empty
	}
	b.Appended = fast
	if fast {
		err = b.write(tx)
	} else {
		err = b.replay(tx)
	}
	if err != nil {
		return err
	}
	if tx.err != nil {
		return tx.err
	}
	if tx.nops == 0 {
		return errAbort
	}
	if fast {
		lv := b.log
		if lv.err != nil {
			return lv.err
		}
		if b.logPut {
			return tx.finishPutLog(lv.v)
		}
		return tx.finishLog(lv.v)
	}
	return tx.finish()
}

// storeEmpty reports whether no node or edge was ever written (so ids, n,
// e, out, in and hist are empty and can be appended to in key order).
func (b *Bulk) storeEmpty(txn *lmdb.Txn) (bool, error) {
	for _, dbi := range []lmdb.DBI{b.s.db.ids, b.s.db.n, b.s.db.e, b.s.db.out, b.s.db.in, b.s.db.hist} {
		st, err := txn.Stat(dbi)
		if err != nil {
			return false, err
		}
		if st.Entries != 0 {
			return false, nil
		}
	}
	return true, nil
}

// replay runs the operations through the ordinary write path.
func (b *Bulk) replay(tx *WriteTxn) error {
	b.Changed.Nodes, b.Changed.Edges = 0, 0
	for i := range b.seq.len() {
		b.evictEvery(i)
		x := b.op(i)
		var err error
		before := tx.nops
		if x&bulkEdgeBit != 0 {
			e := b.edges.at(int(x &^ bulkEdgeBit))
			pv := b.provs[b.edgeProv(e)]
			// Keys copied: the ordinary path may keep them past the load
			// (a spilled key is a view of a mapping: keyArena).
			p := EdgePut{Src: strings.Clone(b.keys.at(e.src)), Rel: b.relOf[e.rel()].Name, Dst: strings.Clone(b.keys.at(e.dst)), Payload: b.edgePayload(e),
				Scope: pv.scope, RunID: pv.run, TaskID: pv.task}
			if e.explicit() {
				p.Weight = b.edgeWeight(e)
			}
			err = tx.PutEdge(p)
		} else {
			n := b.nodes.at(int(x))
			pv := b.provs[n.prov]
			err = tx.PutNode(NodePut{Key: strings.Clone(b.keys.at(n.key)), Type: b.typeNames[n.typ], Payload: b.nodePayload(n), Valid: b.nodeValid[x],
				Scope: pv.scope, RunID: pv.run, TaskID: pv.task})
		}
		if err != nil {
			return &BulkOpError{Op: i, Err: err}
		}
		if tx.nops != before {
			b.countChange(x)
		}
	}
	return nil
}

// countChange counts operation x (an entry of seq) in Changed.
func (b *Bulk) countChange(x uint32) {
	if x&bulkEdgeBit != 0 {
		b.Changed.Edges++
	} else {
		b.Changed.Nodes++
	}
}

// edgePayload is e's payload, nil for none.
func (b *Bulk) edgePayload(e *bulkEdge) []byte {
	pay := b.edgePayIndex(e)
	if pay == 0 {
		return nil
	}
	return b.edgePays.bytes(b.edgePay[pay])
}

// nodePayload is n's payload, nil for none.
func (b *Bulk) nodePayload(n *bulkNode) []byte { return b.nodePay.bytes(n.pay) }

// bulkEdgeRef is one edge operation in sort order: its endpoints' ranks
// (keyRanks) and relation, then its index (operation order within one
// edge), and its weight: all an adjacency entry needs, so that the
// adjacency lists are written without the edge operations.
type bulkEdgeRef struct {
	a, b uint32 // (src, dst) for the out side, (dst, src) for the in side
	rel  RelID
	idx  uint32
	w    float32
}

func cmpEdgeRefTail(x, y bulkEdgeRef) int {
	if c := cmp.Compare(x.rel, y.rel); c != 0 {
		return c
	}
	if c := cmp.Compare(x.b, y.b); c != 0 {
		return c
	}
	return cmp.Compare(x.idx, y.idx)
}

// bulkPlan is what the fast path resolves in memory before it writes: the
// keys' ids and ranks, which operations change their record, and the edge
// operations sorted by out and in key.
type bulkPlan struct {
	*keyRanks
	// nodeChg and edgeChg hold the node and edge operations (by index
	// into nodes and edges) that change their record, until changed holds
	// the same by position among all operations (opChanges): whether
	// each is logged.
	nodeChg, edgeChg bitSet
	changed          bitSet
	outRefs, inRefs  []bulkEdgeRef // edge operations in out-side and in-side key order (appendEdges)
	// inLate: the edge operations spill, and each side's order is sorted
	// from them a range of keys at a time (eachSidePart) wherever it is
	// read, never held whole; releaseLate: the edge operations are
	// released once the in side's last range is sorted, not before the n
	// records (releaseEdges).
	inLate, releaseLate bool
	finalNodes          []uint32 // index of each node rank's final put, in rank order
	finalEdges          bitSet   // edge operations whose record stays
	edgeRecs            bool     // the e records are written (appendEdgeRecords)
}

// write is the fast path into a store with no node or edge: every record
// resolved in memory, every keyspace appended in key order.
func (b *Bulk) write(tx *WriteTxn) error {
	b.logPut = false
	p, err := b.plan()
	if err != nil {
		return tx.fail(err)
	}
	b.nameLog(tx)
	// The out side's sort runs beside the node work and the ids
	// keyspace's writes (which need only the keys' ranks); the log record
	// is encoded (it touches only tx.ops and tx.nops, which the keyspace
	// writes do not) and compressed beside the other keyspaces' writes
	// (encodeLog). A large record is waited for before the node and edge
	// records: its body (every payload again) would be live while LMDB's
	// dirty pages grow to the store's size, and the two add up to the
	// load's peak memory.
	//
	// A load whose edge operations spill never holds a side's order whole:
	// each reader sorts it from the operations (in the spill file, not in
	// memory) a range of keys at a time (eachSidePart); finding the final
	// edge puts is the reader beside the node work then.
	p.inLate = b.edges.spills()
	var wg sync.WaitGroup
	errc := b.sortEdgeRefs(p, &wg)
	b.finalNodePuts(p)
	err = b.appendIDs(tx, p)
	wg.Wait()
	if err == nil {
		err = <-errc
	}
	if err != nil {
		return tx.fail(err)
	}
	if !p.inLate {
		b.finalEdgePuts(p, p.outRefs)
	}
	b.opChanges(p)
	if err := b.encodeLog(tx, p); err != nil {
		return tx.fail(err) // the compressing goroutine's send does not block (buffered)
	}
	waited := b.logBytes > cmp.Or(b.holdLog, holdLogBytes)
	// A spilling load that sheds writes its e records with the adjacency
	// lists (appendEdges); its edge operations, in the spill file, are
	// released once the in side's last range is sorted from them.
	if waited && b.shedAfterNodes && p.inLate {
		p.releaseLate = true
	}
	if waited {
		// Sealed, the record waits in its parts (in their spill file, past
		// the first few) until every other keyspace is written: see putLate.
		b.log = <-b.logValue
	}
	if waited && b.shedAfterNodes && !p.inLate {
		// The e records are the edge operations' last readers (the log
		// record is sealed): written now, the operations go before LMDB's
		// dirty pages grow with the node records.
		if err := b.appendEdgeRecords(tx, p, p.outRefs, b.mayHaveRecord(tx, p)); err != nil {
			return tx.fail(err)
		}
		b.releaseEdges(p)
	}
	if err := b.appendNodes(tx, p); err != nil {
		return tx.fail(err)
	}
	if waited && b.shedAfterNodes {
		b.shed(p)
	}
	if err := b.appendEdges(tx, p); err != nil {
		return tx.fail(err)
	}
	if !waited {
		b.log = (<-b.logValue).whole()
		return nil
	}
	if err := b.putLate(tx, p); err != nil {
		return tx.fail(err)
	}
	b.log = b.log.whole() // a remote's copy (finishPutLog publishes it); nothing left when put
	return nil
}

// putLate writes a large log record (one write waited for) once every
// other keyspace is: LMDB holds the record in one run of pages it
// allocates in memory, which it never writes before the commit (it spills
// the dirty pages it allocated last first, and the record counts as one),
// so that a record written before the node and edge records stayed in
// memory beside everything they took (226 MB of std×40's 0.65 GB commit,
// 2026-11-29). Written last, it takes the memory they gave back: the
// plan's orders and ranks go first, and the heap's free pages are
// returned to the system. A store bound to a remote writes the record
// whole at the end instead (finishLog), as before.
func (b *Bulk) putLate(tx *WriteTxn, p *bulkPlan) error {
	if b.log.err != nil || b.s.opts.Replicator != nil {
		return nil
	}
	*p = bulkPlan{}
	debug.FreeOSMemory()
	if b.onLogPut != nil {
		b.onLogPut(tx)
	}
	return b.putLog(tx)
}

// putLog writes the log record b.log, and keeps of it its format byte
// (finishPutLog reads no more).
func (b *Bulk) putLog(tx *WriteTxn) error {
	lg := &b.log
	if lg.parts != nil {
		if err := tx.putLogParts(lg.parts); err != nil {
			return err
		}
		lg.v, lg.parts = []byte{lg.parts.parts[0][0]}, nil // putLogParts released its spill file
	} else {
		if err := tx.putLog(lg.v); err != nil {
			return err
		}
		lg.v = []byte{lg.v[0]}
	}
	b.logPut = true
	return nil
}

// mapNeed bounds from above the map a commit of the load needs: the data
// file as it is, plus four times what the load's records can take (their
// payloads and keys, 64 bytes an operation for ids, envelopes, adjacency
// entries in both lists and the log), plus 64 MiB.
func (b *Bulk) mapNeed() int64 {
	n := b.nodePay.size() + b.edgePays.size() + 64*int64(b.nodes.len())
	n += 2 * b.keys.keys.size // the ids keyspace and the log's key table
	n += 64 * int64(b.edges.len())
	var file int64
	if fi, err := os.Stat(filepath.Join(b.s.path, "data.mdb")); err == nil {
		file = fi.Size()
	}
	return file + 4*n + 64<<20
}

// shed lets the collector take, once the node records are written and
// the log record is sealed, what the rest of a fast-path commit never
// reads: every node put (payloads, types) and the key strings. The
// adjacency lists need only ranks, ids and the sides' orders (the edge
// puts went with releaseEdges, before the node records). LMDB's
// dirty pages then grow into memory the load gave back, rather than on top
// of it (the peak of a large load is at its end). A shed load cannot be
// re-run: commitIn refuses to (errShed), and Commit reserved the map such
// a load needs first (reserveMap), so that a full map does not ask it to.
func (b *Bulk) shed(p *bulkPlan) {
	b.nodes.release()
	b.keys.rawOf, b.keys.keys, p.keyRanks.keys = nil, keyArena{}, nil
	b.nodePay.drop()
	b.shedDone = true
	runtime.GC() // now: a memory limit that follows the live heap (the CLI sets one) can give memory back
}

// errShed: a commit that shed its node puts (shed) was asked to run again.
var errShed = fmt.Errorf("%w: the bulk load needed more map than it reserved after it had released its nodes (nothing was written)", ErrMapFull)

// holdLogBytes is the size of a fast-path log record's operations above
// which write waits for its compression before the node and edge records
// (see write).
const holdLogBytes = 64 << 20

// plan resolves the keys (resolveKeys) and numbers the operations.
func (b *Bulk) plan() (*bulkPlan, error) {
	r, err := b.resolveKeys()
	if err != nil {
		return nil, err
	}
	return &bulkPlan{keyRanks: r, nodeChg: newBitSet(b.nodes.len()), edgeChg: newBitSet(b.edges.len()),
		finalEdges: newBitSet(b.edges.len())}, nil
}

// opChanges sets p.changed from p.nodeChg and p.edgeChg, in one pass over
// the operations in order, and counts the changes (b.Changed).
func (b *Bulk) opChanges(p *bulkPlan) {
	b.Changed.Nodes, b.Changed.Edges = 0, 0
	p.changed = newBitSet(b.seq.len())
	for i := range b.seq.len() {
		b.evictEvery(i)
		x := b.op(i)
		chg := p.nodeChg
		if x&bulkEdgeBit != 0 {
			chg = p.edgeChg
		}
		if chg.has(x &^ bulkEdgeBit) {
			p.changed.set(uint32(i))
			b.countChange(x)
		}
	}
	p.nodeChg, p.edgeChg = nil, nil
}

// sortEdgeRefs sorts the edge operations by out key on another goroutine
// (wg is done when it is, and the returned channel then holds its error).
// The in side's order is made from the out side's when its edges are
// written (appendEdges), so that the two are not both held from the start;
// here only when inFromOut would sort the edge operations again, which
// appendEdges may have released by then. With p.inLate the goroutine finds
// the final edge puts a range of keys at a time instead (eachSidePart),
// holding no order.
func (b *Bulk) sortEdgeRefs(p *bulkPlan, wg *sync.WaitGroup) <-chan error {
	errc := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if p.inLate {
			errc <- b.eachSidePart(p, true, func(refs []bulkEdgeRef, _ bool) error {
				b.finalEdgePuts(p, refs)
				return nil
			})
			return
		}
		p.outRefs = b.sortSide(p, true)
		if _, nrel := relRanks(p.outRefs); !inFromOutFits(p, nrel, len(p.outRefs)) {
			p.inRefs = b.sortSide(p, false)
		}
		errc <- nil
	}()
	return errc
}

// relRanks maps each relation id of refs to its rank among them, +1 (0:
// absent), in id order, and counts them.
func relRanks(refs []bulkEdgeRef) (dense []uint32, nrel int) {
	for i := range refs {
		r := refs[i].rel
		if int(r) >= len(dense) {
			dense = append(dense, make([]uint32, int(r)+1-len(dense))...)
		}
		dense[r] = 1
	}
	for r := range dense {
		if dense[r] != 0 {
			nrel++
			dense[r] = uint32(nrel)
		}
	}
	return dense, nrel
}

// inFromOutFits: inFromOut counts (node, relation) buckets for nrel
// relations (at most maxInBuckets) rather than sorting.
func inFromOutFits(p *bulkPlan, nrel, edges int) bool {
	return nrel > 0 && len(p.ids)*nrel <= maxInBuckets(edges)
}

// maxInBuckets is how many (node, relation) buckets inFromOut may count
// for edges edge operations (4 bytes each, transient: at most 8 bytes an
// edge beside the 20 of each side's order); more, and it sorts instead.
func maxInBuckets(edges int) int { return 2*edges + 1<<16 }

// inFromOut is the in side's order (sortSide(p, false)) made from the out
// side's: a stable counting sort of out by (destination rank, relation)
// leaves each bucket in (source, operation) order, which is what the in
// side sorts by after them. With more than maxBuckets buckets (many
// relations) it sorts as sortSide does.
func (b *Bulk) inFromOut(p *bulkPlan, out []bulkEdgeRef, maxBuckets int) []bulkEdgeRef {
	// Relation ranks in id order, so that buckets order by relation.
	dense, nrel := relRanks(out)
	buckets := len(p.ids) * nrel
	if nrel == 0 || buckets > maxBuckets {
		return b.sortSide(p, false)
	}
	next := make([]uint32, buckets+1) // counts, then each bucket's next position
	for i := range out {
		next[int(out[i].b)*nrel+int(dense[out[i].rel])]++ // bucket + 1
	}
	for i := 1; i <= buckets; i++ {
		next[i] += next[i-1]
	}
	in := make([]bulkEdgeRef, len(out))
	for i := range out {
		r := &out[i]
		k := int(r.b)*nrel + int(dense[r.rel]) - 1
		in[next[k]] = bulkEdgeRef{a: r.b, b: r.a, rel: r.rel, idx: r.idx, w: r.w}
		next[k]++
	}
	return in
}

// sortSide is the edge operations ordered by (a, rel, b, operation), where
// a is the source's rank on the out side and the destination's on the in
// side (sortSideRange over every rank).
func (b *Bulk) sortSide(p *bulkPlan, out bool) []bulkEdgeRef {
	return b.sortSideRange(p, out, b.sideCounts(p, out), 0, len(p.ids), nil)
}

// sideCounts is the number of edge operations of each rank (of a: the
// source's rank on the out side, the destination's on the in side).
func (b *Bulk) sideCounts(p *bulkPlan, out bool) []uint32 {
	counts := make([]uint32, len(p.ids))
	for j := range b.edges.len() {
		b.evictEdgesEvery(j)
		e := b.edges.at(j)
		a := e.dst
		if out {
			a = e.src
		}
		counts[p.rank[a]]++
	}
	return counts
}

// sortSideRange is the edge operations whose a has a rank in [lo, hi),
// ordered by (a, rel, b, operation), in refs' memory when it is large
// enough: a counting sort by a (ranks are dense), which keeps operation
// order, then each node's run sorted by the rest. counts is sideCounts.
func (b *Bulk) sortSideRange(p *bulkPlan, out bool, counts []uint32, lo, hi int, refs []bulkEdgeRef) []bulkEdgeRef {
	starts := make([]uint32, hi-lo+1)
	for i := lo; i < hi; i++ {
		starts[i-lo+1] = starts[i-lo] + counts[i]
	}
	n := int(starts[hi-lo])
	if cap(refs) < n {
		refs = make([]bulkEdgeRef, n)
	}
	refs = refs[:n]
	next := slices.Clone(starts[:hi-lo])
	ulo, uhi := uint32(lo), uint32(hi)
	for j := range b.edges.len() {
		b.evictEdgesEvery(j)
		e := b.edges.at(j)
		ka, kc := e.dst, e.src
		if out {
			ka, kc = kc, ka
		}
		a := p.rank[ka] // a random read: the other end's only when in range
		if a < ulo || a >= uhi {
			continue
		}
		refs[next[a-ulo]] = bulkEdgeRef{a: a, b: p.rank[kc], rel: e.rel(), idx: uint32(j), w: b.edgeWeight(e)}
		next[a-ulo]++
	}
	for i := range hi - lo {
		if run := refs[starts[i]:starts[i+1]]; len(run) > 1 {
			slices.SortFunc(run, cmpEdgeRefTail)
		}
	}
	return refs
}

// eachSidePart calls fn with one side's order (sortSide), a range of
// ranks at a time: each range holds at most sidePartEdges edge operations
// (or one rank's, when that rank alone has more), so that a load holds
// 20 bytes for each of at most that many edges, not for every edge, at
// the cost of a pass over the edge operations per range. last: the
// range is the side's last. fn's refs are reused for the next range.
func (b *Bulk) eachSidePart(p *bulkPlan, out bool, fn func(refs []bulkEdgeRef, last bool) error) error {
	if len(p.ids) == 0 {
		return fn(nil, true)
	}
	counts := b.sideCounts(p, out)
	limit := cmp.Or(b.sidePart, sidePartEdges)
	var refs []bulkEdgeRef
	for lo := 0; lo < len(p.ids); {
		hi, n := lo+1, int(counts[lo])
		for hi < len(p.ids) && n+int(counts[hi]) <= limit {
			n += int(counts[hi])
			hi++
		}
		refs = b.sortSideRange(p, out, counts, lo, hi, refs)
		if err := fn(refs, hi == len(p.ids)); err != nil {
			return err
		}
		lo = hi
	}
	return nil
}

// sidePartEdges is how many edge operations eachSidePart sorts at a time:
// 80 MiB of bulkEdgeRef.
const sidePartEdges = 1 << 22

// finalNodePuts applies supersedeNode's rule per key in operation order: a
// put that leaves the live record as it is changes nothing; the last
// change stays.
func (b *Bulk) finalNodePuts(p *bulkPlan) {
	type nodeRef struct{ rank, idx uint32 }
	nrefs := make([]nodeRef, b.nodes.len())
	for i := range b.nodes.len() {
		b.evictEvery(i)
		nrefs[i] = nodeRef{p.rank[b.nodes.at(i).key], uint32(i)}
	}
	slices.SortFunc(nrefs, func(x, y nodeRef) int {
		if c := cmp.Compare(x.rank, y.rank); c != 0 {
			return c
		}
		return cmp.Compare(x.idx, y.idx)
	})
	p.finalNodes = make([]uint32, 0, len(nrefs))
	for i := 0; i < len(nrefs); {
		j := i
		cur := nrefs[i].idx
		p.nodeChg.set(cur)
		for j++; j < len(nrefs) && nrefs[j].rank == nrefs[i].rank; j++ {
			n, c := b.nodes.load(int(nrefs[j].idx)), b.nodes.load(int(cur)) // in key order: read, not mapped
			if n.typ == c.typ && bytes.Equal(b.nodePayload(&n), b.nodePayload(&c)) {
				continue
			}
			cur = nrefs[j].idx
			p.nodeChg.set(cur)
		}
		p.finalNodes = append(p.finalNodes, cur)
		i = j
	}
}

// appendIDs appends the ids entries, in id order.
func (b *Bulk) appendIDs(tx *WriteTxn, p *bulkPlan) error {
	var k8 [8]byte
	val := make([]byte, 0, 256)
	var buf []byte // keyArena.read's
	for r, id := range p.ids {
		binary.BigEndian.PutUint64(k8[:], uint64(id))
		key := b.keys.keys.read(p.keys[r], &buf) // in id order: read, not mapped
		val = sealValue(append(append(val[:0], fmtPlain), key...))
		if err := tx.txn.Put(b.s.db.ids, k8[:], val, lmdb.Append); err != nil {
			return err
		}
	}
	return nil
}

// appendNodes appends the n records, in id order. The values (compressed
// when large) are encoded on every core a batch at a time
// (valueBatch puts), the next batch while this one is appended: the
// load holds two batches of encoded values, not one per node, beside
// LMDB's dirty pages (which hold every value until the commit).
func (b *Bulk) appendNodes(tx *WriteTxn, p *bulkPlan) error {
	batches := make(chan []valueSlab, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(batches)
		for lo := 0; lo < len(p.finalNodes); lo += b.valueBatch {
			select {
			case batches <- b.nodeValues(tx, p, p.finalNodes[lo:min(lo+b.valueBatch, len(p.finalNodes))]):
			case <-stop:
				return
			}
		}
	}()
	var k8 [8]byte
	for parts := range batches {
		for _, part := range parts {
			for j := range part.ends {
				binary.BigEndian.PutUint64(k8[:], uint64(part.ids[j]))
				if err := tx.txn.Put(b.s.db.n, k8[:], part.value(j), lmdb.Append); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// evictEvery takes the spilled payloads and operations out of the
// process's memory (evictPayloads) at every evictOps-th operation (or
// node) i of a pass that reads them.
func (b *Bulk) evictEvery(i int) {
	if i%cmp.Or(b.evictN, evictOps) == 0 && i > 0 {
		b.evictPayloads()
	}
}

// evictPayloads takes both arenas' spilled payloads, and the spilled edge
// operations, out of the process's memory (payArena.evict, chunked.evict).
func (b *Bulk) evictPayloads() {
	if b.onEvict != nil {
		b.onEvict()
	}
	b.keys.keys.evict()
	b.keys.first.evict()
	b.nodePay.evict()
	b.edgePays.evict()
	b.edges.evict()
	b.nodes.evict()
	b.seq.evict()
}

// op is operation i: seq's element i.
func (b *Bulk) op(i int) uint32 { return *b.seq.at(i) }

// evictEdgesEvery takes the spilled edge operations out of the process's
// memory (chunked.evict) at every chunkLen-th edge j of a pass over them.
func (b *Bulk) evictEdgesEvery(j int) {
	if j%chunkLen == 0 && j > 0 {
		b.edges.evict()
	}
}

// opsResident is how many chunks (65,536 elements each) of its edges,
// nodes and operation order a load keeps in memory before it spills the
// others (chunked.spillTo): a million operations, 44 MiB.
const opsResident = 16

// evictOps is how many operations a pass over the payloads in operation
// order (the order they were added in, and are in the arenas) reads
// between evictions: some 10 MB of payloads.
const evictOps = 1 << 15

// nodeValueBatch is the number of node values appendNodes encodes at a
// time: a few MB, enough for every core to take a share.
const nodeValueBatch = 16384

// finalEdgePuts applies supersedeEdge's rule per (src, rel, dst), as
// finalNodePuts does per node, to outRefs: the out side's order, or a
// range of it that holds every operation of its sources (eachSidePart).
func (b *Bulk) finalEdgePuts(p *bulkPlan, outRefs []bulkEdgeRef) {
	for i := 0; i < len(outRefs); {
		j := i
		cur := outRefs[i].idx
		p.edgeChg.set(cur)
		for j++; j < len(outRefs) && outRefs[j].a == outRefs[i].a && outRefs[j].rel == outRefs[i].rel && outRefs[j].b == outRefs[i].b; j++ {
			e, c := b.edges.load(int(outRefs[j].idx)), b.edges.load(int(cur)) // in key order: read, not mapped
			if b.edgeWeight(&e) == b.edgeWeight(&c) && bytes.Equal(b.edgePayload(&e), b.edgePayload(&c)) {
				continue
			}
			cur = outRefs[j].idx
			p.edgeChg.set(cur)
		}
		p.finalEdges.set(cur)
		i = j
	}
}

// bulkChunk is one encoded adjacency chunk: its key and value.
type bulkChunk struct{ k, v []byte }

// encodeChunks packs the final edges of refs (one side, in key order) into
// adjacency chunks as Compact does, sent to out in batches.
func (b *Bulk) encodeChunks(tx *WriteTxn, p *bulkPlan, refs []bulkEdgeRef, out chan<- []bulkChunk) {
	defer close(out)
	var entries []adjacency.Entry
	batch := make([]bulkChunk, 0, 1024)
	var slab []byte
	for i := 0; i < len(refs); {
		node := refs[i].a
		entries = entries[:0]
		for ; i < len(refs) && refs[i].a == node; i++ {
			if !p.finalEdges.has(refs[i].idx) {
				continue
			}
			entries = append(entries, adjacency.Entry{Rel: uint32(refs[i].rel), Peer: uint64(p.ids[refs[i].b]), Rev: uint64(tx.rev), Weight: refs[i].w})
		}
		for _, part := range splitChunks(entries, b.s.chunkMax) {
			// The key and value are encoded into slab, which holds the
			// batch's chunks back to back (one allocation per many
			// chunks, none in Encode): a new one when this chunk might
			// not fit, as the batch sent keeps using the old.
			if need := adjKeyLen + maxChunkBytes(len(part)); cap(slab)-len(slab) < need {
				slab = make([]byte, 0, max(chunkSlabBytes, need))
			}
			start := len(slab)
			slab = append(slab, adjKey(p.ids[node], RelID(part[0].Rel), NodeID(part[0].Peer))...) // inlined: the key is not allocated
			slab = adjacency.Encode(slab, part)
			batch = append(batch, bulkChunk{slab[start : start+adjKeyLen : start+adjKeyLen], slab[start+adjKeyLen : len(slab) : len(slab)]})
		}
		if len(batch) >= 1024 {
			out <- batch
			batch = make([]bulkChunk, 0, 1024)
		}
	}
	if len(batch) > 0 {
		out <- batch
	}
}

// adjKeyLen is the length of an adjacency chunk's key (adjKey).
const adjKeyLen = 20

// maxChunkBytes bounds adjacency.Encode's output for n entries: version,
// count, per entry a relation delta, peer and revision (uvarints), flags
// and a weight, then the checksum.
func maxChunkBytes(n int) int {
	return 1 + binary.MaxVarintLen64 + n*(binary.MaxVarintLen32+2*binary.MaxVarintLen64+1+4) + 4
}

// chunkSlabBytes is the size of the buffers encodeChunks encodes into.
const chunkSlabBytes = 256 << 10

// appendEdges appends the e records that are not implicit (edgerec.go),
// unless appendEdgeRecords did, then the out side's adjacency chunks,
// encoded on another goroutine, while the in side's order is made from the
// out side's (inFromOut), then the in side's chunks. Each side's order is
// dropped once written: the in side's is made from the out side's, so
// both are held only while the out side's chunks are written. With inLate
// (a load whose edge operations spill) neither is held whole: each side is
// sorted from the edge operations and written a range of keys at a time
// (appendSideParts).
func (b *Bulk) appendEdges(tx *WriteTxn, p *bulkPlan) error {
	if p.inLate {
		return b.appendSideParts(tx, p)
	}
	outCh := make(chan []bulkChunk, 64)
	go b.encodeChunks(tx, p, p.outRefs, outCh)
	if !p.edgeRecs {
		if err := b.appendEdgeRecords(tx, p, p.outRefs, b.mayHaveRecord(tx, p)); err != nil {
			drainChunks(outCh)
			return err
		}
	}
	inDone := make(chan struct{})
	go func() {
		defer close(inDone)
		if p.inRefs == nil {
			p.inRefs = b.inFromOut(p, p.outRefs, maxInBuckets(len(p.outRefs)))
		}
	}()
	err := b.putChunks(tx, b.s.db.out, outCh)
	drainChunks(outCh)
	<-inDone
	p.outRefs = nil
	if err != nil {
		return err
	}
	inCh := make(chan []bulkChunk, 64)
	go b.encodeChunks(tx, p, p.inRefs, inCh)
	err = b.putChunks(tx, b.s.db.in, inCh)
	drainChunks(inCh)
	p.inRefs = nil
	return err
}

// appendSideParts is appendEdges for a load whose edge operations spill:
// the out side's order a range of keys at a time (eachSidePart), each
// range's e records appended while its chunks are encoded on another
// goroutine, then the in side's the same way. With releaseLate the edge
// operations go once the in side's last range is sorted.
func (b *Bulk) appendSideParts(tx *WriteTxn, p *bulkPlan) error {
	var maybe bitSet
	if !p.edgeRecs {
		maybe = b.mayHaveRecord(tx, p)
	}
	err := b.eachSidePart(p, true, func(refs []bulkEdgeRef, _ bool) error {
		ch := make(chan []bulkChunk, 64)
		go b.encodeChunks(tx, p, refs, ch)
		defer drainChunks(ch)
		if maybe != nil {
			if err := b.appendEdgeRecords(tx, p, refs, maybe); err != nil {
				return err
			}
		}
		return b.putChunks(tx, b.s.db.out, ch)
	})
	if err != nil {
		return err
	}
	p.edgeRecs = true
	runtime.GC() // the out side's last range goes before the in side's are sorted
	return b.eachSidePart(p, false, func(refs []bulkEdgeRef, last bool) error {
		if last && p.releaseLate {
			b.releaseEdges(p)
		}
		ch := make(chan []bulkChunk, 64)
		go b.encodeChunks(tx, p, refs, ch)
		defer drainChunks(ch)
		return b.putChunks(tx, b.s.db.in, ch)
	})
}

// drainChunks receives what is left on ch until it is closed (the
// encoding goroutine then ends).
func drainChunks(ch <-chan []bulkChunk) {
	for range ch {
	}
}

// putChunks appends the chunks received on ch to dbi until ch is closed
// or a put fails.
func (b *Bulk) putChunks(tx *WriteTxn, dbi lmdb.DBI, ch <-chan []bulkChunk) error {
	for batch := range ch {
		for _, x := range batch {
			if err := tx.txn.Put(dbi, x.k, x.v, lmdb.Append); err != nil {
				return tx.fail(err)
			}
		}
	}
	return nil
}

// appendEdgeRecords appends the e records of the final edge puts of
// outRefs (the out side's order, or a range of it) that are not implicit
// (edgerec.go), in out-side key order; maybe is mayHaveRecord. The edges
// it reads (those maybe holds) are read first in operation order, so that
// each page of spilled operations is mapped back once per call rather
// than once per key that names it (the out side's order visits them at
// random): 28 bytes for each such edge of outRefs while it runs.
func (b *Bulk) appendEdgeRecords(tx *WriteTxn, p *bulkPlan, outRefs []bulkEdgeRef, maybe bitSet) error {
	p.edgeRecs = true
	type pick struct{ idx, k uint32 } // an edge, and its place among the picked in key order
	var picks []pick
	var at []uint32 // by place: its position in outRefs
	for i, r := range outRefs {
		if p.finalEdges.has(r.idx) && maybe.has(r.idx) {
			picks = append(picks, pick{r.idx, uint32(len(at))})
			at = append(at, uint32(i))
		}
	}
	slices.SortFunc(picks, func(x, y pick) int { return cmp.Compare(x.idx, y.idx) })
	type edgeFields struct {
		prov, pay uint32
		w         float32
		explicit  bool
	}
	fields := make([]edgeFields, len(picks))
	for n, pk := range picks {
		b.evictEdgesEvery(n)
		e := b.edges.at(int(pk.idx))
		fields[pk.k] = edgeFields{prov: b.edgeProv(e), pay: b.edgePayIndex(e), w: b.edgeWeight(e), explicit: e.explicit()}
	}
	picks = nil
	s := b.s
	var k20 [20]byte
	val := make([]byte, 0, 256)
	var body []byte // appendRecord's scratch
	var pay []byte  // payArena.read's
	enc, _ := s.zstd()
	for k, f := range fields {
		r := &outRefs[at[k]]
		pv := b.provs[f.prov]
		rec := edgeRec{rev: tx.rev, createdRev: tx.rev, createdTS: tx.ts, updatedTS: tx.ts,
			weight: f.w, scope: pv.scope, run: pv.run, task: pv.task}
		if f.pay != 0 {
			rec.payload = b.edgePays.read(b.edgePay[f.pay], &pay) // in key order: read, not mapped (payArena.read)
		}
		if f.explicit {
			rec.flags |= recWeight
		}
		if tx.implicitEdge(&rec) {
			continue
		}
		binary.BigEndian.PutUint64(k20[:], uint64(p.ids[r.a]))
		binary.BigEndian.PutUint32(k20[8:], uint32(r.rel))
		binary.BigEndian.PutUint64(k20[12:], uint64(p.ids[r.b]))
		val = appendRecord(val[:0], &body, rec.appendBody, enc)
		if err := tx.txn.Put(s.db.e, k20[:], val, lmdb.Append); err != nil {
			return tx.fail(err)
		}
	}
	return nil
}

// mayHaveRecord is a bit per edge operation, set for those that are final
// and may not be implicit (edgerec.go): an explicit weight, a provenance
// other than provs[0] or a payload, or provs[0] other than the
// transaction's. It is made in one pass in operation order, so that the
// pass in key order (appendEdgeRecords) reads only those edges (few, for
// an ingest or an import) rather than every edge, in an order that maps
// back the spilled chunks' pages at random.
func (b *Bulk) mayHaveRecord(tx *WriteTxn, p *bulkPlan) bitSet {
	n := b.edges.len()
	maybe := newBitSet(n)
	var first provenance
	if len(b.provs) > 0 {
		first = b.provs[0]
	}
	anyProv := first != provenance{scope: tx.meta.Scope, run: tx.meta.RunID, task: tx.meta.TaskID}
	for j := range n {
		b.evictEdgesEvery(j)
		if !p.finalEdges.has(uint32(j)) {
			continue
		}
		if e := b.edges.at(j); anyProv || e.relf&(edgeExplicit|edgeExtra) != 0 {
			maybe.set(uint32(j))
		}
	}
	return maybe
}

// releaseEdges lets the collector take the edge operations and their
// payloads once the e records are written and the log record sealed: the
// adjacency lists need only the sides' orders (bulkEdgeRef holds the
// weight) and finalEdges. For a load that reserved its map (as shed), and
// like a shed load it cannot run again (errShed).
func (b *Bulk) releaseEdges(p *bulkPlan) {
	b.edges.release()
	b.edgeExtras = chunked[bulkEdgeExtra]{}
	b.edgePay = nil
	b.edgePays.drop()
	b.shedDone = true
	runtime.GC() // as shed: a memory limit that follows the live heap can give it back
}

// valueSlab holds many encoded values back to back: value i is
// data[ends[i-1]:ends[i]], the value of node ids[i].
type valueSlab struct {
	data []byte
	ends []int
	ids  []NodeID
}

func (v *valueSlab) value(i int) []byte {
	start := 0
	if i > 0 {
		start = v.ends[i-1]
	}
	return v.data[start:v.ends[i]]
}

// nodeValues encodes the n value of the final node puts final, in order,
// on every core (appendRecord: the bytes ordinary writes produce): the
// concatenation of the returned parts' values is one value per put. The
// puts are read in id order, not the order they were added in: with
// pread where they spill (chunked.load), so that the pass does not map
// the whole spill file into the process (std×40: 86 MB).
func (b *Bulk) nodeValues(tx *WriteTxn, p *bulkPlan, final []uint32) []valueSlab {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(final)/1024))
	enc, _ := b.s.zstd()
	parts := make([]valueSlab, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var body []byte
			part := &parts[w]
			lo, hi := w*len(final)/workers, (w+1)*len(final)/workers
			part.ends = make([]int, 0, hi-lo)
			part.ids = make([]NodeID, 0, hi-lo)
			var pay []byte // payArena.read's buffer
			for _, idx := range final[lo:hi] {
				n := b.nodes.load(int(idx))
				part.ids = append(part.ids, p.ids[p.rank[n.key]])
				pv := b.provs[n.prov]
				rec := nodeRec{rev: tx.rev, createdRev: tx.rev, createdTS: tx.ts, updatedTS: tx.ts,
					typ: b.typeNames[n.typ], scope: pv.scope, run: pv.run, task: pv.task}
				rec.payload = b.nodePay.read(n.pay, &pay)
				part.data = appendRecord(part.data, &body, rec.appendBody, enc)
				part.ends = append(part.ends, len(part.data))
			}
		}()
	}
	wg.Wait()
	return parts
}

// supersedeCycle refuses a load whose supersedes edges close a cycle, as
// WriteTxn.PutEdge does edge by edge (SPEC.md §4): the fast path never
// runs that check, and the ordinary path would refuse the same load.
func (b *Bulk) supersedeCycle() error {
	rel, ok := b.rels[relSupersedes]
	if !ok {
		return nil
	}
	next := map[string][]string{}
	for i := range b.edges.len() {
		b.evictEdgesEvery(i)
		if e := b.edges.at(i); e.rel() == rel.ID {
			src, dst := b.keys.at(e.src), b.keys.at(e.dst)
			next[src] = append(next[src], dst)
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var visit func(k string) error
	visit = func(k string) error {
		state[k] = onPath
		for _, d := range next[k] {
			switch state[d] {
			case onPath:
				return fmt.Errorf("%w: %s already supersedes %s (directly or through a chain): supersedes edges may not form a cycle", ErrInvalid, d, k)
			case unseen:
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		state[k] = done
		return nil
	}
	keys := make([]string, 0, len(next))
	for k := range next {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if state[k] == unseen {
			if err := visit(k); err != nil {
				return err
			}
		}
	}
	return nil
}
