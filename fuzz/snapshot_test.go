package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

// fixtureSnapshots are exports of the fixture store: latest, at revision 3,
// logical, and without the PageRank section.
func fixtureSnapshots(t testing.TB) [][]byte {
	t.Helper()
	s, err := lmdbstore.Open(fixture(t), lmdbstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out [][]byte
	for _, c := range []struct {
		at   lmdbstore.At
		opts snapshot.WriterOptions
	}{
		{lmdbstore.At{}, snapshot.WriterOptions{Extra: engines.PageRankSection}},
		{lmdbstore.AtRevision(3), snapshot.WriterOptions{}},
		{lmdbstore.At{}, snapshot.WriterOptions{Logical: true}},
	} {
		b, err := storesnap.ExportBytes(s, c.at, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fixCRCs recomputes every checksum of a (possibly damaged) snapshot in
// place — section CRCs, the directory CRC, the header CRC — wherever the
// header and directory still point inside the file, so damage reaches the
// structural checks behind the CRCs.
func fixCRCs(b []byte) {
	if len(b) < snapshot.HeaderSize {
		return
	}
	le := binary.LittleEndian
	count := uint64(le.Uint32(b[60:]))
	dirOff := le.Uint64(b[64:])
	if count <= 256 && dirOff <= uint64(len(b)) && count*snapshot.DirEntrySize <= uint64(len(b))-dirOff {
		dir := b[dirOff : dirOff+count*snapshot.DirEntrySize]
		for e := 0; e < len(dir); e += snapshot.DirEntrySize {
			off, n := le.Uint64(dir[e+8:]), le.Uint64(dir[e+16:])
			if off <= uint64(len(b)) && n <= uint64(len(b))-off {
				le.PutUint32(dir[e+4:], crc32.Checksum(b[off:off+n], castagnoli))
			}
		}
		le.PutUint32(b[80:], crc32.Checksum(dir, castagnoli))
	}
	le.PutUint32(b[124:], crc32.Checksum(b[:124], castagnoli))
}

// FuzzSnapshot: snapshot bytes as they come (damage is caught by the CRCs).
func FuzzSnapshot(f *testing.F) {
	for _, b := range fixtureSnapshots(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		defer watchdog(hangLimit)()
		checkSnapshotBytes(t, b)
	})
}

// FuzzSnapshotStructure: the same, with every CRC fixed up after the
// fuzzer's damage, so Open's bounds checks, Verify's invariants and the
// accessors see hostile structure rather than a checksum mismatch.
func FuzzSnapshotStructure(f *testing.F) {
	for _, b := range fixtureSnapshots(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		defer watchdog(hangLimit)()
		b = bytes.Clone(b)
		fixCRCs(b)
		checkSnapshotBytes(t, b)
	})
}

// snapshotErr accepts the typed errors a reader may return.
func snapshotErr(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var fe *snapshot.FormatError
	switch {
	case errors.As(err, &fe):
		if fe.Section == "" {
			t.Fatalf("%s: error does not name a section: %v", what, err)
		}
	case errors.Is(err, snapshot.ErrCorrupt), errors.Is(err, snapshot.ErrNewerVersion), errors.Is(err, snapshot.ErrUnsupported):
	default:
		t.Fatalf("%s: untyped error %T: %v", what, err, err)
	}
}

// checkSnapshotBytes opens b and calls every accessor. Nothing may panic or
// fail untyped; a file that passes Verify answers every in-range call
// without error and is exactly what the writer produces for its content.
func checkSnapshotBytes(t *testing.T, b []byte) {
	var g *csr.Graph
	var err error
	if n := allocated(func() { g, err = csr.FromBytes(b) }); n > allocBudget(len(b), 0) {
		t.Fatalf("Open of %d bytes allocated %d bytes", len(b), n)
	}
	if err != nil {
		snapshotErr(t, "open", err)
		return
	}
	defer g.Close()
	verr := g.Verify()
	snapshotErr(t, "verify", verr)
	verified := verr == nil
	fail := func(what string, err error) {
		t.Helper()
		snapshotErr(t, what, err)
		if err != nil && verified {
			t.Fatalf("%s fails on a verified file: %v", what, err)
		}
	}
	f := g.File()
	n := g.NumNodes()
	limit := min(n, 2048) // accessors are O(1) each; bound the work per input
	for i := range limit {
		x := csr.NodeIndex(i)
		_, err := g.Node(x)
		fail("node", err)
		_, err = g.Payload(x)
		fail("payload", err)
		_, _, _, err = g.Out(x)
		fail("out", err)
		_, _, _, err = g.In(x)
		fail("in", err)
		_, err = g.OutRevs(x)
		fail("out revs", err)
		_, err = g.OutDegree(x)
		fail("out degree", err)
		_, err = g.InDegree(x)
		fail("in degree", err)
		if key, err := g.Key(x); err == nil {
			_, _, err = g.LookupKey(key)
			fail("lookup key", err)
		}
		if id, err := g.NodeID(x); err == nil {
			_, _, err = g.Lookup(id)
			fail("lookup", err)
		}
		targets, rels, _, err := g.Out(x)
		if err == nil && len(targets) > 0 {
			_, _, err = g.EdgeRev(x, rels[0], targets[0])
			fail("edge rev", err)
		}
	}
	for _, x := range []csr.NodeIndex{csr.NodeIndex(n), ^csr.NodeIndex(0)} {
		if _, err := g.Node(x); !errors.Is(err, snapshot.ErrOutOfRange) {
			t.Fatalf("Node(%d) of %d nodes: %v, want ErrOutOfRange", x, n, err)
		}
		if _, _, _, err := g.Out(x); !errors.Is(err, snapshot.ErrOutOfRange) {
			t.Fatalf("Out(%d) of %d nodes: %v, want ErrOutOfRange", x, n, err)
		}
	}
	rels, err := g.Relations()
	fail("relations", err)
	for _, r := range rels {
		_, err := g.Relation(r.ID)
		fail("relation", err)
		_, _, err = g.RelationByName(r.Name)
		fail("relation by name", err)
	}
	_, _, err = g.PrefixRange("file:")
	fail("prefix range", err)
	_, err = g.TrigramPostings([3]byte{'f', 'i', 'l'})
	fail("trigram postings", err)
	for j := range min(len(f.TriKeys()), 256) {
		_, err := f.Postings(uint32(j))
		fail("postings", err)
	}
	_, _, err = g.PageRank()
	fail("pagerank", err)
	for _, rt := range f.RevTimes() {
		g.RevisionTime(rt.Rev)
	}
	_, err = f.LogicalHash()
	fail("logical hash", err)
	checkSearchSections(t, g, fail)
	// A verified file of the newest format re-encodes to itself (an older
	// minor re-encodes to the newest, with other version bytes).
	if verified && f.Header().Version == snapshot.FormatNewest {
		if again := rewriteSnapshot(t, g); !bytes.Equal(again, b) {
			t.Fatalf("a verified snapshot of %d bytes re-encodes to %d different bytes", len(b), len(again))
		}
	}
}

// checkSearchSections calls the search sections' accessors and the
// engines' readers of them (SPEC.md §7.10.1): nothing may panic or fail
// untyped, nothing may fail on a verified file.
func checkSearchSections(t *testing.T, g *csr.Graph, fail func(string, error)) {
	f := g.File()
	n := min(g.NumNodes(), 2048)
	if l, ok := f.Lexicon(); ok {
		for i := range n {
			_, _, err := l.Vector(uint32(i))
			fail("lexicon vector", err)
		}
		for tm := range min(l.NumTerms(), 256) {
			_, _, err := l.Postings(uint32(tm))
			fail("lexicon postings", err)
		}
	}
	if x, ok := f.TextIndex(); ok {
		for j := range min(x.NumKV(), 256) {
			_, _, err := x.KV(uint32(j))
			fail("kv entry", err)
		}
		for tm := range min(x.NumTerms(), 256) {
			_, err := x.Term(uint32(tm))
			fail("term", err)
			_, _, err = x.Postings(uint32(tm))
			fail("text postings", err)
		}
	}
	e, err := engines.New(g)
	if err != nil {
		snapshotErr(t, "engine", err)
		return
	}
	if lex, err := e.Lexicon(); err == nil {
		for i := range min(n, 64) {
			_ = lex.Similar([]engines.Seed{{Node: uint32(i), Score: 1}})
		}
	} else {
		fail("lexicon", err)
	}
	_, err = e.History()
	fail("history", err)
	_, err = e.Search("retry decision file", engines.SearchOptions{All: true})
	fail("search", err)
}

// rewriteSnapshot feeds a verified file's content back to the writer.
func rewriteSnapshot(t *testing.T, g *csr.Graph) []byte {
	t.Helper()
	f := g.File()
	hdr := f.Header()
	st := &snapshot.MemState{Rev: hdr.Revision, Time: hdr.CommitTime, ValidAtTime: hdr.ValidAt,
		InclSuperseded: hdr.Flags&snapshot.FlagIncludesSuperseded != 0, InclExpired: hdr.Flags&snapshot.FlagIncludesExpired != 0}
	rels, _ := g.Relations()
	for _, r := range rels {
		st.Rels = append(st.Rels, snapshot.RelationRecord{ID: r.ID, Name: r.Name, DefaultWeight: r.DefaultWeight,
			Bidirectional: r.Bidirectional, Inhibitory: r.Inhibitory, Role: r.Role})
	}
	for i := range g.NumNodes() {
		x := csr.NodeIndex(i)
		n, _ := g.Node(x)
		p, _ := g.Payload(x)
		st.NodeList = append(st.NodeList, snapshot.NodeRecord{ID: n.ID, Key: n.Key, Type: n.Type, Scope: n.Scope,
			RunID: n.RunID, TaskID: n.TaskID, CreatedTS: n.CreatedTS, UpdatedTS: n.UpdatedTS,
			CreatedRev: n.CreatedRev, Rev: n.Rev, Payload: bytes.Clone(p), Missing: n.Missing,
			ValidFrom: n.ValidFrom, ValidUntil: n.ValidUntil, HasValidFrom: n.HasValidFrom, HasValidUntil: n.HasValidUntil,
			Superseded: n.Superseded, Expired: n.Expired})
		targets, rels, weights, _ := g.Out(x)
		revs, _ := g.OutRevs(x)
		for j := range targets {
			dst, _ := g.NodeID(targets[j])
			ts, _ := g.RevisionTime(revs[j])
			st.EdgeList = append(st.EdgeList, snapshot.EdgeRecord{Src: n.ID, Dst: dst, Rel: rels[j],
				Weight: weights[j], Rev: revs[j], TS: ts})
		}
	}
	opts := snapshot.WriterOptions{Logical: hdr.Logical()}
	pr, ranked, _ := g.PageRank()
	_, indexed := f.Lexicon()
	var kv []engines.KVEntry
	if x, ok := f.TextIndex(); ok {
		for j := range x.NumKV() {
			addr, p, _ := x.KV(uint32(j))
			fl := x.KVFlags[j]
			kv = append(kv, engines.KVEntry{Address: addr, Payload: bytes.Clone(p),
				Superseded: fl&snapshot.NodeFlagSuperseded != 0, Expired: fl&snapshot.NodeFlagExpired != 0})
		}
	}
	opts.Extra = func(nf *snapshot.File) ([]snapshot.ExtraSection, error) {
		var out []snapshot.ExtraSection
		if ranked {
			out = append(out, snapshot.ExtraSection{Kind: snapshot.KindPageRank, Data: snapshot.Float64Bytes(pr)})
		}
		if indexed {
			idx, err := engines.IndexSections(nf, kv)
			if err != nil {
				return nil, err
			}
			out = append(out, idx...)
		}
		return out, nil
	}
	b, _, err := snapshot.Write(st, opts)
	if err != nil {
		t.Fatalf("rewriting a verified snapshot: %v", err)
	}
	return b
}
