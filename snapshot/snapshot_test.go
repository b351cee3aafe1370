package snapshot_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/internal/testcmp"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
	"golang.org/x/sys/unix"
)

func idOf(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

var testRels = []snapshot.RelationRecord{
	{ID: 1, Name: "calls", DefaultWeight: 1, Role: roles.Usage},
	{ID: 2, Name: "imports", DefaultWeight: 0.5, Bidirectional: true, Role: roles.History},
	{ID: 3, Name: "contradicts", DefaultWeight: 0.25, Inhibitory: true},
}

// tinyState is the golden graph: four nodes, one missing endpoint, three
// relations, five edges.
func tinyState() *snapshot.MemState {
	st := &snapshot.MemState{Rev: 7, Time: 1_700_000_000_000_000_000, Rels: slices.Clone(testRels)}
	node := func(key, typ string, rev uint64, payload string) snapshot.NodeRecord {
		return snapshot.NodeRecord{
			ID: idOf(key), Key: key, Type: typ, Scope: "repo", RunID: "run-1", TaskID: "t1",
			CreatedTS: st.Time - int64(7-1)*1000, UpdatedTS: st.Time - int64(7-rev)*1000,
			CreatedRev: 1, Rev: rev, Payload: []byte(payload),
		}
	}
	st.ValidAtTime = st.Time
	decision := node("decision:use-lmdb", "decision", 7, `{"why":"mmap"}`)
	decision.ValidFrom, decision.HasValidFrom = st.Time-5000, true // valid since before the export
	st.NodeList = []snapshot.NodeRecord{
		node("file:main.go", "file", 1, `{"lines":120}`),
		node("sym:main.run", "symbol", 3, `{"kind":"func"}`),
		node("sym:util.Load", "symbol", 5, ""),
		decision,
		{ID: idOf("file:gone.go"), Key: "file:gone.go", Missing: true},
	}
	edge := func(src, dst string, rel uint32, w float32, rev uint64) snapshot.EdgeRecord {
		return snapshot.EdgeRecord{Src: idOf(src), Dst: idOf(dst), Rel: rel, Weight: w, Rev: rev, TS: st.Time - int64(7-rev)*1000}
	}
	st.EdgeList = []snapshot.EdgeRecord{
		edge("file:main.go", "sym:main.run", 1, 1, 3),
		edge("sym:main.run", "sym:util.Load", 1, 0.75, 5),
		edge("file:main.go", "file:gone.go", 2, 0.5, 5),
		edge("decision:use-lmdb", "file:main.go", 3, 0.25, 7),
		edge("sym:util.Load", "file:main.go", 2, 0.5, 5),
	}
	st.Sort()
	return st
}

// randomState builds a random valid state: n nodes (about a tenth of them
// missing), m edges over them, random relations per edge, payloads of
// every size class.
func randomState(rng *rand.Rand, n, m int) *snapshot.MemState {
	st := &snapshot.MemState{Rev: uint64(10 + n + m), Time: 1_000_000, Rels: slices.Clone(testRels)}
	revTime := func(rev uint64) int64 { return int64(rev) * 1000 }
	st.Time = revTime(st.Rev)
	seen := map[uint64]bool{}
	for len(st.NodeList) < n {
		key := fmt.Sprintf("%s:%s/%d", []string{"file", "sym", "Dec", "x"}[rng.IntN(4)], strings.Repeat("ab", rng.IntN(4)), rng.IntN(10*n+10))
		if rng.IntN(20) == 0 {
			key = key[:min(len(key), 2)]
		}
		id := idOf(key)
		if seen[id] {
			continue
		}
		seen[id] = true
		if rng.IntN(10) == 0 {
			st.NodeList = append(st.NodeList, snapshot.NodeRecord{ID: id, Key: key, Missing: true})
			continue
		}
		created := uint64(1 + rng.IntN(int(st.Rev)))
		rev := created + uint64(rng.IntN(int(st.Rev-created)+1))
		var payload []byte
		switch rng.IntN(4) {
		case 1:
			payload = []byte(fmt.Sprintf(`{"n":%d}`, rng.IntN(100)))
		case 2:
			payload = []byte(`{"text":"` + strings.Repeat("lorem ipsum ", 20+rng.IntN(200)) + `"}`)
		case 3:
			b := make([]byte, 300)
			for i := range b {
				b[i] = 'a' + byte(rng.IntN(26))
			}
			payload = []byte(`"` + string(b) + `"`)
		}
		st.NodeList = append(st.NodeList, snapshot.NodeRecord{
			ID: id, Key: key, Type: strings.SplitN(key, ":", 2)[0], Scope: []string{"", "repo", "team"}[rng.IntN(3)],
			RunID: fmt.Sprintf("run-%d", rng.IntN(3)), TaskID: []string{"", "t"}[rng.IntN(2)],
			CreatedTS: revTime(created), UpdatedTS: revTime(rev), CreatedRev: created, Rev: rev, Payload: payload,
		})
	}
	type triple struct {
		s, d uint64
		r    uint32
	}
	have := map[triple]bool{}
	m = min(m, n*n*len(testRels)/2)
	for len(st.EdgeList) < m && n > 0 {
		s := st.NodeList[rng.IntN(n)].ID
		d := st.NodeList[rng.IntN(n)].ID
		r := uint32(1 + rng.IntN(len(testRels)))
		if have[triple{s, d, r}] {
			continue
		}
		have[triple{s, d, r}] = true
		rev := uint64(1 + rng.IntN(int(st.Rev)))
		st.EdgeList = append(st.EdgeList, snapshot.EdgeRecord{Src: s, Dst: d, Rel: r, Weight: float32(1+rng.IntN(8)) / 8, Rev: rev, TS: revTime(rev)})
	}
	st.Sort()
	return st
}

// modelEdge is an edge as both the model and the reader describe it.
type modelEdge struct {
	Src, Dst uint64
	Rel      uint32
	Weight   float32
	Rev      uint64
	TS       int64
}

func sortEdges(es []modelEdge) {
	slices.SortFunc(es, func(a, b modelEdge) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Rel, b.Rel), cmp.Compare(a.Dst, b.Dst))
	})
}

// checkAgainstModel compares every node, out-list and in-list of g with st.
func checkAgainstModel(t *testing.T, st *snapshot.MemState, g *csr.Graph, logical bool) {
	t.Helper()
	if g.NumNodes() != len(st.NodeList) || g.NumEdges() != len(st.EdgeList) {
		t.Fatalf("counts: %d nodes %d edges, want %d %d", g.NumNodes(), g.NumEdges(), len(st.NodeList), len(st.EdgeList))
	}
	outs := map[uint64][]modelEdge{}
	ins := map[uint64][]modelEdge{}
	for _, e := range st.EdgeList {
		me := modelEdge{e.Src, e.Dst, e.Rel, e.Weight, e.Rev, e.TS}
		if logical {
			me.Rev, me.TS = 0, 0
		}
		outs[e.Src] = append(outs[e.Src], me)
		ins[e.Dst] = append(ins[e.Dst], me)
	}
	for _, n := range st.NodeList {
		i, ok, err := g.Lookup(n.ID)
		if err != nil || !ok {
			t.Fatalf("Lookup(%d) = %v, %v", n.ID, ok, err)
		}
		if j, ok, err := g.LookupKey(n.Key); err != nil || !ok || j != i {
			t.Fatalf("LookupKey(%q) = %d, %v, %v; want %d", n.Key, j, ok, err, i)
		}
		got, err := g.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		want := csr.Node{Index: i, ID: n.ID, Key: n.Key, Missing: n.Missing, Superseded: n.Superseded}
		if !n.Missing {
			want.Type, want.Scope = n.Type, n.Scope
			want.ValidFrom, want.ValidUntil, want.HasValidFrom, want.HasValidUntil = n.ValidFrom, n.ValidUntil, n.HasValidFrom, n.HasValidUntil
			want.Expired = n.Expired
			if !logical {
				want.RunID, want.TaskID = n.RunID, n.TaskID
				want.CreatedTS, want.UpdatedTS, want.CreatedRev, want.Rev = n.CreatedTS, n.UpdatedTS, n.CreatedRev, n.Rev
			}
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("node %q (-want +got):\n%s", n.Key, diff)
		}
		payload, err := g.Payload(i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(payload, n.Payload) {
			t.Fatalf("payload of %q = %q, want %q", n.Key, payload, n.Payload)
		}
		var gotOut, gotIn []modelEdge
		tg, rels, ws, err := g.Out(i)
		if err != nil {
			t.Fatal(err)
		}
		revs, _ := g.OutRevs(i)
		for k := range tg {
			dst, _ := g.NodeID(tg[k])
			ts, _ := g.RevisionTime(revs[k])
			gotOut = append(gotOut, modelEdge{n.ID, dst, rels[k], ws[k], revs[k], ts})
		}
		srcs, rels, ws, err := g.In(i)
		if err != nil {
			t.Fatal(err)
		}
		for k := range srcs {
			src, _ := g.NodeID(srcs[k])
			rev, ok, err := g.EdgeRev(srcs[k], rels[k], i)
			if err != nil || !ok {
				t.Fatalf("EdgeRev of in-edge: %v %v", ok, err)
			}
			ts, _ := g.RevisionTime(rev)
			gotIn = append(gotIn, modelEdge{src, n.ID, rels[k], ws[k], rev, ts})
		}
		sortEdges(gotIn)
		wantIn := slices.Clone(ins[n.ID])
		sortEdges(wantIn)
		if diff := gocmp.Diff(outs[n.ID], gotOut, testcmp.EquateEmpty()); diff != "" {
			t.Fatalf("out-edges of %q (-want +got):\n%s", n.Key, diff)
		}
		if diff := gocmp.Diff(wantIn, gotIn, testcmp.EquateEmpty()); diff != "" {
			t.Fatalf("in-edges of %q (-want +got):\n%s", n.Key, diff)
		}
	}
	rels, err := g.Relations()
	if err != nil {
		t.Fatal(err)
	}
	var wantRels []csr.Relation
	for _, r := range st.Rels {
		wantRels = append(wantRels, csr.Relation(r))
	}
	if diff := gocmp.Diff(wantRels, rels); diff != "" {
		t.Fatalf("relations (-want +got):\n%s", diff)
	}
}

func mustWrite(t testing.TB, st snapshot.State, opts snapshot.WriterOptions) []byte {
	t.Helper()
	b, _, err := snapshot.Write(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustGraph(t testing.TB, b []byte) *csr.Graph {
	t.Helper()
	g, err := csr.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRoundTripRandomStates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 40; iter++ {
		n, m := rng.IntN(60), rng.IntN(200)
		if n == 0 {
			m = 0
		}
		st := randomState(rng, n, m)
		for _, logical := range []bool{false, true} {
			b := mustWrite(t, st, snapshot.WriterOptions{Logical: logical})
			g := mustGraph(t, b)
			checkAgainstModel(t, st, g, logical)
			if again := mustWrite(t, st, snapshot.WriterOptions{Logical: logical}); !bytes.Equal(b, again) {
				t.Fatal("two exports of the same state differ")
			}
		}
	}
}

func TestWriteFileEqualsWrite(t *testing.T) {
	st := randomState(rand.New(rand.NewPCG(3, 4)), 300, 1500)
	want := mustWrite(t, st, snapshot.WriterOptions{})
	path := filepath.Join(t.TempDir(), "g.snap")
	stats, err := snapshot.WriteFile(path, st, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("WriteFile wrote %d bytes differing from Write's %d", len(got), len(want))
	}
	if stats.Bytes != int64(len(want)) || stats.Nodes != 300 || stats.Edges != 1500 {
		t.Fatalf("stats %+v", stats)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("temporary files left behind: %v", ents)
	}
	f, err := snapshot.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := csr.New(f)
	if err := g.Verify(); err != nil {
		t.Fatal(err)
	}
	checkAgainstModel(t, st, g, false)
}

func TestWriteFileFailureLeavesNoFile(t *testing.T) {
	st := randomState(rand.New(rand.NewPCG(5, 6)), 20, 40)
	st.EdgeList[0], st.EdgeList[1] = st.EdgeList[1], st.EdgeList[0] // break the order
	dir := t.TempDir()
	_, err := snapshot.WriteFile(filepath.Join(dir, "g.snap"), st, snapshot.WriterOptions{})
	if !errors.Is(err, snapshot.ErrInvalidState) {
		t.Fatalf("err = %v, want ErrInvalidState", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files left behind: %v", ents)
	}
}

// A killed exporter's temporary file (unlocked, old) is removed by the next
// export to the same path; one a live writer holds locked, or a fresh one,
// stays.
func TestWriteFileRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.snap")
	old := time.Now().Add(-time.Hour)
	mk := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("half a snapshot"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk(".g.snap.tmp-killed", old)
	mk(".g.snap.tmp-fresh", time.Now())
	mk(".other.snap.tmp-killed", old)
	held := mk(".g.snap.tmp-live", old)
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	if _, err := snapshot.WriteFile(path, tinyState(), snapshot.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want := []string{".g.snap.tmp-fresh", ".g.snap.tmp-live", ".other.snap.tmp-killed", "g.snap"}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("directory after export (-want +got):\n%s", diff)
	}
}

func TestInvalidStates(t *testing.T) {
	cases := map[string]func(st *snapshot.MemState){
		"unsorted nodes":   func(st *snapshot.MemState) { st.NodeList[0], st.NodeList[1] = st.NodeList[1], st.NodeList[0] },
		"duplicate node":   func(st *snapshot.MemState) { st.NodeList[1] = st.NodeList[0] },
		"unknown endpoint": func(st *snapshot.MemState) { st.NodeList = slices.Delete(st.NodeList, 4, 5) },
		"unknown relation": func(st *snapshot.MemState) { st.EdgeList[0].Rel = 9 },
		"duplicate edge":   func(st *snapshot.MemState) { st.EdgeList[1] = st.EdgeList[0] },
		"two times for one revision": func(st *snapshot.MemState) {
			st.EdgeList[0].TS++
		},
		"relation id zero": func(st *snapshot.MemState) { st.Rels[0].ID = 0 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			st := tinyState()
			mutate(st)
			if _, _, err := snapshot.Write(st, snapshot.WriterOptions{}); !errors.Is(err, snapshot.ErrInvalidState) {
				t.Fatalf("err = %v, want ErrInvalidState", err)
			}
		})
	}
}

func TestLogicalHashIgnoresHistory(t *testing.T) {
	a := tinyState()
	b := tinyState()
	for i := range b.NodeList {
		if !b.NodeList[i].Missing {
			b.NodeList[i].Rev += 10
			b.NodeList[i].CreatedRev += 10
			b.NodeList[i].CreatedTS += 5
			b.NodeList[i].UpdatedTS += 5
			b.NodeList[i].RunID = "other"
		}
	}
	for i := range b.EdgeList {
		b.EdgeList[i].Rev += 10
		b.EdgeList[i].TS += 5
	}
	b.Rev += 10
	ga, gb := mustGraph(t, mustWrite(t, a, snapshot.WriterOptions{})), mustGraph(t, mustWrite(t, b, snapshot.WriterOptions{}))
	ha, err := ga.File().LogicalHash()
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := gb.File().LogicalHash()
	if ha != hb {
		t.Fatal("logical hashes differ for states differing only in history")
	}
	hl, _ := mustGraph(t, mustWrite(t, a, snapshot.WriterOptions{Logical: true})).File().LogicalHash()
	if hl != ha {
		t.Fatal("the logical export hashes differently")
	}
	if !bytes.Equal(mustWrite(t, a, snapshot.WriterOptions{Logical: true}), mustWrite(t, b, snapshot.WriterOptions{Logical: true})) {
		t.Fatal("logical exports differ for states differing only in history")
	}
	c := tinyState()
	c.EdgeList[0].Weight = 0.125
	hc, _ := mustGraph(t, mustWrite(t, c, snapshot.WriterOptions{})).File().LogicalHash()
	if hc == ha {
		t.Fatal("a weight change does not change the logical hash")
	}
}

func TestExtraSectionPageRank(t *testing.T) {
	st := tinyState()
	var sawNodes int
	opts := snapshot.WriterOptions{Extra: func(f *snapshot.File) ([]snapshot.ExtraSection, error) {
		if err := f.Verify(); err != nil {
			return nil, err
		}
		sawNodes = f.NumNodes()
		ranks := make([]float64, f.NumNodes())
		for i := range ranks {
			ranks[i] = 1 / float64(len(ranks))
		}
		return []snapshot.ExtraSection{{Kind: snapshot.KindPageRank, Data: snapshot.Float64Bytes(ranks)}}, nil
	}}
	b := mustWrite(t, st, opts)
	g := mustGraph(t, b)
	pr, ok, err := g.PageRank()
	if err != nil || !ok || len(pr) != sawNodes || pr[0] != 0.2 {
		t.Fatalf("PageRank() = %v, %v, %v", pr, ok, err)
	}
	plain := mustGraph(t, mustWrite(t, st, snapshot.WriterOptions{}))
	if _, ok, _ := plain.PageRank(); ok {
		t.Fatal("PageRank present without the hook")
	}
	h1, _ := g.File().LogicalHash()
	h2, _ := plain.File().LogicalHash()
	if h1 != h2 {
		t.Fatal("PageRank changes the logical hash")
	}
	path := filepath.Join(t.TempDir(), "pr.snap")
	if _, err := snapshot.WriteFile(path, st, opts); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, b) {
		t.Fatal("WriteFile with an extra section differs from Write")
	}
}

func TestSeedIndexes(t *testing.T) {
	st := tinyState()
	g := mustGraph(t, mustWrite(t, st, snapshot.WriterOptions{}))
	keysOf := func(idx []uint32) []string {
		var out []string
		for _, i := range idx {
			k, err := g.Key(i)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, k)
		}
		return out
	}
	order, _ := g.KeyOrder()
	if diff := gocmp.Diff([]string{"decision:use-lmdb", "file:gone.go", "file:main.go", "sym:main.run", "sym:util.Load"}, keysOf(order)); diff != "" {
		t.Fatal(diff)
	}
	for prefix, want := range map[string][]string{
		"sym:":  {"sym:main.run", "sym:util.Load"},
		"file:": {"file:gone.go", "file:main.go"},
		"":      keysOf(order),
		"zzz":   nil,
		"sym:u": {"sym:util.Load"},
	} {
		lo, hi, err := g.PrefixRange(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, keysOf(order[lo:hi]), testcmp.EquateEmpty()); diff != "" {
			t.Errorf("prefix %q: %s", prefix, diff)
		}
	}
	for tri, want := range map[string][]string{
		"mai": {"file:main.go", "sym:main.run"},
		"LOA": {"sym:util.Load"}, // lower-cased on both sides
		"qqq": nil,
	} {
		ps, err := g.TrigramPostings([3]byte{tri[0], tri[1], tri[2]})
		if err != nil {
			t.Fatal(err)
		}
		got := keysOf(ps)
		slices.Sort(got)
		if diff := gocmp.Diff(want, got, testcmp.EquateEmpty()); diff != "" {
			t.Errorf("trigram %q: %s", tri, diff)
		}
	}
	if _, ok, _ := g.LookupKey("sym:nope"); ok {
		t.Fatal("LookupKey found an absent key")
	}
}
