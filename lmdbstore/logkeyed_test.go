package lmdbstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/google/go-cmp/cmp"
)

// keyedCase is one random log operation with what the log holds beside
// the Op: an add_rel's id and flags byte.
type keyedCase struct {
	op     Op
	relID  uint32
	flags  byte
	valid  bool // put_node / put_kv logged with a validity (kinds 8, 9)
	logged OpKind
}

// randomLogOps draws n operations of every kind over a small vocabulary, so
// names repeat across fields (a key that is also a type, a scope that is
// also a relation name).
func randomLogOps(r *rand.Rand, n int) []keyedCase {
	words := []string{"", "repo", "file:a.go", "sym:a.F", "calls", "file", "run1", "t", "ns", "k", "x\x00y", "é"}
	for i := range 20 {
		words = append(words, fmt.Sprintf("sym:p.F%d", i))
	}
	w := func() string { return words[r.IntN(len(words))] }
	payload := func() []byte {
		if r.IntN(3) == 0 {
			return nil
		}
		return []byte(fmt.Sprintf(`{"v":%d}`, r.IntN(100)))
	}
	valid := func() Validity {
		var v Validity
		if r.IntN(2) == 0 {
			v.From = time.Unix(int64(r.IntN(1e9)), 0).UTC()
		}
		if v.From.IsZero() || r.IntN(2) == 0 {
			v.Until = time.Unix(2e9+int64(r.IntN(1e9)), 0).UTC()
		}
		return v
	}
	cases := make([]keyedCase, n)
	for i := range cases {
		c := keyedCase{op: Op{Kind: OpKind(1 + r.IntN(7)), Scope: w(), RunID: w(), TaskID: w()}}
		c.logged = c.op.Kind
		o := &c.op
		switch o.Kind {
		case OpPutNode:
			o.NodeKey, o.NodeType, o.Payload = w(), w(), payload()
			if r.IntN(3) == 0 {
				c.valid, c.logged, o.Valid = true, opPutNodeValid, valid()
			}
		case OpDelNode:
			o.NodeKey = w()
		case OpPutEdge:
			o.Src, o.Rel, o.Dst, o.Weight, o.Payload = w(), w(), w(), float32(r.IntN(8))/4, payload()
		case OpDelEdge:
			o.Src, o.Rel, o.Dst = w(), w(), w()
		case OpPutKV:
			o.Namespace, o.Key, o.Payload = w(), w(), payload()
			if r.IntN(3) == 0 {
				c.valid, c.logged, o.Valid = true, opPutKVValid, valid()
			}
		case OpDelKV:
			o.Namespace, o.Key = w(), w()
		case OpAddRel:
			o.Rel, o.Weight, c.relID, c.flags = w(), 0.5, uint32(10+r.IntN(5)), byte(r.IntN(16))
		}
		cases[i] = c
	}
	return cases
}

// format01Ops encodes cases as SPEC.md §2 lists format 01's ops, written
// out here field by field.
func format01Ops(t testing.TB, cases []keyedCase) []byte {
	t.Helper()
	var b []byte
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	f32 := func(f float32) { b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f)) }
	for _, c := range cases {
		o := c.op
		b = append(b, byte(c.logged))
		str(o.Scope)
		str(o.RunID)
		str(o.TaskID)
		switch o.Kind {
		case OpPutNode:
			str(o.NodeKey)
			str(o.NodeType)
			str(string(o.Payload))
		case OpDelNode:
			str(o.NodeKey)
		case OpPutEdge:
			str(o.Src)
			str(o.Rel)
			str(o.Dst)
			f32(o.Weight)
			str(string(o.Payload))
		case OpDelEdge:
			str(o.Src)
			str(o.Rel)
			str(o.Dst)
		case OpPutKV:
			str(o.Namespace)
			str(o.Key)
			str(string(o.Payload))
		case OpDelKV:
			str(o.Namespace)
			str(o.Key)
		case OpAddRel:
			str(o.Rel)
			b = binary.BigEndian.AppendUint32(b, c.relID)
			b = append(b, c.flags)
			f32(o.Weight)
		}
		if c.valid {
			v, err := toValidity(o.Valid)
			if err != nil {
				t.Fatal(err)
			}
			b = v.appendLog(b)
		}
	}
	return b
}

// names lists the name fields of cases in log order (SPEC.md §2: every
// str but a payload).
func names(cases []keyedCase) []string {
	var out []string
	for _, c := range cases {
		o := c.op
		out = append(out, o.Scope, o.RunID, o.TaskID)
		switch o.Kind {
		case OpPutNode:
			out = append(out, o.NodeKey, o.NodeType)
		case OpDelNode:
			out = append(out, o.NodeKey)
		case OpPutEdge, OpDelEdge:
			out = append(out, o.Src, o.Rel, o.Dst)
		case OpPutKV, OpDelKV:
			out = append(out, o.Namespace, o.Key)
		case OpAddRel:
			out = append(out, o.Rel)
		}
	}
	return out
}

// keyedRecord is a sealed format-03 log value of body.
func keyedRecord(s *Store, ts uint64, nops int, body []byte) []byte {
	enc, _ := s.zstd()
	v := binary.BigEndian.AppendUint64([]byte{fmtKeyed}, ts)
	v = append(v, 0, 0, 0) // empty scope, run, task
	v = binary.AppendUvarint(v, uint64(nops))
	v = binary.AppendUvarint(v, uint64(len(body)))
	return sealValue(enc.EncodeAll(body, v))
}

// TestKeyedLogRoundTrip: random op sequences of every kind, encoded as
// format 01 and converted to format 03, decode to exactly the operations
// drawn; the key table is each distinct name once, in the order of first
// use; and the record is smaller than the format-01 ops.
func TestKeyedLogRoundTrip(t *testing.T) {
	s := newStore(t, Options{})
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 3))
		cases := randomLogOps(r, 60+r.IntN(300)) // bodies of at least minKeyedBody bytes
		ops := format01Ops(t, cases)
		body, err := keyedOps(ops, len(cases))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var want []string
		seen := map[string]bool{}
		for _, n := range names(cases) {
			if !seen[n] {
				seen[n] = true
				want = append(want, n)
			}
		}
		tab, _, err := splitKeyTable(body)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, tab); diff != "" {
			t.Fatalf("seed %d: key table (-first use +got):\n%s", seed, diff)
		}
		const rev, ts = 7, 1_700_000_000_000_000_000
		rec, err := s.decodeLog(u64be(rev), keyedRecord(s, ts, len(cases), body))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for i, c := range cases {
			c.op.Rev, c.op.TS = rev, nsTime(ts)
			if diff := cmp.Diff(c.op, rec.ops[i], cmpOpts...); diff != "" {
				t.Fatalf("seed %d op %d (-drawn +decoded):\n%s", seed, i, diff)
			}
			if c.op.Kind == OpAddRel && rec.relFlags[i] != c.flags {
				t.Fatalf("seed %d op %d: flags %#x, drawn %#x", seed, i, rec.relFlags[i], c.flags)
			}
		}
		if len(rec.ops) != len(cases) {
			t.Fatalf("seed %d: %d ops decoded, %d drawn", seed, len(rec.ops), len(cases))
		}
		if len(body) >= len(ops) {
			t.Fatalf("seed %d: format-03 body %d bytes, format-01 ops %d", seed, len(body), len(ops))
		}
	}
}

// TestKeyedLogRefusesNoncanonical: a format-03 record whose table is not
// its names in first-use order, or whose indices leave it, is corruption.
func TestKeyedLogRefusesNoncanonical(t *testing.T) {
	s := newStore(t, Options{})
	uv := binary.AppendUvarint
	str := func(b []byte, x string) []byte { return append(uv(b, uint64(len(x))), x...) }
	table := func(entries ...string) []byte {
		b := uv(nil, uint64(len(entries)))
		for _, e := range entries {
			b = str(b, e)
		}
		return b
	}
	// One put_node op: kind 1, scope, run, task, key, type, then a payload
	// that makes the body long enough for zstd to record its size.
	payload := str(nil, `"`+strings.Repeat("p", minKeyedBody)+`"`)
	op := func(idx ...uint64) []byte {
		b := []byte{byte(OpPutNode)}
		for _, i := range idx {
			b = uv(b, i)
		}
		return append(b, payload...)
	}
	good := append(table("", "k"), op(0, 0, 0, 1, 0)...)
	if rec, err := s.decodeLog(u64be(1), keyedRecord(s, 1, 1, good)); err != nil || rec.ops[0].NodeKey != "k" || rec.ops[0].Scope != "" {
		t.Fatalf("the well-formed record: %+v, %v", rec.ops, err)
	}
	for name, body := range map[string][]byte{
		"unused entry":          append(table("", "k", "z"), op(0, 0, 0, 1, 0)...),
		"index skips ahead":     append(table("", "k", "z"), op(0, 0, 0, 2, 1)...),
		"index beyond table":    append(table("", "k"), op(0, 0, 0, 2, 0)...),
		"entries out of order":  append(table("k", ""), op(1, 1, 1, 0, 1)...),
		"table longer than all": append(uv(nil, 1000), good[1:]...),
		"truncated entry":       append(append(uv(nil, 2), 0, 5, 'k'), payload...),
		"trailing bytes":        append(append(table("", "k"), op(0, 0, 0, 1, 0)...), 0),
	} {
		for _, whole := range []int{readWholeAbove, 1} { // read whole, and streamed in windows of 3 bytes
			s.logWhole, s.logWindow = whole, 3
			_, err := s.decodeLog(u64be(1), keyedRecord(s, 1, 1, body))
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Keyspace != dbLog {
				t.Errorf("%s (read whole above %d): %v, want a corruption of the log", name, whole, err)
			}
		}
	}
}

// TestKeyedLogMatchesFormat02: the same random transactions (every op
// kind, most records over 4096 bytes of ops) written to a store that
// writes format 02 and one that writes format 03 give byte-identical
// keyspaces but for the log and meta.schema, and the same answers from
// every reader of the log: diff-since, revision ops, log headers, commit
// times, node and kv versions. Format-01 records are the same bytes.
func TestKeyedLogMatchesFormat02(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			old, keyed := newStore(t, Options{}), newStore(t, Options{})
			old.setLogFormat02ForTest()
			for _, s := range []*Store{old, keyed} {
				writeRandomHistory(t, s, seed)
			}
			d2, d3 := dumpAll(t, old), dumpAll(t, keyed)
			for name := range d2 {
				if name == dbLog || name == dbMeta {
					continue
				}
				if diff := cmp.Diff(d2[name], d3[name]); diff != "" {
					t.Errorf("%s differs (-02 +03):\n%s", name, diff)
				}
			}
			formats := map[[2]byte]int{}
			for rev := range len(d2[dbLog]) {
				v2, v3 := logValueOf(t, old, Revision(rev+1)), logValueOf(t, keyed, Revision(rev+1))
				formats[[2]byte{v2[0], v3[0]}]++
				if v2[0] == fmtPlain && string(v2) != string(v3) {
					t.Errorf("revision %d: format-01 records differ", rev+1)
				}
			}
			if formats[[2]byte{fmtZstd, fmtKeyed}] == 0 || formats[[2]byte{fmtPlain, fmtPlain}] == 0 ||
				len(formats) != 2 {
				t.Fatalf("record formats (02-store, 03-store): %v; want 02/03 and 01/01 pairs only", formats)
			}
			if a, b := schemaOf(t, old), schemaOf(t, keyed); a != schemaRevs || b != schemaKeyedLog {
				t.Fatalf("schemas %d (format 02) and %d (format 03), want %d and %d", a, b, schemaRevs, schemaKeyedLog)
			}
			if diff := cmp.Diff(logReads(t, old), logReads(t, keyed), cmpOpts...); diff != "" {
				t.Fatalf("log reads differ (-02 +03):\n%s", diff)
			}
		})
	}
}

// writeRandomHistory writes 30 transactions of up to 300 random model
// operations (modelOp) and a few relations, the same for a given seed.
func writeRandomHistory(t *testing.T, s *Store, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 28))
	st := mState{map[string]mNode{}, map[mEdgeKey]mEdge{}, map[mKVKey]mKV{}}
	for i := range 30 {
		meta := WriteMeta{Scope: "repo", RunID: fmt.Sprint("run", r.IntN(3)), TaskID: fmt.Sprint("task", r.IntN(3))}
		n := 1 + r.IntN(4)
		if i%3 != 0 {
			n = 100 + r.IntN(200)
		}
		newRel := r.IntN(4) == 0
		mustUpdate(t, s, meta, func(tx *WriteTxn) error {
			if newRel {
				if _, err := tx.AddRelation(Relation{Name: fmt.Sprint("rel", i), DefaultWeight: 0.25, Bidirectional: i%2 == 0}); err != nil {
					return err
				}
			}
			for range n {
				if _, err := modelOp(r, tx, st, Revision(i+1), meta); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

func logValueOf(t *testing.T, s *Store, rev Revision) []byte {
	t.Helper()
	var v []byte
	if err := s.View(func(r *ReadTxn) error {
		var err error
		v, err = r.LogRecord(rev)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

func schemaOf(t *testing.T, s *Store) uint64 {
	t.Helper()
	var ver uint64
	if err := s.view(func(txn *lmdb.Txn) error {
		var err error
		ver, err = getU64(txn, s.db.meta, metaSchema)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ver
}

// logReads is what every reader of the log answers on s.
func logReads(t *testing.T, s *Store) map[string]any {
	t.Helper()
	out := map[string]any{}
	err := s.View(func(r *ReadTxn) error {
		var diff []Op
		if err := r.DiffSince(AtRevision(0), DiffFilter{}, func(op Op) error { diff = append(diff, op); return nil }); err != nil {
			return err
		}
		out["diff-since 0"] = diff
		var run []Op
		if err := r.DiffSince(AtRevision(3), DiffFilter{RunID: "run1"}, func(op Op) error { run = append(run, op); return nil }); err != nil {
			return err
		}
		out["diff-since 3 run1"] = run
		var heads []LogHeader
		if err := r.LogHeaders(r.Revision(), func(h LogHeader) bool { heads = append(heads, h); return true }); err != nil {
			return err
		}
		out["headers"] = heads
		for rev := Revision(1); rev <= r.Revision(); rev++ {
			var ops []Op
			if err := r.RevisionOps(rev, func(op Op) error { ops = append(ops, op); return nil }); err != nil {
				return err
			}
			tm, err := r.logTime(rev)
			if err != nil {
				return err
			}
			out[fmt.Sprint("rev ", rev)] = ops
			out[fmt.Sprint("time ", rev)] = tm
		}
		for _, k := range modelNodeKeys {
			var vs []Version
			if err := r.NodeVersions(k, func(v Version) error { vs = append(vs, v); return nil }); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			out["node "+k] = vs
		}
		for _, ns := range modelNS {
			for _, k := range modelKVKeys {
				var vs []Version
				if err := r.KVVersions("repo", ns, k, func(v Version) error { vs = append(vs, v); return nil }); err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				out["kv "+ns+"/"+k] = vs
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKeyedLogRaisesSchema: a store stays schema 3 while its records are
// small (format 01), becomes schema 4 in the transaction of its first
// format-03 record, and reopens; a schema it does not know is refused by
// name.
func TestKeyedLogRaisesSchema(t *testing.T) {
	path := t.TempDir()
	s, err := Init(path, Options{NoSync: true, Clock: testClock(), MapSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error { return tx.PutNode(NodePut{Key: "file:a.go"}) })
	if v := schemaOf(t, s); v != schemaRevs || logValueOf(t, s, 1)[0] != fmtPlain {
		t.Fatalf("after a small write: schema %d, record format %d; want 3 and 1", v, logValueOf(t, s, 1)[0])
	}
	mustUpdate(t, s, WriteMeta{}, func(tx *WriteTxn) error {
		for i := range 200 {
			if err := tx.PutEdge(EdgePut{Src: "file:a.go", Rel: "imports", Dst: fmt.Sprintf("file:b%d.go", i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if v := schemaOf(t, s); v != schemaKeyedLog || logValueOf(t, s, 2)[0] != fmtKeyed {
		t.Fatalf("after a large write: schema %d, record format %d; want 4 and 3", v, logValueOf(t, s, 2)[0])
	}
	mustCheck(t, s)
	// check: a format-03 record in a store that claims schema 3.
	setSchema := func(v uint64) {
		if _, err := s.update(func(txn *lmdb.Txn) error {
			return txn.Put(s.db.meta, []byte(metaSchema), u64Value(v), 0)
		}); err != nil {
			t.Fatal(err)
		}
	}
	setSchema(schemaRevs)
	rep, err := s.Check()
	if err != nil || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "format-03 record in a schema-3 store") {
		t.Fatalf("check of a schema-3 store holding format 03: %v, %v", rep.Problems, err)
	}
	setSchema(schemaKeyedLog)
	mustCheck(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{NoSync: true, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a schema-4 store: %v", err)
	}
	n := 0
	if err := s2.View(func(r *ReadTxn) error {
		return r.DiffSince(AtRevision(0), DiffFilter{}, func(Op) error { n++; return nil })
	}); err != nil || n != 201 {
		t.Fatalf("diff-since after reopening: %d ops, %v; want 201", n, err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKeyedLogSmallBody: a transaction whose format-01 ops exceed 4096
// bytes but whose key-table body is under minKeyedBody bytes (one long
// name in every field of a few ops) is written as format 02, which zstd
// can size, and reads back.
func TestKeyedLogSmallBody(t *testing.T) {
	s := newStore(t, Options{})
	long := "file:" + strings.Repeat("n", 95)
	meta := WriteMeta{Scope: long, RunID: long, TaskID: long}
	mustUpdate(t, s, meta, func(tx *WriteTxn) error {
		for i := range 15 {
			if err := tx.PutNode(NodePut{Key: long, Type: long, Payload: []byte(fmt.Sprint(i))}); err != nil {
				return err
			}
		}
		return nil
	})
	v := logValueOf(t, s, 1)
	if v[0] != fmtZstd || schemaOf(t, s) != schemaRevs {
		t.Fatalf("record format %d, schema %d; want 2 and 3", v[0], schemaOf(t, s))
	}
	var got []string
	if err := s.View(func(r *ReadTxn) error {
		return r.RevisionOps(1, func(op Op) error {
			if op.NodeKey != long || op.NodeType != long || op.Scope != long || op.TaskID != long {
				return fmt.Errorf("op %+v", op)
			}
			got = append(got, string(op.Payload))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14"}; !cmp.Equal(got, want) {
		t.Fatalf("payloads %v, want %v", got, want)
	}
}

// TestSealLogStream: a record sealed from its body written in pieces
// (sealLogStream, what a bulk load's large keyed log takes) is the same
// whatever the pieces, sealLog's record of the whole body over
// streamLogAbove, for bodies compressible or not; every record decodes to
// its body; a body of other than its stated size is refused.
func TestSealLogStream(t *testing.T) {
	s := newStore(t, Options{})
	s.streamLog = 64 << 10 // streamLogAbove's rule at a size a test compresses quickly
	s.recordResident = 1   // a spilled record keeps its first part in memory
	spillDir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	var bodies [][]byte
	for _, n := range []int{minKeyedBody, 5000, s.streamLog + 1, 3 << 20} {
		text := make([]byte, 0, n)
		for len(text) < n {
			text = fmt.Appendf(text, "sym:example.com/p%d.F%d ", rng.IntN(300), rng.IntN(5000))
		}
		noise := make([]byte, n)
		for i := range noise {
			noise[i] = byte(rng.Uint32())
		}
		bodies = append(bodies, text[:n], noise)
	}
	mustUpdate(t, s, WriteMeta{Scope: "repo"}, func(tx *WriteTxn) error {
		for _, body := range bodies {
			want := tx.sealLog(fmtKeyed, body)
			if dec, err := logBodyOf(s, want); err != nil || !bytes.Equal(dec, body) {
				t.Fatalf("body of %d bytes: sealLog's record decodes to %d bytes, %v", len(body), len(dec), err)
			}
			for i, piece := range []int{1 << 10, 7777, keyedWindow, len(body)} {
				// Every other run spills all but the first part of the
				// record to a file (recordParts.spillTo).
				spill := ""
				if i%2 == 1 {
					spill = spillDir
				}
				parts, err := tx.sealLogStream(fmtKeyed, len(body), spill, func(w io.Writer) error {
					for i := 0; i < len(body); i += piece {
						if _, err := w.Write(body[i:min(len(body), i+piece)]); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				got, err := parts.bytes()
				if err != nil {
					t.Fatal(err)
				}
				if want := (parts.n + recordPart - 1) / recordPart; spill == "" && (len(parts.parts) != want || len(got) != parts.n) {
					t.Fatalf("a record of %d bytes (%d) in %d parts, not %d", len(got), parts.n, len(parts.parts), want)
				}
				if spill != "" && parts.n > 2*recordPart && (parts.onFile == 0 || len(parts.parts) != 2 || int(parts.onFile)+len(parts.parts[0])+len(parts.parts[1]) != parts.n) {
					t.Fatalf("a record of %d bytes spilled: %d bytes in the file, %d parts in memory", parts.n, parts.onFile, len(parts.parts))
				}
				if dec, err := logBodyOf(s, got); err != nil || !bytes.Equal(dec, body) {
					t.Fatalf("body of %d bytes in pieces of %d: the record decodes to %d bytes, %v", len(body), piece, len(dec), err)
				}
				if len(body) <= s.streamLogAbove() {
					continue // sealLog compresses it in one call: another frame
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("body of %d bytes in pieces of %d: record of %d bytes differs from sealLog's %d", len(body), piece, len(got), len(want))
				}
			}
			if _, err := tx.sealLogStream(fmtKeyed, len(body)+1, "", func(w io.Writer) error {
				_, err := w.Write(body)
				return err
			}); err == nil {
				t.Fatalf("a body of %d bytes sealed as %d", len(body), len(body)+1)
			}
		}
		return tx.PutNode(NodePut{Key: "sym:x", Type: "function"})
	})
}

// logBodyOf is the body of log record v, read whole and read as a stream
// in windows of 1000 bytes; an error unless both give the same bytes.
func logBodyOf(s *Store, v []byte) ([]byte, error) {
	var bodies [2][]byte
	for i, whole := range []int{readWholeAbove, 1} {
		s.logWhole, s.logWindow = whole, 1000
		_, _, _, body, err := s.openLog(v)
		if err != nil {
			return nil, err
		}
		b, err := body.all()
		body.close()
		if err != nil {
			return nil, err
		}
		bodies[i] = b
	}
	s.logWhole, s.logWindow = 0, 0
	if !bytes.Equal(bodies[0], bodies[1]) {
		return nil, fmt.Errorf("read whole %d bytes, streamed %d", len(bodies[0]), len(bodies[1]))
	}
	return bodies[0], nil
}

// TestLogStreamedReadsAsWhole: every reader of the log (diff-since,
// revision ops, headers, versions, check) answers the same whether the
// records' bodies are decompressed whole or streamed in windows down to
// one byte, so that an item straddles windows again and again; a bulk
// load's record, sealed as a stream, among them. The whole reads are the
// ones the model tests check.
func TestLogStreamedReadsAsWhole(t *testing.T) {
	for seed := range uint64(2) {
		s := newStore(t, Options{})
		s.streamLog = 1000 // a large record's frame, as a big load writes it
		writeRandomHistory(t, s, seed)
		b := s.NewBulk(WriteMeta{Scope: "repo", RunID: "bulk"})
		for i := range 400 {
			if err := b.PutNode(NodePut{Key: fmt.Sprintf("sym:bulk.N%d", i), Type: "symbol", Payload: []byte(fmt.Sprintf(`{"i":%d}`, i))}); err != nil {
				t.Fatal(err)
			}
			if err := b.PutEdge(EdgePut{Src: fmt.Sprintf("sym:bulk.N%d", i), Rel: "calls", Dst: fmt.Sprintf("sym:bulk.N%d", (i*7+1)%400)}); err != nil {
				t.Fatal(err)
			}
		}
		c, err := b.Commit()
		if err != nil {
			t.Fatal(err)
		}
		whole := logReads(t, s)
		if rep, err := s.Check(); err != nil || len(rep.Problems) > 0 {
			t.Fatalf("check, read whole: %v, %v", rep.Problems, err)
		}
		streamed := 0
		for rev := Revision(1); rev <= c.Rev; rev++ {
			v := logValueOf(t, s, rev)
			s.logWhole = 1
			_, _, _, body, err := s.openLog(v)
			if err != nil {
				t.Fatal(err)
			}
			if body.zr != nil {
				streamed++
			}
			body.close()
		}
		if streamed < 5 {
			t.Fatalf("%d records read as a stream; the test needs compressed ones", streamed)
		}
		for _, window := range []int{1, 7, 300, 1 << 20} {
			s.logWhole, s.logWindow = 1, window
			if diff := cmp.Diff(whole, logReads(t, s), cmpOpts...); diff != "" {
				t.Fatalf("seed %d, window %d: streamed reads differ (-whole +streamed):\n%s", seed, window, diff)
			}
			if rep, err := s.Check(); err != nil || len(rep.Problems) > 0 {
				t.Fatalf("seed %d, window %d: check: %v, %v", seed, window, rep.Problems, err)
			}
		}
	}
}
