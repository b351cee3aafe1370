package csr_test

import (
	"errors"
	"testing"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

func tinyGraph(t *testing.T) *csr.Graph {
	t.Helper()
	st := &snapshot.MemState{
		Rev: 2, Time: 2000,
		Rels: []snapshot.RelationRecord{{ID: 1, Name: "calls", DefaultWeight: 1}},
		NodeList: []snapshot.NodeRecord{
			{ID: 10, Key: "file:a", Type: "file", CreatedRev: 1, Rev: 1, CreatedTS: 1000, UpdatedTS: 1000},
			{ID: 20, Key: "file:b", Type: "file", CreatedRev: 1, Rev: 2, CreatedTS: 1000, UpdatedTS: 2000},
		},
		EdgeList: []snapshot.EdgeRecord{{Src: 10, Dst: 20, Rel: 1, Weight: 0.5, Rev: 2, TS: 2000}},
	}
	b, _, err := snapshot.Write(st, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := csr.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestAccessorsOutOfRange(t *testing.T) {
	g := tinyGraph(t)
	if _, _, _, err := g.Out(2); !errors.Is(err, snapshot.ErrOutOfRange) {
		t.Errorf("Out(2): %v", err)
	}
	if _, _, _, err := g.In(99); !errors.Is(err, snapshot.ErrOutOfRange) {
		t.Errorf("In(99): %v", err)
	}
	if _, err := g.Key(2); !errors.Is(err, snapshot.ErrOutOfRange) {
		t.Errorf("Key(2): %v", err)
	}
	if _, err := g.Relation(7); !errors.Is(err, snapshot.ErrOutOfRange) {
		t.Errorf("Relation(7): %v", err)
	}
	if err := g.CheckIndex(1); err != nil {
		t.Errorf("CheckIndex(1): %v", err)
	}
}

func TestSmallGraph(t *testing.T) {
	g := tinyGraph(t)
	a, ok, _ := g.LookupKey("file:a")
	b, _, _ := g.Lookup(20)
	if !ok || a != 0 || b != 1 {
		t.Fatalf("lookups: %d %v %d", a, ok, b)
	}
	tg, rels, ws, err := g.Out(a)
	if err != nil || len(tg) != 1 || tg[0] != b || rels[0] != 1 || ws[0] != 0.5 {
		t.Fatalf("Out: %v %v %v %v", tg, rels, ws, err)
	}
	src, _, _, _ := g.In(b)
	if len(src) != 1 || src[0] != a {
		t.Fatalf("In: %v", src)
	}
	rev, ok, _ := g.EdgeRev(a, 1, b)
	ts, tok := g.RevisionTime(rev)
	if !ok || rev != 2 || !tok || ts != 2000 {
		t.Fatalf("EdgeRev %d %v, time %d %v", rev, ok, ts, tok)
	}
	if d, _ := g.OutDegree(a); d != 1 {
		t.Fatalf("OutDegree %d", d)
	}
	if _, ok, _ := g.PageRank(); ok {
		t.Fatal("PageRank without the section")
	}
	if g.Revision() != 2 || g.CommitTime() != 2000 {
		t.Fatal("header revision/time")
	}
}
