package lmdbstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/adjacency"
)

// bulkOp is one operation of a random bulk workload.
type bulkOp struct {
	node *NodePut
	edge *EdgePut
}

// randomBulkOps draws puts of nodes and edges over a small key space, so
// keys repeat: the same put again (no change), another payload or weight
// (a change), explicit and default weights, provenance set or inherited.
func randomBulkOps(rng *rand.Rand, n int) []bulkOp {
	rels := []string{"calls", "imports", "defines", "tests", "heavy"}
	payloads := []json.RawMessage{nil, json.RawMessage(`{"b": 1, "a": [1, 2]}`), json.RawMessage(`{"line":12}`), json.RawMessage(`null`)}
	// Some keys hold the fake secret, and two keys as given redact to one.
	key := func() string {
		return fmt.Sprint([]string{"sym:", "file:", "x", "sym:hunter2-", "sym:[REDACTED:test]-"}[rng.IntN(5)], rng.IntN(40))
	}
	var ops []bulkOp
	for range n {
		if rng.IntN(4) == 0 {
			p := NodePut{Key: key(), Payload: payloads[rng.IntN(len(payloads))]}
			if rng.IntN(3) == 0 {
				p.Type = "T"
			}
			if rng.IntN(5) == 0 {
				p.RunID = "r2"
			}
			ops = append(ops, bulkOp{node: &p})
			continue
		}
		p := EdgePut{Src: key(), Rel: rels[rng.IntN(len(rels))], Dst: key(), Payload: payloads[rng.IntN(len(payloads))]}
		switch rng.IntN(3) {
		case 0:
			p.Weight = 0.5
		case 1:
			p.Weight = 1
		}
		if rng.IntN(5) == 0 {
			p.Scope, p.TaskID = "other", "t9"
		}
		ops = append(ops, bulkOp{edge: &p})
	}
	return ops
}

// dumpAll is every keyspace's keys and values.
func dumpAll(t *testing.T, s *Store) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	if err := s.view(func(txn *lmdb.Txn) error {
		return s.db.each(func(ks *keyspace, dbi *lmdb.DBI) error {
			name := ks.name
			cur, err := txn.OpenCursor(*dbi)
			if err != nil {
				return err
			}
			defer cur.Close()
			for k, v, err := cur.Get(nil, nil, lmdb.First); err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
				out[name] = append(out[name], fmt.Sprintf("%x=%x", k, v))
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// adjEntries is every adjacency entry of one side, with its node, whatever
// the chunking.
func adjEntries(t *testing.T, s *Store, out bool) []string {
	t.Helper()
	dbi := s.db.in
	if out {
		dbi = s.db.out
	}
	var es []string
	if err := s.view(func(txn *lmdb.Txn) error {
		cur, err := txn.OpenCursor(dbi)
		if err != nil {
			return err
		}
		defer cur.Close()
		for k, v, err := cur.Get(nil, nil, lmdb.First); err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
			entries, err := adjacency.Decode(v, nil)
			if err != nil {
				return err
			}
			for _, e := range entries {
				es = append(es, fmt.Sprintf("%x %+v", k[:8], e))
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return es
}

// TestBulkMatchesUpdate: the same operations committed by Bulk (fast path
// into an empty store, replay into a non-empty one) and by one Update give
// byte-identical keyspaces, except that adjacency lists may be chunked
// differently (their entries are identical), and Check holds.
func TestBulkMatchesUpdate(t *testing.T) {
	for seed := range uint64(9) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			n := 200 + int(seed)*150
			if seed == 8 {
				n = 9000 // the fast path's log encoded on several cores (4,096 operations each at least)
			}
			ops := randomBulkOps(rng, n)
			prefill := seed%4 == 3 // a store with an edge already: the replay path
			// The relation registered in the load's own revision (Bulk.AddRelation).
			sameRev := seed%3 == 0
			heavy := Relation{Name: "heavy", DefaultWeight: 2}
			opts := Options{}
			if seed%2 == 0 {
				opts.Redactor = fakeRedactor{}
			}
			ordinary, bulk := newStore(t, opts), newStore(t, opts)
			for _, s := range []*Store{ordinary, bulk} {
				if seed%3 != 1 {
					// Log records over 1,000 bytes compressed as a stream:
					// the load's encoded a few operations at a time.
					s.streamLog = 1000
				}
				if seed%2 == 1 {
					s.setChunkMaxForTest(4 + int(seed))
				}
				if !sameRev {
					mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
						_, err := tx.AddRelation(heavy)
						return err
					})
				}
				if prefill {
					putEdge(t, s, "sym:1", "calls", "sym:2")
				}
			}
			meta := WriteMeta{Scope: "repo", RunID: "r1"}
			c1 := mustUpdate(t, ordinary, meta, func(tx *WriteTxn) error {
				if sameRev {
					if _, err := tx.AddRelation(heavy); err != nil {
						return err
					}
				}
				return putOps(tx, ops)
			})
			b := bulk.NewBulk(meta)
			b.keyedWin = 1 + int(seed)*5
			if seed%3 == 1 {
				b.valueBatch = 1 + int(seed) // node values encoded and appended in many batches
			}
			if seed%2 == 0 {
				b.holdLog = 1 // the log record waited for before the node records
			}
			spill := seed%3 != 2
			if spill { // every payload block but the last in the spill file, blocks of 64 bytes
				for _, a := range []*payArena{&b.nodePay, &b.edgePays} {
					a.spillTo(bulk.path, 1)
					a.block = 64
				}
				b.evictN = 1 + int(seed)%3 // the spilled pages evicted every few operations as they are read
				for _, sp := range []*chunkSpill{b.edges.spill, b.nodes.spill, b.seq.spill} {
					sp.resident = 0 // every chunk of operations a mapping of a spill file
				}
				// Each side sorted and written a few keys at a time, ranges
				// of several keys and of one key over the limit among them.
				b.sidePart = 1 + int(seed)*3
				// Every key in a mapped block of a page (the keys are
				// short), evicted as the operations above are.
				b.keys.keys.spill.s.resident = 0
				b.keys.keys.blockBytes = int(pageSize)
				// The keys' references and first uses in mappings too.
				b.keys.keys.spill.refs.resident, b.keys.first.spill.resident = 0, 0
				b.keys.idx.memKeys = 1 + int(seed)%7 // the index's keys in the file past a few
			}
			relIDs := map[string]RelID{}
			if sameRev {
				id, err := b.AddRelation(heavy)
				if err != nil {
					t.Fatal(err)
				}
				relIDs[heavy.Name] = id
			}
			if err := bulk.View(func(r *ReadTxn) error {
				rels, err := r.Relations()
				for _, rel := range rels {
					relIDs[rel.Name] = rel.ID
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			// A run of edges from one source by reference and relation id
			// (PutEdgeRefs), added before any other operation.
			var run struct {
				src     KeyRef
				rels    []RelID
				dsts    []KeyRef
				weights []float32
			}
			flush := func() {
				if len(run.dsts) == 0 {
					return
				}
				if err := b.PutEdgeRefs(run.src, run.rels, run.dsts, run.weights); err != nil {
					t.Fatal(err)
				}
				run.rels, run.dsts, run.weights = nil, nil, nil
			}
			// A key registered and never named is not stored.
			if _, err := b.Key("sym:registered-only"); err != nil {
				t.Fatal(err)
			}
			view := b.KeyView()
			other := ordinary.NewBulk(meta)
			for i := range 40 { // other references for the same keys
				if _, err := other.Keys([]string{fmt.Sprint("sym:", 39-i), fmt.Sprint("x", i), fmt.Sprint("file:", i)}); err != nil {
					t.Fatal(err)
				}
			}
			foreign := other.KeyView()
			for _, op := range ops {
				var err error
				byRef := op.edge != nil && len(op.edge.Payload) == 0 && op.edge.Scope == "" && op.edge.RunID == "" && op.edge.TaskID == ""
				if byRef && rng.IntN(3) == 0 {
					e := op.edge
					var refs []KeyRef
					if refs, err = b.Keys([]string{e.Src, e.Dst}); err != nil {
						t.Fatal(err)
					}
					if len(run.dsts) > 0 && run.src != refs[0] {
						flush()
					}
					run.src = refs[0]
					run.rels, run.dsts, run.weights = append(run.rels, relIDs[e.Rel]), append(run.dsts, refs[1]), append(run.weights, e.Weight)
					continue
				}
				flush()
				switch e := op.edge; {
				case rng.IntN(3) == 0:
					// Keys prepared against a view of this load (taken
					// now or earlier: keys it lacks are redacted), or of
					// another load whose references differ (ignored).
					if rng.IntN(4) == 0 {
						view = b.KeyView()
					}
					v := view
					if rng.IntN(5) == 0 {
						v = foreign
					}
					prepare := v.Prepare // found or redacted
					if rng.IntN(2) == 0 {
						prepare = v.Find // found or left to the load
					}
					if op.node != nil {
						k := prepare(op.node.Key)
						switch rng.IntN(3) {
						case 0: // by reference (what import does)
							var ref KeyRef
							if ref, err = b.Key(op.node.Key); err != nil {
								t.Fatal(err)
							}
							k = b.Prepared(ref, op.node.Key)
						case 1: // a reference out of range: not prepared
							k = b.Prepared(KeyRef(1<<30), op.node.Key)
						}
						err = b.PutNodePrepared(*op.node, k)
					} else {
						err = b.PutEdgePrepared(*e, prepare(e.Src), prepare(e.Dst))
					}
				case op.node != nil:
					err = b.PutNode(*op.node)
				case byRef && rng.IntN(2) == 0:
					// By reference (what import does).
					var src, dst KeyRef
					if rng.IntN(2) == 0 {
						var refs []KeyRef
						if refs, err = b.Keys([]string{e.Src, e.Dst}); err == nil {
							src, dst = refs[0], refs[1]
						}
					} else if src, err = b.Key(e.Src); err == nil {
						dst, err = b.Key(e.Dst)
					}
					if err == nil {
						err = b.PutEdgeRef(src, e.Rel, dst, e.Weight)
					}
				default:
					err = b.PutEdge(*op.edge)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			flush()
			if spilled := b.nodePay.spilled() + b.edgePays.spilled(); spill != (spilled > 0) {
				t.Errorf("%d bytes of payloads spilled, want spilling %v", spilled, spill)
			}
			if spill && !b.keys.keys.spills() {
				t.Fatal("no key in the spill file")
			}
			// A record waited for is written last: every other keyspace
			// holds its records by then (see putLate).
			var atLogPut map[string]uint64
			b.onLogPut = func(tx *WriteTxn) {
				atLogPut = map[string]uint64{}
				for name, dbi := range map[string]lmdb.DBI{"ids": bulk.db.ids, "n": bulk.db.n, "out": bulk.db.out, "in": bulk.db.in, "log": bulk.db.log} {
					st, err := tx.txn.Stat(dbi)
					if err != nil {
						t.Fatal(err)
					}
					atLogPut[name] = st.Entries
				}
			}
			c2, err := b.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if b.Appended == prefill {
				t.Errorf("fast path %v with a prefilled store %v", b.Appended, prefill)
			}
			// A fast-path load that waited for its log record released its
			// edge puts once its e records were written and its node puts
			// before its adjacency lists (shed): the store below is still
			// the ordinary path's.
			if want := b.Appended && b.holdLog == 1 && opts.Replicator == nil; b.shedDone != want {
				t.Errorf("shed %v, want %v (fast path %v, log waited for %v)", b.shedDone, want, b.Appended, b.holdLog == 1)
			}
			if released := b.edges.len() == 0 && b.nodes.len() == 0; b.shedDone && !released {
				t.Errorf("a shed load still holds %d edge puts and %d node puts", b.edges.len(), b.nodes.len())
			}
			// and it wrote its log record itself (logPut), after every
			// other keyspace, unless the record goes to a remote at the end.
			if want := b.Appended && b.holdLog == 1 && opts.Replicator == nil; b.logPut != want || (atLogPut != nil) != want {
				t.Errorf("log record written by putLate %v (hook ran %v), want %v", b.logPut, atLogPut != nil, want)
			}
			if atLogPut != nil {
				for name, dbi := range map[string]lmdb.DBI{"ids": bulk.db.ids, "n": bulk.db.n, "out": bulk.db.out, "in": bulk.db.in} {
					if final := dbEntries(t, bulk, dbi); atLogPut[name] != final {
						t.Errorf("%s held %d entries when the log record was written, %d at the end", name, atLogPut[name], final)
					}
				}
				if atLogPut["log"] != uint64(c2.Rev-1) {
					t.Errorf("log held %d records before the load's, want %d", atLogPut["log"], c2.Rev-1)
				}
			}
			if opts.Redactor != nil && c1.Redacted == 0 {
				t.Error("no key held the secret")
			}
			if c1 != c2 {
				t.Fatalf("commits differ: update %+v, bulk %+v", c1, c2)
			}
			sameAsUpdate(t, ordinary, bulk)
		})
	}
}

// putOps adds ops to a transaction or a bulk load, in order.
func putOps(w interface {
	PutNode(NodePut) error
	PutEdge(EdgePut) error
}, ops []bulkOp) error {
	for _, op := range ops {
		var err error
		if op.node != nil {
			err = w.PutNode(*op.node)
		} else {
			err = w.PutEdge(*op.edge)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sameAsUpdate compares a store a bulk load wrote with the one an Update
// wrote: every keyspace byte for byte but the adjacency lists, whose
// entries (not chunks) must be equal.
func sameAsUpdate(t *testing.T, ordinary, bulk *Store) {
	t.Helper()
	d1, d2 := dumpAll(t, ordinary), dumpAll(t, bulk)
	for _, name := range []string{dbMeta, dbNodes, dbEdges, dbKV, dbHist, dbIDs, dbRel, dbRelName, dbLog, dbTS} {
		if diff := cmp.Diff(d1[name], d2[name]); diff != "" {
			t.Errorf("%s keyspace differs (-update +bulk):\n%s", name, diff)
		}
	}
	for _, out := range []bool{true, false} {
		if diff := cmp.Diff(adjEntries(t, ordinary, out), adjEntries(t, bulk, out)); diff != "" {
			t.Errorf("adjacency out=%v differs (-update +bulk):\n%s", out, diff)
		}
	}
}

// TestBulkErrors: refusals name the operation, and nothing is written.
func TestBulkErrors(t *testing.T) {
	s := newStore(t, Options{})
	b := s.NewBulk(WriteMeta{})
	wantErr(t, b.PutEdge(EdgePut{Src: "a", Rel: "nope", Dst: "b"}), ErrUnknownRelation)
	wantErr(t, b.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "b", Weight: -1}), ErrInvalid)
	wantErr(t, b.PutNode(NodePut{}), ErrInvalid)
	_, err := b.Keys([]string{"a", ""})
	wantErr(t, err, ErrInvalid)
	_, err = b.Key(string([]byte{0xff}))
	wantErr(t, err, ErrInvalid)
	if b.Len() != 0 {
		t.Fatalf("refused operations were added: %d", b.Len())
	}
	if err := b.PutNode(NodePut{Key: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := b.PutNode(NodePut{Key: "b", Payload: json.RawMessage(`{"x":`)}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Commit()
	wantErr(t, err, ErrInvalid)
	var opErr *BulkOpError
	if !asBulkOpError(err, &opErr) || opErr.Op != 1 {
		t.Fatalf("error %v does not name operation 1", err)
	}
	// Commit dropped the key index; operations added after the failed
	// commit find their keys in it, built again: none registered twice.
	if b.keys.idx.len() != 0 || !b.keys.unindexed {
		t.Fatalf("index after Commit: %d keys held, dropped %v", b.keys.idx.len(), b.keys.unindexed)
	}
	if err := b.PutEdge(EdgePut{Src: "b", Rel: "calls", Dst: "a"}); err != nil {
		t.Fatal(err)
	}
	if i, ok := b.keys.lookup("b"); b.keys.len() != 2 || !ok || i != 1 || b.keys.idx.len() != 2 {
		t.Fatalf("after the failed commit: %d keys, b at %d (%v), index %d", b.keys.len(), i, ok, b.keys.idx.len())
	}
	if k := b.KeyView().Find("a"); !k.Found() || k.ref != 0 {
		t.Fatalf("view after the failed commit: a %+v", k)
	}
	// A collision, found at commit.
	s.setHashForTest(func(k string) NodeID { return 7 })
	b = s.NewBulk(WriteMeta{})
	_ = b.PutNode(NodePut{Key: "a"})
	_ = b.PutEdge(EdgePut{Src: "a", Rel: "calls", Dst: "c"})
	_, err = b.Commit()
	var coll *CollisionError
	if !asCollision(err, &coll) || !asBulkOpError(err, &opErr) || opErr.Op != 1 {
		t.Fatalf("collision: %v", err)
	}
	// Only c and d collide; d is first named by operation 3 (its Key
	// registration, earlier, is not a use), so that is the one refused.
	s.setHashForTest(func(k string) NodeID {
		if k == "c" || k == "d" {
			return 9
		}
		return IDOf(k)
	})
	b = s.NewBulk(WriteMeta{})
	dRef, err := b.Key("d")
	if err != nil {
		t.Fatal(err)
	}
	aRef, _ := b.Key("a")
	_ = b.PutNode(NodePut{Key: "a"})
	_ = b.PutEdgeRef(aRef, "calls", aRef, 0)
	_ = b.PutEdge(EdgePut{Src: "b", Rel: "calls", Dst: "c"})
	_ = b.PutEdgeRef(dRef, "calls", aRef, 0)
	_, err = b.Commit()
	if !asCollision(err, &coll) || !asBulkOpError(err, &opErr) || opErr.Op != 3 || coll.Key != "d" || coll.Existing != "c" {
		t.Fatalf("collision of c and d: %v", err)
	}
	s.setHashForTest(IDOf)
	// PutEdgeRefs refuses an edge by its position among the operations;
	// the edges of the run before it stay added.
	b = s.NewBulk(WriteMeta{})
	refs, err := b.Keys([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	var calls, supersedes Relation
	if err := s.View(func(r *ReadTxn) error {
		var err error
		if calls, err = r.RelationByName("calls"); err == nil {
			supersedes, err = r.RelationByName(relSupersedes)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_ = b.PutNode(NodePut{Key: "a"})
	for _, tc := range []struct {
		rels    []RelID
		dsts    []KeyRef
		weights []float32
		at      int // position of the refused edge in the run
		want    error
	}{
		{[]RelID{calls.ID, 999}, []KeyRef{refs[1], refs[1]}, []float32{0, 0}, 1, ErrNotFound},
		{[]RelID{calls.ID}, []KeyRef{refs[1]}, []float32{-2}, 0, ErrInvalid},
		{[]RelID{calls.ID, calls.ID}, []KeyRef{refs[0], KeyRef(7)}, []float32{0.5, 0}, 1, ErrInvalid},
		{[]RelID{calls.ID, supersedes.ID}, []KeyRef{refs[1], refs[0]}, []float32{0, 0}, 1, ErrInvalid},
	} {
		before := b.Len()
		err := b.PutEdgeRefs(refs[0], tc.rels, tc.dsts, tc.weights)
		wantErr(t, err, tc.want)
		if !asBulkOpError(err, &opErr) || opErr.Op != before+tc.at || b.Len() != before+tc.at {
			t.Errorf("%+v: error %v, %d operations added, want the edge at %d refused", tc, err, b.Len()-before, tc.at)
		}
	}
	wantErr(t, b.PutEdgeRefs(refs[0], []RelID{calls.ID}, nil, nil), ErrInvalid)
	wantErr(t, b.PutEdgeRefs(KeyRef(9), nil, nil, nil), ErrInvalid)
	err = s.View(func(r *ReadTxn) error {
		if r.Revision() != 0 {
			t.Errorf("a failed bulk load committed revision %d", r.Revision())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIDOfIsFNV1a: IDOf is hash/fnv's 64-bit FNV-1a (SPEC §1).
func TestIDOfIsFNV1a(t *testing.T) {
	for _, k := range []string{"", "a", "sym:pkg.Func", "file:é/ü.go", string(make([]byte, 300))} {
		h := fnv.New64a()
		h.Write([]byte(k))
		if got, want := IDOf(k), NodeID(h.Sum64()); got != want {
			t.Errorf("IDOf(%q) = %x, want %x", k, got, want)
		}
	}
}

func asBulkOpError(err error, target **BulkOpError) bool  { return errors.As(err, target) }
func asCollision(err error, target **CollisionError) bool { return errors.As(err, target) }

// TestBulkSupersedeRules: a bulk load refuses what the ordinary path
// refuses about supersedes (an item superseding itself, a cycle; SPEC §4),
// on the fast path into an empty store too, and writes nothing then; an
// acyclic chain loads and reads back as the ordinary path's.
func TestBulkSupersedeRules(t *testing.T) {
	s := newStore(t, Options{})
	b := s.NewBulk(WriteMeta{})
	wantErr(t, b.PutEdge(EdgePut{Src: "decision:a", Rel: "supersedes", Dst: "decision:a"}), ErrInvalid)
	for _, e := range [][2]string{{"decision:b", "decision:a"}, {"decision:c", "decision:b"}, {"decision:a", "decision:c"}} {
		if err := b.PutEdge(EdgePut{Src: e[0], Rel: "supersedes", Dst: e[1]}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := b.Commit()
	wantErr(t, err, ErrInvalid)
	// The ordinary path refuses the same load.
	_, uerr := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		for _, e := range [][2]string{{"decision:b", "decision:a"}, {"decision:c", "decision:b"}, {"decision:a", "decision:c"}} {
			if err := tx.PutEdge(EdgePut{Src: e[0], Rel: "supersedes", Dst: e[1]}); err != nil {
				return err
			}
		}
		return nil
	})
	wantErr(t, uerr, ErrInvalid)
	if err := s.View(func(r *ReadTxn) error {
		if rev := r.Revision(); rev != 0 {
			t.Fatalf("a refused load committed revision %d", rev)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A chain without a cycle loads; the oldest item reads as superseded
	// by the newest.
	b = s.NewBulk(WriteMeta{})
	for _, k := range []string{"decision:a", "decision:b", "decision:c"} {
		if err := b.PutNode(NodePut{Key: k}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range [][2]string{{"decision:b", "decision:a"}, {"decision:c", "decision:b"}} {
		if err := b.PutEdge(EdgePut{Src: e[0], Rel: "supersedes", Dst: e[1]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if !b.Appended {
		t.Fatal("the load into an empty store did not take the fast path")
	}
	err = s.View(func(r *ReadTxn) error {
		st, err := r.Status("decision:a", At{}, time.Now())
		if err != nil {
			return err
		}
		if st.Newest != "decision:c" {
			t.Errorf("decision:a newest %q, want decision:c", st.Newest)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestInFromOutIsInSort: the in side's order made from the out side's
// (inFromOut, by counting) is the order sortSide sorts the in side into,
// on random loads with repeated edges and several relations, and so is
// its fallback (too many buckets).
func TestInFromOutIsInSort(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 5))
		s := newStore(t, Options{})
		b := s.NewBulk(WriteMeta{})
		for _, op := range randomBulkOps(rng, 500+int(seed)*400) {
			var err error
			if op.node != nil {
				err = b.PutNode(*op.node)
			} else if op.edge.Rel != "heavy" {
				err = b.PutEdge(*op.edge)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		p, err := b.plan()
		if err != nil {
			t.Fatal(err)
		}
		out, want := b.sortSide(p, true), b.sortSide(p, false)
		for _, maxBuckets := range []int{maxInBuckets(len(out)), 0} {
			if d := cmp.Diff(want, b.inFromOut(p, out, maxBuckets), cmp.AllowUnexported(bulkEdgeRef{})); d != "" {
				t.Fatalf("seed %d, max %d buckets: in side differs (-sortSide +inFromOut):\n%s", seed, maxBuckets, d)
			}
		}
	}
}

// TestBulkShed: a load that shed its node puts is never run again (a full
// map would otherwise re-run it without them): it fails with ErrMapFull and
// writes nothing. A store whose MaxMapSize cannot hold the map a load
// reserves keeps every put (no shedding) and commits as before.
func TestBulkShed(t *testing.T) {
	load := func(s *Store) *Bulk {
		b := s.NewBulk(WriteMeta{})
		b.holdLog = 1
		for i := range 50 {
			if err := b.PutNode(NodePut{Key: fmt.Sprint("sym:", i), Type: "function", Payload: json.RawMessage(`{"a":1}`)}); err != nil {
				t.Fatal(err)
			}
			if err := b.PutEdge(EdgePut{Src: fmt.Sprint("sym:", i), Rel: "calls", Dst: fmt.Sprint("sym:", (i+1)%50)}); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	s := newStore(t, Options{})
	b := load(s)
	b.shedDone = true // as after a first attempt that shed
	if _, err := b.Commit(); !errors.Is(err, ErrMapFull) {
		t.Fatalf("a shed load run again: %v, want ErrMapFull", err)
	}
	var rev Revision
	if err := s.View(func(r *ReadTxn) error { rev = r.Revision(); return nil }); err != nil {
		t.Fatal(err)
	}
	if rev != 0 {
		t.Fatalf("revision %d after the refused run, want 0", rev)
	}
	// Too small a MaxMapSize for the reservation: no shedding, committed.
	small := newStore(t, Options{MapSize: 1 << 20, MaxMapSize: 32 << 20})
	b = load(small)
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if b.shedDone || !b.Appended {
		t.Fatalf("shed %v, fast path %v; want no shedding on the fast path", b.shedDone, b.Appended)
	}
}

// TestBulkInSortedBeforeRelease: a load with too many (node, relation)
// buckets for inFromOut sorts its in side before it releases its edge puts
// (appendEdgeRecords, releaseEdges), and still writes the ordinary path's
// store.
func TestBulkInSortedBeforeRelease(t *testing.T) {
	const nodes, edges = 40000, 300
	rels := []string{"calls", "imports", "defines"}
	p := &bulkPlan{keyRanks: &keyRanks{ids: make([]NodeID, nodes)}}
	if inFromOutFits(p, len(rels), edges) {
		t.Fatalf("%d nodes and %d relations fit inFromOut's buckets: the test does not reach the sort", nodes, len(rels))
	}
	put := func(node func(NodePut) error, edge func(EdgePut) error) error {
		for i := range nodes {
			if err := node(NodePut{Key: fmt.Sprint("sym:", i), Type: "function"}); err != nil {
				return err
			}
		}
		for i := range edges {
			w := float32(0)
			if i%7 == 0 {
				w = 0.25 // explicit: an e record
			}
			if err := edge(EdgePut{Src: fmt.Sprint("sym:", i*131%nodes), Rel: rels[i%len(rels)], Dst: fmt.Sprint("sym:", i*977%nodes), Weight: w}); err != nil {
				return err
			}
		}
		return nil
	}
	meta := WriteMeta{Scope: "repo"}
	ordinary, bulk := newStore(t, Options{}), newStore(t, Options{})
	c1 := mustUpdate(t, ordinary, meta, func(tx *WriteTxn) error { return put(tx.PutNode, tx.PutEdge) })
	b := bulk.NewBulk(meta)
	b.holdLog = 1
	if err := put(b.PutNode, b.PutEdge); err != nil {
		t.Fatal(err)
	}
	c2, err := b.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if !b.Appended || !b.shedDone || b.edges.len() != 0 {
		t.Fatalf("fast path %v, shed %v, %d edge puts held; want the fast path, shed, none held", b.Appended, b.shedDone, b.edges.len())
	}
	if c1 != c2 {
		t.Fatalf("commits differ: update %+v, bulk %+v", c1, c2)
	}
	sameAsUpdate(t, ordinary, bulk)
}

// An edge operation takes 16 bytes; its weight, provenance and payload
// read back whichever way they are held (inline, or in edgeExtras).
func TestBulkEdgeLayout(t *testing.T) {
	if n := unsafe.Sizeof(bulkEdge{}); n != 16 {
		t.Errorf("bulkEdge takes %d bytes, want 16", n)
	}
	b := newStore(t, Options{}).NewBulk(WriteMeta{})
	for i := range 6 {
		if _, err := b.Key(fmt.Sprint("k", i)); err != nil {
			t.Fatal(err)
		}
	}
	type want struct {
		rel       RelID
		w         float32
		explicit  bool
		prov, pay uint32
	}
	cases := []want{{1, 0.5, false, 0, 0}, {7, 2, true, 0, 0}, {3, 1, false, 2, 0}, {maxBulkRel, 0.25, true, 0, 9}, {2, 3, true, 1, 4}}
	for i, c := range cases {
		if err := b.addEdge(uint32(i), uint32(i+1), c.rel, c.w, c.explicit, c.prov, c.pay); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cases {
		e := b.edges.at(i)
		got := want{e.rel(), b.edgeWeight(e), e.explicit(), b.edgeProv(e), b.edgePayIndex(e)}
		if got != c || e.src != uint32(i) || e.dst != uint32(i+1) {
			t.Errorf("edge %d: %+v %d→%d, want %+v %d→%d", i, got, e.src, e.dst, c, i, i+1)
		}
	}
	if b.edgeExtras.len() != 3 {
		t.Errorf("%d edges held apart, want the 3 with a provenance or payload", b.edgeExtras.len())
	}
	wantErr(t, b.addEdge(0, 1, maxBulkRel+1, 1, false, 0, 0), ErrInvalid)
	if b.edges.len() != len(cases) || b.seq.len() != len(cases) {
		t.Errorf("a refused edge was added: %d edges, %d operations", b.edges.len(), b.seq.len())
	}
}

// TestBulkCollisionsMatchOrdinary: with an id hash that makes many keys
// collide (and keys that repeat), a bulk load refuses at the operation the
// ordinary path refuses, naming the same key, existing key and id; a load
// without a collision commits.
func TestBulkCollisionsMatchOrdinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	hash := func(k string) NodeID { return NodeID(len(k)%5 + 1) }
	refused := 0
	for trial := range 120 {
		keys := make([]string, 1+rng.IntN(6))
		for i := range keys {
			keys[i] = strings.Repeat(string(rune('a'+rng.IntN(3))), 1+rng.IntN(9))
		}
		type op struct {
			edge     bool
			src, dst string
		}
		ops := make([]op, 1+rng.IntN(8))
		for i := range ops {
			ops[i] = op{edge: rng.IntN(2) == 0, src: keys[rng.IntN(len(keys))], dst: keys[rng.IntN(len(keys))]}
		}
		apply := func(put func(op) error) (int, error) {
			for i, o := range ops {
				if err := put(o); err != nil {
					return i, err
				}
			}
			return -1, nil
		}
		ord := newStore(t, Options{})
		ord.setHashForTest(hash)
		var at int
		_, werr := ord.Update(WriteMeta{}, func(tx *WriteTxn) error {
			var err error
			at, err = apply(func(o op) error {
				if o.edge {
					return tx.PutEdge(EdgePut{Src: o.src, Rel: "calls", Dst: o.dst})
				}
				return tx.PutNode(NodePut{Key: o.src})
			})
			return err
		})
		bs := newStore(t, Options{})
		bs.setHashForTest(hash)
		b := bs.NewBulk(WriteMeta{})
		// Some keys registered first, in another order (a registration is
		// not a use): the order of the keys is not the order of first uses.
		for _, i := range rng.Perm(len(keys))[:rng.IntN(len(keys)+1)] {
			if _, err := b.Key(keys[i]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := apply(func(o op) error {
			if o.edge {
				return b.PutEdge(EdgePut{Src: o.src, Rel: "calls", Dst: o.dst})
			}
			return b.PutNode(NodePut{Key: o.src})
		}); err != nil {
			t.Fatal(err)
		}
		_, berr := b.Commit()
		var wc, bc *CollisionError
		var opErr *BulkOpError
		if werr == nil {
			if berr != nil {
				t.Fatalf("trial %d: ordinary path commits, bulk load: %v", trial, berr)
			}
			continue
		}
		refused++
		if !errors.As(werr, &wc) || !asCollision(berr, &bc) || !asBulkOpError(berr, &opErr) {
			t.Fatalf("trial %d: ordinary %v, bulk %v", trial, werr, berr)
		}
		if opErr.Op != at || bc.Key != wc.Key || bc.Existing != wc.Existing || bc.ID != wc.ID {
			t.Fatalf("trial %d %v: bulk refused op %d (%q over %q, id %d), ordinary op %d (%q over %q, id %d)",
				trial, ops, opErr.Op, bc.Key, bc.Existing, bc.ID, at, wc.Key, wc.Existing, wc.ID)
		}
	}
	if refused < 30 || refused > 115 {
		t.Fatalf("%d of 120 trials had a collision: the hash does not test both ways", refused)
	}
}
