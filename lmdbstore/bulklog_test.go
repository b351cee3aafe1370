package lmdbstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBulkLogNamesEarly: a load with one provenance has its log record's
// key table filled before the edge sorts (nameLog), from every operation
// rather than those that change something; the record must still be the
// ordinary path's byte for byte. The keys repeat (puts that change
// nothing), and some are also a type, the provenance or a relation name
// (one table entry each), or redact to another key (the table's map for
// keys).
func TestBulkLogNamesEarly(t *testing.T) {
	for _, c := range []struct{ redact, provs bool }{{false, false}, {true, false}, {false, true}} {
		redact := c.redact
		// provs: some operations carry another run, and one that changes
		// nothing can name it first: the table is filled after the sorts.
		t.Run(fmt.Sprintf("redact=%v,provs=%v", c.redact, c.provs), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 3))
			pool := []string{"T", "repo", "r1", "calls", "imports"}
			for i := range 60 {
				pool = append(pool, fmt.Sprint("sym:", i))
			}
			if redact {
				pool = append(pool, "k:hunter2", "k:[REDACTED:test]")
			}
			key := func() string { return pool[rng.IntN(len(pool))] }
			payloads := []json.RawMessage{nil, json.RawMessage(`{"a":1}`), json.RawMessage(`{"b":"x"}`)}
			types := []string{"", "T", "calls", "repo"}
			var ops []bulkOp
			if c.provs { // another run, first named by a put that changes nothing
				ops = append(ops, bulkOp{node: &NodePut{Key: "sym:0"}}, bulkOp{node: &NodePut{Key: "sym:0", RunID: "r2"}}, bulkOp{node: &NodePut{Key: "sym:1"}})
			}
			for range 2500 {
				if rng.IntN(3) == 0 {
					p := NodePut{Key: key(), Type: types[rng.IntN(len(types))], Payload: payloads[rng.IntN(len(payloads))]}
					if c.provs && rng.IntN(4) == 0 {
						p.RunID = "r2"
					}
					ops = append(ops, bulkOp{node: &p})
					continue
				}
				p := EdgePut{Src: key(), Rel: []string{"calls", "imports"}[rng.IntN(2)], Dst: key(), Payload: payloads[rng.IntN(len(payloads))]}
				if p.Src == p.Dst {
					p.Dst += "x"
				}
				if rng.IntN(2) == 0 {
					p.Weight = 0.5
				}
				if c.provs && rng.IntN(4) == 0 {
					p.RunID = "r2"
				}
				ops = append(ops, bulkOp{edge: &p})
			}
			opts := Options{}
			if redact {
				opts.Redactor = fakeRedactor{}
			}
			ordinary, bulk := newStore(t, opts), newStore(t, opts)
			meta := WriteMeta{Scope: "repo", RunID: "r1"}
			c1 := mustUpdate(t, ordinary, meta, func(tx *WriteTxn) error { return putOps(tx, ops) })
			b := bulk.NewBulk(meta)
			if err := putOps(b, ops); err != nil {
				t.Fatal(err)
			}
			c2, err := b.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if !b.Appended || (b.logNames != nil) == c.provs {
				t.Fatalf("fast path %v, key table filled early %v (provenances %d)", b.Appended, b.logNames != nil, len(b.provs))
			}
			if b.keys.redactedSome != redact {
				t.Fatalf("keys redacted %v, want %v", b.keys.redactedSome, redact)
			}
			if c1 != c2 {
				t.Fatalf("commits differ: update %+v, bulk %+v", c1, c2)
			}
			d1, d2 := dumpAll(t, ordinary), dumpAll(t, bulk)
			if len(d1[dbLog]) != 1 || !strings.HasPrefix(d1[dbLog][0], "0000000000000001=03") {
				t.Fatalf("ordinary log: want one format-03 record, got %.40q", d1[dbLog])
			}
			for _, name := range []string{dbMeta, dbNodes, dbEdges, dbIDs, dbLog, dbTS} {
				if diff := cmp.Diff(d1[name], d2[name]); diff != "" {
					t.Errorf("%s keyspace differs (-update +bulk):\n%s", name, diff)
				}
			}
		})
	}
}

// TestBulkAllChange: a load told that every operation changes its record
// (AllChange) encodes and compresses the log record of all of them before
// the edge sorts; with distinct operations that record is the one
// written, and with puts that change nothing it is discarded and the
// record made again. Either way it is the ordinary path's, byte for byte.
func TestBulkAllChange(t *testing.T) {
	for _, c := range []struct{ repeat, provs bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		repeat := c.repeat
		// provs: nodes of another run; with repeated puts, that run is
		// first named by a put that changes nothing.
		t.Run(fmt.Sprintf("repeat=%v,provs=%v", c.repeat, c.provs), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 8))
			var ops []bulkOp
			if c.provs && repeat {
				ops = append(ops, bulkOp{node: &NodePut{Key: "sym:0", Type: "T"}}, bulkOp{node: &NodePut{Key: "sym:0", Type: "T", RunID: "r2"}})
			}
			for i := range 300 {
				p := NodePut{Key: fmt.Sprint("sym:", i), Type: []string{"T", "func"}[i%2]}
				if c.provs && i%7 == 3 {
					p.RunID = "r2"
				}
				if i == 0 && c.provs && repeat {
					continue // put above
				}
				ops = append(ops, bulkOp{node: &p})
			}
			seen := map[[2]int]bool{}
			for len(ops) < 2000 {
				s, d := rng.IntN(300), rng.IntN(300)
				if s == d || seen[[2]int{s, d}] && !repeat {
					continue
				}
				seen[[2]int{s, d}] = true
				ops = append(ops, bulkOp{edge: &EdgePut{Src: fmt.Sprint("sym:", s), Rel: "calls", Dst: fmt.Sprint("sym:", d)}})
			}
			ordinary, bulk := newStore(t, Options{}), newStore(t, Options{})
			c1 := mustUpdate(t, ordinary, WriteMeta{}, func(tx *WriteTxn) error { return putOps(tx, ops) })
			b := bulk.NewBulk(WriteMeta{})
			b.AllChange()
			if err := putOps(b, ops); err != nil {
				t.Fatal(err)
			}
			c2, err := b.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if b.logSpec == nil || (b.logValue == b.logSpec) == repeat {
				t.Fatalf("speculative record made %v, written %v; repeated puts %v", b.logSpec != nil, b.logValue == b.logSpec, repeat)
			}
			if c1 != c2 {
				t.Fatalf("commits differ: update %+v, bulk %+v", c1, c2)
			}
			d1, d2 := dumpAll(t, ordinary), dumpAll(t, bulk)
			for _, name := range []string{dbMeta, dbNodes, dbEdges, dbIDs, dbLog, dbTS} {
				if diff := cmp.Diff(d1[name], d2[name]); diff != "" {
					t.Errorf("%s keyspace differs (-update +bulk):\n%s", name, diff)
				}
			}
		})
	}
}

// TestBulkLogRecordInParts: a fast-path load whose compressed log record
// spans several parts (recordPart) and is written before the node records
// (holdLog) goes from its parts into the space LMDB reserves for it: the
// stored record is the ordinary path's byte for byte, and decodes.
func TestBulkLogRecordInParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const hexDigits = "0123456789abcdef"
	var nodes []NodePut
	for i := range 2000 {
		pay := []byte{'"'}
		for range 2400 {
			pay = append(pay, hexDigits[rng.IntN(16)])
		}
		nodes = append(nodes, NodePut{Key: fmt.Sprint("sym:", i), Payload: append(pay, '"')})
	}
	ordinary, bulk := newStore(t, Options{}), newStore(t, Options{})
	ordinary.streamLog, bulk.streamLog = 64<<10, 64<<10 // compressed as a stream, as a large load's record is
	bulk.recordResident = 1                             // and all but its first 1 MiB part spilled to a file until it is written
	meta := WriteMeta{Scope: "repo"}
	c1 := mustUpdate(t, ordinary, meta, func(tx *WriteTxn) error {
		for _, n := range nodes {
			if err := tx.PutNode(n); err != nil {
				return err
			}
		}
		return nil
	})
	b := bulk.NewBulk(meta)
	b.holdLog = 1
	for _, n := range nodes {
		if err := b.PutNode(n); err != nil {
			t.Fatal(err)
		}
	}
	c2, err := b.Commit()
	if err != nil || !b.Appended || c2.Rev != c1.Rev {
		t.Fatalf("bulk commit: rev %d (ordinary %d), fast path %v, %v", c2.Rev, c1.Rev, b.Appended, err)
	}
	want := rawGet(t, ordinary, ordinary.db.log, u64be(uint64(c1.Rev)))
	got := rawGet(t, bulk, bulk.db.log, u64be(uint64(c2.Rev)))
	if len(want) < 2*recordPart {
		t.Fatalf("the record is %d bytes: not several parts of %d", len(want), recordPart)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("bulk log record of %d bytes differs from the ordinary path's %d", len(got), len(want))
	}
	if _, _, _, _, err := bulk.openLog(got); err != nil {
		t.Fatal(err)
	}
}
